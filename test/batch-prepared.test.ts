// Issue 25 item 5: a batch run loads its judge's evaluator versions and scoring targets once per run
// (per run per instance on PostgreSQL), not once per chunk or row (src/batch/prepared-runs.ts); the
// run scores the versions it loaded first even when an unpinned evaluator is edited meanwhile; the
// runner lets a run's versions go when it ends. The cancel checks of rows asked at once share reads,
// answered only by a read started less than FRESH_MS before (status-reads.ts). Both stores (TRIBUNAL_TEST_STORE=postgres).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { PreparedRuns } from '../src/batch/prepared-runs.ts';
import { CANCEL_SETTLE_MS, cancelSettleMs, FRESH_MS, RunStatusReads } from '../src/batch/status-reads.ts';
import type { BatchStatus } from '../src/schemas/batches.ts';
import type { PreparedRun } from '../src/runs/types.ts';
import { toolAnswer } from './helpers/fake-anthropic.ts';
import { evaluatorBody, startScoringRig, type ScoringRig } from './helpers/execute.ts';
import { until } from './helpers/wait.ts';

const CHUNK = 10;
let rig: ScoringRig;
before(async () => {
  // One chunk's rows at a time: a later chunk starts only after an earlier one's rows have finished.
  rig = await startScoringRig({ TRIBUNAL_BATCH_CHUNK: String(CHUNK), TRIBUNAL_BATCH_CONCURRENCY: String(CHUNK), TRIBUNAL_BATCH_LEASE: '1s' });
});
after(() => rig.close());

/** The runner's kept runs (the queue adapter's ChunkRunner). */
const preparedHeld = () => (rig.server.services.batches as unknown as { rows: { prepared: PreparedRuns } }).rows.prepared.size;

async function runToEnd(judgeId: string, rows: number) {
  const items = Array.from({ length: rows }, (_, i) => ({ request: `q${i}`, response: `a${i}` }));
  const started = await rig.post(`/v1/judges/${judgeId}/batch-execute/`, { items });
  assert.equal(started.status, 202, JSON.stringify(started.body));
  const id = started.body.batch_execution_id as string;
  const end = await until('the run to end', async () => {
    const b = (await rig.get(`/v1/judges/batch-executions/${id}/`)).body;
    return b.status === 'completed' && b;
  });
  return { id, end };
}

describe('a batch run loads its evaluators once per run', () => {
  test('50 rows in chunks of 10 read the judge evaluators once for the run (plus the start), and the run is let go at its end', async () => {
    rig.fake.respondWith(() => toolAnswer({ justification: 'fine', score: 0.5 }));
    const a = await rig.createEvaluator(evaluatorBody());
    const b = await rig.createEvaluator(evaluatorBody());
    const judge = await rig.createJudge({ name: `Prepared judge ${Math.random()}`, intent: 'grade answers', evaluator_ids: [a.id, b.id] });
    const store = rig.server.store;
    const originals = { getEvaluator: store.getEvaluator, getEvaluatorVersion: store.getEvaluatorVersion };
    const reads = { getEvaluator: 0, getEvaluatorVersion: 0 };
    for (const name of ['getEvaluator', 'getEvaluatorVersion'] as const) {
      const original = originals[name] as (...args: unknown[]) => unknown;
      (store as unknown as Record<string, unknown>)[name] = function (this: typeof store, ...args: unknown[]) {
        reads[name]++;
        return original.apply(this, args);
      };
    }
    try {
      const { end } = await runToEnd(judge.id, 50);
      assert.equal(end.done, 50);
      // The start's check reads the 2 evaluators once; the run once more (prepare), not once per chunk (5 chunks: 10).
      assert.equal(reads.getEvaluator, 2 + 2, `the evaluators were read ${reads.getEvaluator} times for 50 rows in 5 chunks`);
      assert.equal(reads.getEvaluatorVersion, 0, 'both evaluators are at their latest version: no version read');
      await until('the ended run to be let go', async () => preparedHeld() === 0);
    } finally {
      Object.assign(store, originals);
      rig.fake.respondWith(null);
    }
  });

  test('an evaluator edited while the run goes on: every row scores the version the run started with', async () => {
    const evaluator = await rig.createEvaluator(evaluatorBody());
    const judge = await rig.createJudge({ name: `Edited mid-run ${Math.random()}`, intent: 'grade answers', evaluator_ids: [evaluator.id] });
    assert.equal(judge.evaluators?.[0]?.version ?? null, null, 'the judge runs the evaluator at its latest version (not pinned)');
    // The first model call edits the evaluator before it is answered: the first chunk was prepared
    // before it, the third chunk's rows can start only after it (one chunk's rows at a time).
    let edit: Promise<unknown> | undefined;
    rig.fake.respondWith(async () => {
      edit ??= rig.server.request('PATCH', `/v1/evaluators/${evaluator.id}/`, { key: rig.key, body: { intent: 'Checks quality, edited mid-run.' } });
      const edited = (await edit) as { status: number };
      assert.equal(edited.status, 200);
      return toolAnswer({ justification: 'fine', score: 0.5 });
    });
    try {
      const { id, end } = await runToEnd(judge.id, 3 * CHUNK);
      assert.equal(end.done, 3 * CHUNK);
      assert.equal((await rig.get(`/v1/evaluators/${evaluator.id}/`)).body.version, evaluator.version + 1, 'the evaluator was edited during the run');
      const rows = (await rig.get(`/v1/judges/batch-executions/${id}/results/?limit=100`)).body.results;
      assert.equal(rows.length, 3 * CHUNK);
      const versions = new Set(rows.map((r: { evaluator_results: Array<{ evaluator_version: number }> }) => r.evaluator_results[0].evaluator_version));
      assert.deepEqual([...versions], [evaluator.version], 'every row scored the version the run started with');
    } finally {
      rig.fake.respondWith(null);
    }
  });
});

describe('PreparedRuns', () => {
  const prepared = (n: number): PreparedRun => ({ evaluators: [], targets: new Map([[`m${n}`, n]]) });

  test('one load per run: chunks asking at once share it; a dropped run is loaded again', async () => {
    const runs = new PreparedRuns();
    let loads = 0;
    const load = async () => prepared(++loads);
    const [x, y] = await Promise.all([runs.of('bat_1', load), runs.of('bat_1', load)]);
    assert.equal(loads, 1);
    assert.equal(x, y);
    assert.equal(await runs.of('bat_1', load), x);
    runs.drop('bat_1');
    assert.equal(runs.size, 0);
    assert.notEqual(await runs.of('bat_1', load), x);
    assert.equal(loads, 2);
  });

  test('a failed load is not kept: the next chunk tries again', async () => {
    const runs = new PreparedRuns();
    assert.equal(await runs.of('bat_1', async () => null), null);
    assert.equal(runs.size, 0);
    const again = await runs.of('bat_1', async () => prepared(1));
    assert.ok(again);
    assert.equal(runs.size, 1);
  });

  test('bounded: past its size the least recently used run is let go first', async () => {
    const runs = new PreparedRuns(2);
    let loads = 0;
    const load = async () => prepared(++loads);
    await runs.of('bat_a', load);
    await runs.of('bat_b', load);
    await runs.of('bat_a', load); // a is now the most recently used
    await runs.of('bat_c', load); // b goes
    assert.equal(runs.size, 2);
    assert.equal(loads, 3);
    await runs.of('bat_a', load);
    assert.equal(loads, 3, 'a was kept');
    await runs.of('bat_b', load);
    assert.equal(loads, 4, 'b was let go and is loaded again');
  });
});

describe('RunStatusReads', () => {
  /** A store whose reads answer when `finish` is called, with the status at the moment each read started. */
  function slowStore() {
    const state = { status: 'running' as string, started: 0, waiting: [] as Array<() => void> };
    const store = {
      getBatchStatus(): Promise<BatchStatus | null> {
        state.started++;
        const seen = state.status as BatchStatus;
        return new Promise((resolve) => state.waiting.push(() => resolve(seen)));
      },
    };
    const finish = async () => {
      for (const answer of state.waiting.splice(0)) answer();
      await new Promise((r) => setImmediate(r));
    };
    return { state, store, finish };
  }

  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  test('asks share a read under way, and are answered at once while the last read is fresher than FRESH_MS', async () => {
    const { state, store, finish } = slowStore();
    const reads = new RunStatusReads(store);
    const first = reads.read('bat_1');
    const later = [reads.read('bat_1'), reads.read('bat_1'), reads.read('bat_1')];
    assert.equal(state.started, 1, 'the asks made meanwhile share the read under way');
    await finish();
    assert.deepEqual(await Promise.all([first, ...later]), ['running', 'running', 'running', 'running']);
    assert.equal(reads.read('bat_1'), 'running', 'answered at once from the read just made');
    assert.equal(state.started, 1);
    await sleep(FRESH_MS + 10);
    const stale = reads.read('bat_1');
    assert.ok(stale instanceof Promise, 'the last read is too old: a new one');
    assert.equal(state.started, 2);
    await finish();
    assert.equal(await stale, 'running');
  });

  test('a read that ends FRESH_MS or more after it started answers only the asks made before it started', async () => {
    const { state, store, finish } = slowStore();
    const reads = new RunStatusReads(store);
    const before = reads.read('bat_1'); // the read starts after this ask
    state.status = 'cancelled';
    const after = reads.read('bat_1'); // shares the read under way, which started before it
    await sleep(FRESH_MS + 10);
    await finish();
    assert.equal(await before, 'running', 'a read started after the ask answers it, however long it took');
    assert.equal(state.started, 2, 'the later ask gets a read of its own, started after it');
    await finish();
    assert.equal(await after, 'cancelled');
    assert.equal(reads.read('bat_1'), 'cancelled');
  });

  test('a store read by statements holds the answer to a cancel CANCEL_SETTLE_MS, longer than a read may be old; a store in memory does not (the promise itself: batch-cancel.test.ts)', () => {
    assert.ok(CANCEL_SETTLE_MS > FRESH_MS);
    assert.equal(cancelSettleMs({}), CANCEL_SETTLE_MS);
    assert.equal(cancelSettleMs({ peekBatchStatus: () => null }), 0);
  });
});
