// Issue 33: the JSON store tallies a live run's done, failed and per-evaluator summary as its rows are
// recorded (src/store/batch-tally.ts), so a status read no longer reads every row of the run. The
// tally must say exactly what a read of the rows says (batch/summary.ts), whatever order the rows
// finish in, after a restart, and not once the run has ended (its stored summary stands then).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { batchSummary, withLiveSummary } from '../src/batch/summary.ts';
import type { BatchExecutionRecord, BatchRowRecord, Store } from '../src/store/types.ts';
import { jsonTempDirs, openJson } from './helpers/json-store.ts';
import { batch, row } from './store-contract-batches.ts';

const tempDir = jsonTempDirs('tribunal-batch-tally-');

type Result = BatchRowRecord['evaluator_results'][number];
const result = (id: string, name: string, score: number | null, extra: Partial<Result> = {}) => ({ evaluator_id: id, evaluator_name: name, score, ...extra }) as Result;

/** Rows of every kind, given in the order they finish (not by position). */
const finishing: BatchRowRecord[] = [
  // Met first by position at row 1, but this row finishes first and lists B before A.
  row(6, { evaluator_results: [result('evl_b', 'Tone', 0.25), result('evl_a', 'Clarity', 0.75)] }),
  row(3, { evaluator_results: [result('evl_a', 'Clarity', 0.5), result('evl_b', 'Tone', null, { not_applicable: true })] }),
  // Failed before any model call: no results.
  row(0, { score: null, error: 'missing response', evaluator_results: [], execution_log_id: null }),
  // Every evaluator failed: a failed row with errors.
  row(4, { score: null, error: 'timed out', evaluator_results: [result('evl_a', 'Clarity', null), result('evl_b', 'Tone', null)] }),
  row(1, { evaluator_results: [result('evl_a', 'Clarity v1', 1), result('evl_c', 'Facts', 0), result('evl_b', 'Tone', 0.5)] }),
  row(5, { evaluator_results: [result('evl_c', 'Facts', 0.25, { confidence: 0.9 }), result('evl_a', 'Clarity', 0)] }),
];

/** What a read of every row says: the summary, and done/failed counted from the rows. */
async function fromRows(store: Store, id: string) {
  const rows = (await store.listBatchRowScores(id, { limit: 1000 })).items;
  return { done: rows.filter((r) => r.score !== null).length, failed: rows.filter((r) => r.score === null).length, summary: await batchSummary(store, { id }) };
}

async function live(store: Store, id: string) {
  const b = (await store.getBatchExecution(id)) as BatchExecutionRecord;
  const { done, failed, summary } = await withLiveSummary(store, b);
  return { done, failed, summary };
}

describe('JSON store: the tally of a live run', () => {
  it('says what a read of the rows says after each row, in any finishing order, and after a restart', async () => {
    const dir = tempDir();
    let store = await openJson(dir);
    const b = batch('org_a', { status: 'running', total: 8 });
    await store.createBatchExecution(b);
    assert.deepEqual(store.peekBatchCounts?.(b.id), { done: 0, failed: 0, summary: [] });
    for (const r of finishing) {
      assert.equal(await store.recordBatchRow(b.id, r), true);
      const expected = await fromRows(store, b.id);
      assert.deepEqual(store.peekBatchCounts?.(b.id), expected, `after row ${r.position}`);
      assert.deepEqual(await live(store, b.id), expected);
    }
    // A row recorded twice counts once.
    assert.equal(await store.recordBatchRow(b.id, finishing[0]), false);
    const before = await fromRows(store, b.id);
    assert.deepEqual(store.peekBatchCounts?.(b.id), before);
    assert.equal(before.done, 4);
    assert.equal(before.failed, 2);
    // Evaluators as a read by position meets them: A and C at row 1 (A's name there), then B.
    assert.deepEqual(
      before.summary.map((s) => [s.evaluator_id, s.evaluator_name, s.n, s.mean, s.min, s.max, s.errors]),
      [
        ['evl_a', 'Clarity v1', 4, 0.5625, 0, 1, 1],
        ['evl_c', 'Facts', 2, 0.125, 0, 0.25, 0],
        ['evl_b', 'Tone', 2, 0.375, 0.25, 0.5, 1],
      ],
    );
    await store.close();
    // Restart: an unfinished run's tally is rebuilt from its rows file.
    store = await openJson(dir);
    try {
      assert.deepEqual(store.peekBatchCounts?.(b.id), before);
      assert.equal(await store.recordBatchRow(b.id, row(2, { evaluator_results: [result('evl_a', 'Clarity', 0.25)] })), true);
      assert.deepEqual(store.peekBatchCounts?.(b.id), await fromRows(store, b.id));
      // Ended: no tally; a read answers the run as stored, its summary the one written at its end.
      const summary = await batchSummary(store, b);
      await store.updateBatchExecution(b.id, { status: 'cancelled', summary, finished_at: new Date().toISOString() });
      assert.equal(store.peekBatchCounts?.(b.id), null);
      const ended = (await store.getBatchExecution(b.id)) as BatchExecutionRecord;
      assert.deepEqual(await withLiveSummary(store, ended), ended);
      assert.deepEqual(ended.summary, summary);
    } finally {
      await store.close();
    }
  });

  it('keeps no tally of a run created ended, nor after a restart of an ended run', async () => {
    const dir = tempDir();
    let store = await openJson(dir);
    const b = batch('org_a', { status: 'completed', total: 1 });
    await store.createBatchExecution(b);
    assert.equal(store.peekBatchCounts?.(b.id), null);
    await store.close();
    store = await openJson(dir);
    try {
      assert.equal(store.peekBatchCounts?.(b.id), null);
      assert.equal(store.peekBatchCounts?.('bat_missing'), null);
    } finally {
      await store.close();
    }
  });

  it('without a store tally (PostgreSQL), a live read tallies only the rows after its gapless first rows, and says what a read of every row says', async () => {
    const store = await openJson(tempDir());
    try {
      const b = batch('org_a', { status: 'running', total: 8 });
      await store.createBatchExecution(b);
      let read = 0;
      // The store as PostgreSQL's is seen: no tally of its own; the rows each read hands out are counted.
      const view = Object.create(store, {
        peekBatchCounts: { value: undefined },
        listBatchRowScores: {
          value: async (id: string, q: { limit: number; after?: number }) => {
            const page = await store.listBatchRowScores(id, q);
            read += page.items.length;
            return page;
          },
        },
      }) as Store;
      const reads: number[] = [];
      for (const [k, r] of [row(2), ...finishing.filter((x) => x.position !== 2)].entries()) {
        assert.equal(await store.recordBatchRow(b.id, r), true);
        read = 0;
        const got = await withLiveSummary(view, { ...b, done: k + 1, failed: 0 });
        reads.push(read);
        assert.deepEqual({ done: got.done, failed: got.failed, summary: got.summary }, await fromRows(store, b.id), `after row ${r.position}`);
      }
      // Rows 2, 6, 3: nothing gapless from 0, every row read again; after row 0, rows after 0 only;
      // after row 1 (0-4 gapless) the next read is of rows 5 and 6.
      assert.deepEqual(reads, [1, 2, 3, 4, 4, 5, 2]);
    } finally {
      await store.close();
    }
  });
});
