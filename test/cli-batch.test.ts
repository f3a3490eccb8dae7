// `tribunal batch ...` and `tribunal eval --server` end to end: the real command in a child process
// against a real server (its batch runner included) judging with the fake model.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { startCliRig, type CliResult, type CliRig } from './helpers/cli.ts';
import { toolAnswer } from './helpers/fake-anthropic.ts';
import { tempDir } from './helpers/server.ts';

let rig: CliRig;
let judgeId: string;
let datasetId: string;
const ITEMS = 12;

const ok = (r: CliResult) => {
  assert.equal(r.code, 0, `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r;
};
const scoreAll = (score: number) => rig.fake.respondWith(() => toolAnswer({ justification: `scored ${score}`, score }));

before(async () => {
  // Two row slots: the cancel test needs rows still waiting when its `batch cancel` (a CLI process,
  // seconds to start on a loaded machine) lands; with the default 64 every row starts at once.
  rig = await startCliRig({ TRIBUNAL_RATE_LIMIT: '100000', TRIBUNAL_BATCH_CONCURRENCY: '2' });
  const judge = await rig.server.request('POST', '/v1/judges/', {
    key: rig.key,
    body: { name: 'batch judge', intent: 'Support answers.', evaluator_ids: ['Answer Relevance', 'Clarity'] },
  });
  assert.equal(judge.status, 201, JSON.stringify(judge.body));
  judgeId = judge.body.id;
  const ds = await rig.server.request('POST', '/v1/datasets/', { key: rig.key, body: { name: 'batch set' } });
  datasetId = ds.body.id;
  const items = Array.from({ length: ITEMS }, (_, i) => ({ request: `question ${i}`, response: `answer ${i}` }));
  assert.equal((await rig.server.request('POST', `/v1/datasets/${datasetId}/items/`, { key: rig.key, body: { items } })).status, 201);
});
after(() => rig?.close());

let runA: string;
let runB: string;

test('batch run --wait: plain progress lines without a terminal, the per-evaluator summary, the gate', async () => {
  scoreAll(0.8);
  const r = ok(
    await rig.cli(['batch', 'run', '--judge', 'batch judge', '--dataset', 'batch set', '--wait', '--fail-under', '0.5', '--poll-interval', '0.1', '--tags', 'nightly,v1']),
  );
  assert.match(r.stderr, /^progress: \d+\/12 rows/m, r.stderr);
  assert.doesNotMatch(r.stderr, /\x1b\[/, 'no terminal codes in a log');
  assert.match(r.stdout, /Batch (\S+): completed\. 12 of 12 row\(s\) scored/);
  assert.match(r.stdout, /Answer Relevance\s+12\s+0\.80\s+0\.80\s+0\.80/);
  assert.match(r.stdout, /Clarity\s+12\s+0\.80/);
  assert.match(r.stdout, /Gate passed/);
  runA = /Batch (\S+): completed/.exec(r.stdout)![1];
  // Every row is an ordinary execution log with the batch's id and the tags.
  const logs = await rig.server.request('GET', `/v1/execution-logs/?batch_execution_id=${runA}&limit=50`, { key: rig.key });
  assert.equal(logs.status, 200, JSON.stringify(logs.body));
  assert.equal(logs.body.results.length, ITEMS);
  assert.ok(logs.body.results.every((l: { tags: string[] }) => l.tags.includes('nightly') && l.tags.includes('v1')));

  // tribunal logs list --batch: the rows of one run.
  const listed = ok(await rig.cli(['logs', 'list', '--batch', runA, '--all', '--json']));
  assert.equal(JSON.parse(listed.stdout).results.length, ITEMS, listed.stdout);

  // The same run under a gate it fails: exit 1, and --json says why.
  // Slow enough for many status reads (each wait must leave no listener behind: no warning).
  scoreAll(0.3);
  rig.fake.setLatency(500);
  const gated = await rig.cli(['batch', 'run', '--judge', judgeId, '--dataset', datasetId, '--wait', '--fail-under', '0.5', '--poll-interval', '0.05', '--json', '--quiet']);
  rig.fake.setLatency(0);
  assert.equal(gated.code, 1, gated.stderr);
  const answer = JSON.parse(gated.stdout);
  assert.equal(answer.status, 'completed');
  assert.deepEqual(answer.gate, { threshold: 0.5, passed: false, below: ['Answer Relevance', 'Clarity'] });
  assert.equal(gated.stderr, '', 'no progress with --quiet');
  runB = answer.id;
});

test('batch status, list and results', async () => {
  const status = ok(await rig.cli(['batch', 'status', runA]));
  assert.match(status.stdout, /completed/);
  assert.match(status.stdout, /Clarity/);
  const listed = ok(await rig.cli(['batch', 'list', '--dataset', datasetId]));
  assert.match(listed.stdout, new RegExp(runA));
  assert.match(listed.stdout, new RegExp(runB));
  assert.match(listed.stdout, /12\/12/);
  const dir = tempDir('tribunal-cli-batch-');
  const out = path.join(dir, 'rows.jsonl');
  ok(await rig.cli(['batch', 'results', runA, '--out', out]));
  const rows = fs
    .readFileSync(out, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.equal(rows.length, ITEMS);
  assert.deepEqual(
    rows.map((r) => r.position),
    Array.from({ length: ITEMS }, (_, i) => i),
  );
  assert.ok(rows.every((r) => r.item_id && r.execution_log_id && r.score === 0.8 && r.evaluator_results.length === 2));
  const toStdout = ok(await rig.cli(['batch', 'results', runB]));
  assert.equal(toStdout.stdout.trim().split('\n').length, ITEMS);
});

test('batch compare: a clear drop is a regression and fails the gate; the other way is an improvement', async () => {
  const plain = ok(await rig.cli(['batch', 'compare', runA, runB]));
  assert.match(plain.stdout, /12 pair\(s\) by dataset item/);
  // Every item went 0.8 -> 0.3: delta -0.5 with a zero-width interval, A won every pair.
  assert.match(plain.stdout, /Answer Relevance\s+12\s+0\.800\s+0\.300\s+-0\.500\s+\[-0\.500, -0\.500\]\s+12\/0\/0\s+WORSE/);
  assert.match(plain.stdout, /Items that moved most/);
  const gated = await rig.cli(['batch', 'compare', runA, runB, '--fail-on-regression']);
  assert.equal(gated.code, 1, gated.stdout + gated.stderr);
  assert.match(gated.stdout, /Regression: Answer Relevance -0\.500/);
  const json = JSON.parse(ok(await rig.cli(['batch', 'compare', runB, runA, '--fail-on-regression', '--json', '--top', '3'])).stdout);
  assert.deepEqual(
    json.evaluators.map((e: { verdict: string }) => e.verdict),
    ['improved', 'improved'],
  );
  assert.equal(json.moved.length, 3);
  assert.equal(json.exit_code, 0);
  const same = await rig.cli(['batch', 'compare', runA, runA]);
  assert.equal(same.code, 7, same.stderr);
  assert.match(same.stderr, /same batch run/);
});

test('batch cancel stops a running batch; bad input is refused clearly', async () => {
  scoreAll(0.8);
  rig.fake.setLatency(1500);
  try {
    const started = JSON.parse(ok(await rig.cli(['batch', 'run', '--judge', judgeId, '--dataset', datasetId, '--json'])).stdout);
    assert.equal(started.status, 'queued');
    const cancelled = ok(await rig.cli(['batch', 'cancel', started.batch_execution_id]));
    assert.match(cancelled.stdout, /cancelled/);
    // Waiting on a cancelled batch: the summary of what was scored, exit 8 (partial).
    const waited = await rig.cli(['batch', 'status', started.batch_execution_id, '--wait', '--poll-interval', '0.1', '--json', '--quiet'], { timeoutMs: 30_000 });
    assert.equal(waited.code, 8, waited.stderr);
    const record = JSON.parse(waited.stdout);
    assert.equal(record.status, 'cancelled');
    assert.ok(record.done + record.failed < ITEMS, 'rows not started were never scored');
  } finally {
    rig.fake.setLatency(0);
  }
  const usage = await rig.cli(['batch', 'run', '--dataset', datasetId]);
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /--judge/);
  const noWait = await rig.cli(['batch', 'run', '--judge', judgeId, '--dataset', datasetId, '--fail-under', '0.5']);
  assert.equal(noWait.code, 2);
  assert.match(noWait.stderr, /--fail-under needs --wait/);
  const unknown = await rig.cli(['batch', 'status', 'bat_00000000000000000000000000000000']);
  assert.equal(unknown.code, 5, unknown.stderr);
  const noDataset = await rig.cli(['batch', 'run', '--judge', judgeId, '--dataset', 'no such dataset']);
  assert.equal(noDataset.code, 5, noDataset.stderr);
});

test('eval --server: a local file as server batches (chunks of 1,000), reported like eval', async () => {
  scoreAll(0.7);
  const dir = tempDir('tribunal-cli-eval-server-');
  const input = path.join(dir, 'rows.jsonl');
  const lines = Array.from({ length: 1003 }, (_, i) => JSON.stringify({ id: `r${i}`, request: `q${i}`, response: `a${i}` }));
  lines.splice(2, 0, '{not json');
  lines.splice(5, 0, JSON.stringify({ request: 'no response' }));
  // A conversation row goes to the server as an item with turns.
  lines.push(
    JSON.stringify({
      id: 'conv',
      system_prompt: 'You are the shop assistant.',
      turns: [
        { role: 'user', content: 'Where is my order?' },
        { role: 'assistant', content: 'It shipped today.' },
      ],
    }),
  );
  fs.writeFileSync(input, `${lines.join('\n')}\n`);
  const out = path.join(dir, 'out.jsonl');
  const small = await rig.server.request('POST', '/v1/judges/', { key: rig.key, body: { name: 'one evaluator', intent: 'Support answers.', evaluator_ids: ['Clarity'] } });
  const r = await rig.cli(['eval', '--server', '--judge', small.body.id, '--input', input, '--out', out, '--fail-under', '0.5', '--poll-interval', '0.2'], { timeoutMs: 120_000 });
  // Two bad lines: scored rows pass the gate, the run is partial (8), as `eval` reports it.
  assert.equal(r.code, 8, r.stdout + r.stderr);
  assert.match(r.stderr, /^line 3: .*skipped$/m);
  assert.match(r.stderr, /^line 6: missing "response"; skipped$/m);
  assert.match(r.stderr, /Server batches \(1000 rows each\): \S+, \S+/);
  assert.match(r.stdout, /1004 row\(s\) scored, 2 bad row\(s\) skipped/);
  assert.match(r.stdout, /Clarity\s+1004\s+0\.70/);
  const results = fs
    .readFileSync(out, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.equal(results.length, 1006);
  assert.deepEqual(
    results.map((l) => l.row),
    Array.from({ length: 1006 }, (_, i) => i + 1),
  );
  assert.equal(results[0].id, 'r0');
  assert.equal(results.at(-2).id, 'r1002');
  assert.equal(results.at(-1).id, 'conv');
  const conversation = await rig.server.request('GET', `/v1/execution-logs/${results.at(-1).execution_log_id}/`, { key: rig.key });
  assert.equal(conversation.body.turns.length, 2);
  assert.equal(conversation.body.system_prompt, 'You are the shop assistant.');
  assert.ok(results.filter((l) => l.status === 'ok').every((l) => l.execution_log_id && l.score === 0.7));
  const refused = await rig.cli(['eval', '--server', '--resume', '--judge', judgeId, '--input', input, '--out', path.join(dir, 'x.jsonl')]);
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /--resume does not apply to --server/);
});

test('eval --use-cache: the second run over the same rows reuses every result, without a model call', async () => {
  scoreAll(0.6);
  const dir = tempDir('tribunal-cli-eval-cache-');
  const input = path.join(dir, 'rows.jsonl');
  fs.writeFileSync(input, `${Array.from({ length: 4 }, (_, i) => JSON.stringify({ request: `cache q${i}`, response: `cache a${i}` })).join('\n')}\n`);
  for (const [mode, extra] of [
    ['local', []],
    ['server', ['--server', '--poll-interval', '0.1']],
  ] as const) {
    const first = ok(await rig.cli(['eval', '--judge', judgeId, '--input', input, '--out', path.join(dir, `${mode}-1.jsonl`), '--use-cache', ...extra]));
    assert.match(first.stdout, /4 row\(s\) scored/);
    const before = rig.fake.requests.length;
    ok(await rig.cli(['eval', '--judge', judgeId, '--input', input, '--out', path.join(dir, `${mode}-2.jsonl`), '--use-cache', ...extra]));
    assert.equal(rig.fake.requests.length, before, `${mode}: no model call on the second run`);
    const rows = fs
      .readFileSync(path.join(dir, `${mode}-2.jsonl`), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const log = await rig.server.request('GET', `/v1/execution-logs/${rows[0].execution_log_id}/`, { key: rig.key });
    assert.ok(
      log.body.evaluator_results.every((r: { cached?: boolean }) => r.cached === true),
      JSON.stringify(log.body.evaluator_results),
    );
  }
});
