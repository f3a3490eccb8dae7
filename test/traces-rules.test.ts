// Evaluation rules end to end (SPEC section 14): spans exported by the real OTLP exporter are matched,
// sampled, queued and judged through the ordinary execution path (the fake judge model), every
// matched span counted once; results are execution logs tagged with trace_id/span_id, show on the
// trace, and are written back as OTLP child spans to a loopback receiver. Test panel, backfill,
// trace scope, org isolation. Runs on PostgreSQL too (TRIBUNAL_TEST_STORE=postgres).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ROOT_CONTEXT, SpanKind, trace } from '@opentelemetry/api';
import { evaluatorBody, startScoringRig, type ScoringRig } from './helpers/execute.ts';
import { exportSpans, ExportResultCode, recordSpans } from './helpers/otel-export.ts';
import { startOtlpSink, type OtlpSink } from './helpers/otlp-sink.ts';
import { until } from './helpers/wait.ts';

let rig: ScoringRig;
let sink: OtlpSink;
let judgeId: string;
const METRICS_TOKEN = 'metrics-token-for-tests-0001';

const chat = (question: string, answer: string) => ({
  'gen_ai.operation.name': 'chat',
  'gen_ai.request.model': 'gpt-4o-mini',
  'gen_ai.input.messages': JSON.stringify([
    { role: 'system', parts: [{ type: 'text', content: 'Be brief.' }] },
    { role: 'user', parts: [{ type: 'text', content: question }] },
  ]),
  'gen_ai.output.messages': JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: answer }], finish_reason: 'stop' }]),
});

async function send(service: string, build: Parameters<typeof recordSpans>[1]) {
  const spans = await recordSpans(service, build);
  const result = await exportSpans({ url: rig.server.url, key: rig.key, encoding: 'protobuf' }, spans);
  assert.equal(result.code, ExportResultCode.SUCCESS, String(result.error));
  return spans;
}

const status = async (id: string) => (await rig.get(`/v1/evaluation-rules/${id}/`)).body.status;

before(async () => {
  sink = await startOtlpSink();
  // A GenAI span without content waits this long for its log records before it is counted unreadable.
  rig = await startScoringRig({ TRIBUNAL_EVAL_EXPORT_OTLP_ENDPOINT: sink.url, TRIBUNAL_METRICS_TOKEN: METRICS_TOKEN, TRIBUNAL_TRACE_CONTENT_WAIT: '1s' });
  const ev = await rig.createEvaluator(evaluatorBody());
  judgeId = (await rig.createJudge({ name: 'Online judge', intent: 'grade answers', evaluator_ids: [ev.id] })).id;
});
after(async () => {
  await rig.close();
  await sink.close();
});

describe('evaluation rules', () => {
  it('judges matching spans once each, counts every matched span, links and writes back the result', async () => {
    const created = await rig.post('/v1/evaluation-rules/', {
      name: 'chat quality',
      judge_id: judgeId,
      filter: [
        { field: 'gen_ai.operation.name', op: 'eq', value: 'chat' },
        { field: 'service.name', op: 'eq', value: 'support-bot' },
      ],
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const rule = created.body;
    assert.deepEqual([rule.scope, rule.sampling_rate, rule.active, rule.status.matched], ['span', 1, true, 0]);

    const spans = await send('support-bot', (tracer) => {
      const root = tracer.startSpan('POST /ask', { kind: SpanKind.SERVER });
      const ctx = trace.setSpan(ROOT_CONTEXT, root);
      tracer.startSpan('chat gpt-4o-mini', { kind: SpanKind.CLIENT, attributes: chat('What is 2+2?', 'Four.') }, ctx).end();
      // Matches the filter but carries no content (nor do log records bring any within
      // TRIBUNAL_TRACE_CONTENT_WAIT): counted as unreadable, never dropped silently.
      tracer.startSpan('chat gpt-4o-mini', { kind: SpanKind.CLIENT, attributes: { 'gen_ai.operation.name': 'chat' } }, ctx).end();
      root.end();
    });
    // Another service's chat span does not match.
    await send('other-service', (tracer) => tracer.startSpan('chat', { attributes: chat('q', 'a') }).end());
    const judged = spans.find((s) => s.attributes['gen_ai.input.messages'])!;
    const traceId = judged.spanContext().traceId;
    const spanId = judged.spanContext().spanId;

    const s = await until('the rule to finish', async () => {
      const st = await status(rule.id);
      return st.done === 1 && st.queued === 0 && st.running === 0 && st;
    });
    assert.equal(s.matched, 2);
    assert.equal(s.sampled, 2);
    assert.deepEqual(s.skipped, { unreadable_no_known_format: 1 });
    assert.equal(s.failed, 0);
    assert.equal(s.matched, s.done + s.failed + Object.values(s.skipped as Record<string, number>).reduce((a, b) => a + b, 0));

    // The log is an ordinary execution log, found by its trace and span (log fields and filters).
    const logs = await rig.get(`/v1/execution-logs/?trace_id=${traceId}&span_id=${spanId}`);
    assert.equal(logs.body.results.length, 1);
    const log = logs.body.results[0];
    assert.equal(log.trace_id, traceId);
    assert.equal(log.span_id, spanId);
    assert.deepEqual(log.tags, [`evaluation_rule:${rule.id}`]);
    assert.equal((await rig.get(`/v1/execution-logs/?trace_id=${traceId.toUpperCase()}`)).body.results.length, 1, 'an id in capitals finds it too');
    assert.equal((await rig.get(`/v1/execution-logs/?trace_id=${'0'.repeat(32)}`)).body.results.length, 0);
    assert.equal(log.request, 'What is 2+2?');
    assert.equal(log.response, 'Four.');
    assert.equal(log.judge_id, judgeId);
    // Given at run time, the ids are checked before any model call: a clear 422 that says what to fix.
    const lone = await rig.post(`/v1/judges/${judgeId}/execute/`, { response: 'x', span_id: spanId });
    assert.equal(lone.status, 400, JSON.stringify(lone.body));
    assert.match(JSON.stringify(lone.body), /span_id was given without trace_id/);
    const capitals = await rig.post(`/v1/judges/${judgeId}/execute/`, { response: 'x', trace_id: 'XYZ' });
    assert.equal(capitals.status, 400, JSON.stringify(capitals.body));
    assert.match(JSON.stringify(capitals.body), /trace_id is 32 lowercase hex digits/);

    // The trace page shows the evaluation on the judged span, and what was extracted.
    const t = await rig.get(`/v1/traces/${traceId}/`);
    const span = t.body.spans.find((x: any) => x.span_id === spanId);
    assert.deepEqual(
      span.evaluations.map((e: any) => e.execution_log_id),
      [log.id],
    );
    assert.equal(span.extracted.response, 'Four.');
    assert.equal(span.extracted.system_prompt, 'Be brief.');
    assert.equal(
      (await rig.get(`/v1/traces/?has_evaluation=true`)).body.results.some((x: any) => x.trace_id === traceId),
      true,
    );

    // Written back: a child of the judged span, in the same trace, with the gen_ai.evaluation.* attributes.
    const back = await until('the write-back span', async () => sink.spans.find((x) => x.parent_span_id === spanId));
    assert.equal(back.trace_id, traceId);
    assert.equal(back.attributes['gen_ai.evaluation.name'], 'chat quality');
    assert.equal(back.attributes['gen_ai.evaluation.score.value'], log.score);
    assert.ok(['pass', 'fail'].includes(back.attributes['gen_ai.evaluation.score.label'] as string));
    assert.equal(typeof back.attributes['gen_ai.evaluation.explanation'], 'string');
    assert.equal(back.attributes['tribunal.execution_log_id'], log.id);

    // The same counters in /metrics.
    const metrics = await (await fetch(`${rig.server.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
    assert.match(metrics, new RegExp(`tribunal_evaluation_rule_units\\{rule_id="${rule.id}",state="done",reason=""\\} 1`));
    assert.match(metrics, new RegExp(`tribunal_evaluation_rule_units\\{rule_id="${rule.id}",state="skipped",reason="unreadable_no_known_format"\\} 1`));
    assert.match(metrics, /tribunal_otlp_spans_total\{outcome="stored"\} [1-9]/);
  });

  it('samples deterministically on the trace id and counts what it does not sample', async () => {
    const rule = (
      await rig.post('/v1/evaluation-rules/', {
        name: 'sampled',
        judge_id: judgeId,
        sampling_rate: 0.5,
        active: true,
        filter: [{ field: 'service.name', op: 'eq', value: 'sampled-svc' }],
      })
    ).body;
    const none = (
      await rig.post('/v1/evaluation-rules/', { name: 'never', judge_id: judgeId, sampling_rate: 0, filter: [{ field: 'service.name', op: 'eq', value: 'sampled-svc' }] })
    ).body;
    await send('sampled-svc', (tracer) => {
      for (let i = 0; i < 20; i++) tracer.startSpan(`chat ${i}`, { attributes: chat(`q${i}`, `a${i}`) }).end();
    });
    const s = await until('every span of the sampled rule to be counted', async () => {
      const st = await status(rule.id);
      // Settled: every sampled unit finished (counters move in more than one write).
      return st.matched === 20 && st.queued === 0 && st.running === 0 && st.done + st.failed === st.sampled && st;
    });
    const notSampled = s.skipped.not_sampled ?? 0;
    assert.equal(s.sampled + notSampled, 20);
    assert.equal(s.done + s.failed, s.sampled);
    const n = await status(none.id);
    assert.deepEqual([n.matched, n.sampled, n.skipped.not_sampled], [20, 0, 20]);
  });

  it('judges the spans of a trace as one conversation once it is quiet (scope trace)', async () => {
    const rule = (
      await rig.post('/v1/evaluation-rules/', {
        name: 'whole trace',
        judge_id: judgeId,
        scope: 'trace',
        delay_seconds: 1,
        filter: [{ field: 'service.name', op: 'eq', value: 'agent' }],
      })
    ).body;
    const spans = await send('agent', (tracer) => {
      const root = tracer.startSpan('agent run');
      const ctx = trace.setSpan(ROOT_CONTEXT, root);
      tracer.startSpan('chat 1', { attributes: chat('Book a table for two.', 'For which evening?') }, ctx).end();
      const second = {
        ...chat('', ''),
        'gen_ai.input.messages': JSON.stringify([
          { role: 'user', parts: [{ type: 'text', content: 'Book a table for two.' }] },
          { role: 'assistant', parts: [{ type: 'text', content: 'For which evening?' }] },
          { role: 'user', parts: [{ type: 'text', content: 'Friday.' }] },
        ]),
        'gen_ai.output.messages': JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: 'Booked for Friday.' }] }]),
      };
      tracer.startSpan('chat 2', { attributes: second }, ctx).end();
      root.end();
    });
    const s = await until('the trace unit', async () => {
      const st = await status(rule.id);
      return st.done === 1 && st.queued === 0 && st.running === 0 && st;
    });
    assert.equal(s.matched, 3);
    assert.equal(s.skipped.merged, 2, 'the other spans joined the waiting trace unit');
    const traceId = spans[0].spanContext().traceId;
    const logs = await rig.get(`/v1/execution-logs/?trace_id=${traceId}&tags=evaluation_rule:${rule.id}`);
    assert.equal(logs.body.results.length, 1);
    assert.deepEqual(
      logs.body.results[0].turns.map((t: any) => [t.role, t.content]),
      [
        ['user', 'Book a table for two.'],
        ['assistant', 'For which evening?'],
        ['user', 'Friday.'],
        ['assistant', 'Booked for Friday.'],
      ],
    );
  });

  it('shows on stored spans what would be judged (test) and judges a period as a batch run (backfill)', async () => {
    const from = new Date(Date.now() - 60_000).toISOString();
    await send('panel-svc', (tracer) => tracer.startSpan('chat', { attributes: chat('Capital of France?', 'Paris.') }).end());
    // Created after the spans arrived: online evaluation never saw them; test and backfill read them from the store.
    const rule = (await rig.post('/v1/evaluation-rules/', { name: 'panel', judge_id: judgeId, filter: [{ field: 'service.name', op: 'eq', value: 'panel-svc' }] })).body;
    const test = await rig.post(`/v1/evaluation-rules/${rule.id}/test/`, {});
    assert.equal(test.status, 200, JSON.stringify(test.body));
    assert.equal(test.body.matched_spans, 1);
    assert.deepEqual([test.body.results[0].would_judge.request, test.body.results[0].would_judge.response, test.body.results[0].sampled], ['Capital of France?', 'Paris.', true]);
    assert.equal((await status(rule.id)).matched, 0, 'a test counts nothing');

    const bf = await rig.post(`/v1/evaluation-rules/${rule.id}/backfill/`, { date_from: from, date_to: new Date(Date.now() + 60_000).toISOString() });
    assert.equal(bf.status, 202, JSON.stringify(bf.body));
    assert.equal(bf.body.items, 1);
    const batch = await until('the backfill batch', async () => {
      const b = await rig.get(`/v1/judges/batch-executions/${bf.body.batch_execution_id}/`);
      return b.body.status === 'completed' && b.body;
    });
    assert.equal(batch.done ?? batch.progress?.done ?? 1, 1);
  });

  it('refuses bad rules with what to fix, and keeps rules within their organization', async () => {
    const both = await rig.post('/v1/evaluation-rules/', { name: 'x', judge_id: judgeId, evaluator_id: 'evl_x' });
    assert.equal(both.status, 400);
    const missing = await rig.post('/v1/evaluation-rules/', { name: 'x', judge_id: 'jdg_00000000000000000000000000000000' });
    assert.equal(missing.status, 404);
    const badOp = await rig.post('/v1/evaluation-rules/', { name: 'x', judge_id: judgeId, filter: [{ field: 'a', op: 'like', value: 1 }] });
    assert.equal(badOp.status, 400);
    const rate = await rig.post('/v1/evaluation-rules/', { name: 'x', judge_id: judgeId, sampling_rate: 2 });
    assert.equal(rate.status, 400);

    const mine = (await rig.post('/v1/evaluation-rules/', { name: 'mine', judge_id: judgeId })).body;
    const other = (await rig.server.demoUser()).api_key;
    assert.equal((await rig.server.request('GET', `/v1/evaluation-rules/${mine.id}/`, { key: other })).status, 404);
    assert.equal((await rig.server.request('GET', '/v1/evaluation-rules/', { key: other })).body.results.length, 0);
    const patched = await rig.server.request('PATCH', `/v1/evaluation-rules/${mine.id}/`, { key: rig.key, body: { active: false, sampling_rate: 0.25 } });
    assert.deepEqual([patched.body.active, patched.body.sampling_rate], [false, 0.25]);
    assert.equal((await rig.server.request('DELETE', `/v1/evaluation-rules/${mine.id}/`, { key: rig.key })).status, 200);
    assert.equal((await rig.get(`/v1/evaluation-rules/${mine.id}/`)).status, 404);
  });
});
