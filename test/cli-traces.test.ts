// tribunal traces and tribunal rules against a real server: spans exported by the real OTLP exporter,
// a rule created, tested, judged online (status), and backfilled, all from the command line.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startCliRig, type CliRig } from './helpers/cli.ts';
import { evaluatorBody } from './helpers/execute.ts';
import { exportSpans, ExportResultCode, recordSpans } from './helpers/otel-export.ts';

let rig: CliRig;
let judgeId: string;
let traceId: string;

before(async () => {
  rig = await startCliRig();
  const ev = await rig.server.request('POST', '/v1/evaluators/', { key: rig.key, body: evaluatorBody() });
  judgeId = (await rig.server.request('POST', '/v1/judges/', { key: rig.key, body: { name: 'CLI judge', intent: 'grade', evaluator_ids: [ev.body.id] } })).body.id;
  const spans = await recordSpans('cli-app', (tracer) =>
    tracer
      .startSpan('chat', {
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.input.messages': JSON.stringify([{ role: 'user', content: 'Hi?' }]),
          'gen_ai.output.messages': JSON.stringify([{ role: 'assistant', content: 'Hello.' }]),
        },
      })
      .end(),
  );
  traceId = spans[0].spanContext().traceId;
  assert.equal((await exportSpans({ url: rig.server.url, key: rig.key, encoding: 'json' }, spans)).code, ExportResultCode.SUCCESS);
});
after(() => rig.close());

describe('tribunal traces / rules', () => {
  it('lists and shows traces', async () => {
    const list = await rig.cli(['traces', 'list', '--service', 'cli-app']);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, new RegExp(traceId));
    const get = await rig.cli(['traces', 'get', traceId]);
    assert.equal(get.code, 0, get.stderr);
    assert.match(get.stdout, /chat \(internal, unset\) \[gen_ai\] "Hello\."/);
  });

  it('creates, tests, watches and backfills a rule', async () => {
    const created = await rig.cli(['rules', 'create', 'cli rule', '--judge', judgeId, '--filter', 'service.name:eq:cli-app', '--sampling-rate', '1', '--json']);
    assert.equal(created.code, 0, created.stderr);
    const rule = JSON.parse(created.stdout);
    assert.deepEqual(rule.filter, [{ field: 'service.name', op: 'eq', value: 'cli-app' }]);
    const test = await rig.cli(['rules', 'test', rule.id]);
    assert.equal(test.code, 0, test.stderr);
    assert.match(test.stdout, /1 matching span\(s\) stored/);
    assert.match(test.stdout, /"response":"Hello\."/);
    const status = await rig.cli(['rules', 'status', rule.id]);
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /matched 0, sampled 0/);
    const bf = await rig.cli(['rules', 'backfill', rule.id, '--since', new Date(Date.now() - 3_600_000).toISOString()]);
    assert.equal(bf.code, 0, bf.stderr);
    assert.match(bf.stdout, /Batch run bat_[0-9a-f]+: 1 item\(s\) of 1 matching span\(s\)/);
    const bad = await rig.cli(['rules', 'create', 'x', '--judge', judgeId, '--filter', 'nocolon']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /field:op:value/);
  });

  it("lists the logs of a trace and shows a log's trace (logs list --trace/--span, logs get)", async () => {
    const spanId = '0123456789abcdef';
    const run = await rig.server.request('POST', `/v1/judges/${judgeId}/execute/`, {
      key: rig.key,
      body: { request: 'Hi?', response: 'Hello.', trace_id: traceId, span_id: spanId },
    });
    assert.equal(run.status, 200, JSON.stringify(run.body));
    await rig.server.request('POST', `/v1/judges/${judgeId}/execute/`, { key: rig.key, body: { request: 'Hi?', response: 'Not in the trace.' } });
    const listed = await rig.cli(['logs', 'list', '--trace', traceId, '--span', spanId, '--json']);
    assert.equal(listed.code, 0, listed.stderr);
    assert.deepEqual(
      JSON.parse(listed.stdout).results.map((l: { id: string }) => l.id),
      [run.body.execution_log_id],
    );
    const none = await rig.cli(['logs', 'list', '--trace', 'f'.repeat(32), '--json']);
    assert.deepEqual(JSON.parse(none.stdout).results, []);
    const got = await rig.cli(['logs', 'get', run.body.execution_log_id]);
    assert.equal(got.code, 0, got.stderr);
    assert.match(got.stdout, new RegExp(`trace:\\s+${traceId} span ${spanId}`));
  });
});
