// The Store contract for batch runs and their rows, run by defineStoreContract on every store.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newId } from '../src/ids.ts';
import { rowScores, type BatchExecutionRecord, type BatchRowRecord, type Store } from '../src/store/types.ts';

const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms).toISOString();

export function batch(orgId: string, over: Partial<BatchExecutionRecord> = {}): BatchExecutionRecord {
  return {
    id: newId('bat'),
    org_id: orgId,
    key_id: 'key_1',
    judge_id: 'jdg_1',
    judge_version: 1,
    evaluator_id: null,
    dataset_id: 'dst_1',
    status: 'queued',
    total: 5,
    done: 0,
    failed: 0,
    started_at: null,
    finished_at: null,
    cost_usd: 0,
    summary: [],
    tags: ['t'],
    use_cache: false,
    error: null,
    created_at: at(0),
    planned: 0,
    planned_all: false,
    plan_cursor: null,
    ...over,
  };
}

export function row(position: number, over: Partial<BatchRowRecord> = {}): BatchRowRecord {
  return { position, item_id: `itm_${position}`, index: null, execution_log_id: `log_${position}`, score: 0.5, evaluator_results: [], error: null, cost_usd: 0.001, ...over };
}

export function defineBatchContract(fresh: () => Promise<Store>): void {
  describe('batch runs', () => {
    it('creates, reads, lists newest first with filters, and lists the unfinished ones', async () => {
      const store = await fresh();
      const a = batch('org_a', { created_at: at(1) });
      const b = batch('org_a', { created_at: at(2), dataset_id: 'dst_2', status: 'running' });
      const done = batch('org_a', { created_at: at(3), status: 'completed' });
      const other = batch('org_b', { created_at: at(4) });
      for (const x of [a, b, done, other]) await store.createBatchExecution(x);
      assert.deepEqual(await store.getBatchExecution(a.id), a);
      assert.equal(await store.getBatchExecution('bat_missing'), null);
      // The cancel checks' read (batch/status-reads.ts): the status alone.
      assert.equal(await store.getBatchStatus(b.id), 'running');
      assert.equal(await store.getBatchStatus('bat_missing'), null);
      const first = await store.listBatchExecutions({ org_id: 'org_a' }, { limit: 2 });
      assert.deepEqual(
        first.items.map((x) => x.id),
        [done.id, b.id],
      );
      const second = await store.listBatchExecutions({ org_id: 'org_a' }, { limit: 2, after: first.last });
      assert.deepEqual(
        second.items.map((x) => x.id),
        [a.id],
      );
      assert.equal(second.last, undefined);
      assert.deepEqual(
        (await store.listBatchExecutions({ org_id: 'org_a', dataset_id: 'dst_2' }, { limit: 9 })).items.map((x) => x.id),
        [b.id],
      );
      assert.deepEqual(
        (await store.listBatchExecutions({ org_id: 'org_a', status: 'completed' }, { limit: 9 })).items.map((x) => x.id),
        [done.id],
      );
      assert.deepEqual(
        (await store.listBatchExecutions({ org_id: 'org_a', date_from: at(2), date_to: at(2) }, { limit: 9 })).items.map((x) => x.id),
        [b.id],
      );
      const unfinished = (await store.listUnfinishedBatchExecutions()).map((x) => x.id);
      assert.ok(unfinished.includes(a.id) && unfinished.includes(b.id) && unfinished.includes(other.id));
      assert.ok(!unfinished.includes(done.id));
    });

    it('updates conditionally on the status', async () => {
      const store = await fresh();
      const b = batch('org_a');
      await store.createBatchExecution(b);
      const running = await store.updateBatchExecution(b.id, { status: 'running', started_at: at(5), if_status: ['queued'] });
      assert.equal(running?.status, 'running');
      assert.equal(running?.started_at, at(5));
      assert.equal(await store.updateBatchExecution(b.id, { status: 'running', if_status: ['queued'] }), null);
      const cancelled = await store.updateBatchExecution(b.id, { status: 'cancelled', finished_at: at(6) });
      assert.equal(cancelled?.status, 'cancelled');
      assert.equal(await store.updateBatchExecution(b.id, { status: 'completed', if_status: ['queued', 'running'] }), null);
      assert.equal((await store.getBatchExecution(b.id))?.status, 'cancelled');
      assert.equal(await store.getBatchStatus(b.id), 'cancelled');
      assert.equal(await store.updateBatchExecution('bat_missing', { status: 'failed' }), null);
    });

    it('records each row once, counts it, and pages rows in position order', async () => {
      const store = await fresh();
      const b = batch('org_a', { total: 7 });
      await store.createBatchExecution(b);
      // Out of order and concurrently, with a repeat of every position.
      const order = [4, 0, 6, 2, 1, 5, 3];
      const results = await Promise.all([...order, ...order].map((p) => store.recordBatchRow(b.id, row(p, p === 2 ? { score: null, error: 'bad input', cost_usd: 0 } : {}))));
      assert.equal(results.filter(Boolean).length, 7);
      const after = await store.getBatchExecution(b.id);
      assert.equal(after?.done, 6);
      assert.equal(after?.failed, 1);
      assert.ok(Math.abs((after?.cost_usd ?? 0) - 0.006) < 1e-9);
      const page1 = await store.listBatchRows(b.id, { limit: 3 });
      assert.deepEqual(
        page1.items.map((r) => r.position),
        [0, 1, 2],
      );
      assert.equal(page1.items[2].error, 'bad input');
      const page2 = await store.listBatchRows(b.id, { limit: 3, after: page1.last });
      assert.deepEqual(
        page2.items.map((r) => r.position),
        [3, 4, 5],
      );
      const page3 = await store.listBatchRows(b.id, { limit: 3, after: page2.last });
      assert.deepEqual(
        page3.items.map((r) => r.position),
        [6],
      );
      assert.equal(page3.last, undefined);
      assert.deepEqual(page1.items[0], row(0));
      // The counters survive a status update.
      await store.updateBatchExecution(b.id, { status: 'completed', summary: [] });
      assert.equal((await store.getBatchExecution(b.id))?.done, 6);
    });

    it('pages rows cut to their scores, in position order, without the justifications', async () => {
      const store = await fresh();
      const b = batch('org_a', { total: 5 });
      await store.createBatchExecution(b);
      const result = (id: string, score: number | null, over: Record<string, unknown> = {}) => ({
        evaluator_id: id,
        evaluator_name: `Name of ${id} "quoted"\ttabbed`,
        evaluator_version: 2,
        score,
        justification: 'Long text\twith a tab and "quotes" and ünïcode.',
        model: 'm',
        input_tokens: 10,
        output_tokens: 5,
        cost_usd: 0.001,
        latency_ms: 300,
        ...over,
      });
      const rows = [
        row(3, { evaluator_results: [result('evl_1', 0.25), result('evl_2', null, { not_applicable: true })] }),
        row(0, { evaluator_results: [result('evl_1', 1), result('evl_2', 0)] }),
        row(4, { score: null, error: 'model failed', evaluator_results: [result('evl_1', null, { error: 'timeout' }), result('evl_2', null, { not_applicable: false })] }),
        row(1, { item_id: null, index: 1, execution_log_id: null, evaluator_results: [] }),
      ];
      for (const r of rows) assert.equal(await store.recordBatchRow(b.id, r), true);
      const page1 = await store.listBatchRowScores(b.id, { limit: 2 });
      assert.deepEqual(
        page1.items.map((r) => r.position),
        [0, 1],
      );
      const page2 = await store.listBatchRowScores(b.id, { limit: 2, after: page1.last });
      assert.equal(page2.last, undefined);
      const byPosition = [...rows].sort((x, y) => x.position - y.position);
      assert.deepEqual([...page1.items, ...page2.items], byPosition.map(rowScores));
      assert.deepEqual(page2.items[0].evaluator_results[1], { evaluator_id: 'evl_2', evaluator_name: 'Name of evl_2 "quoted"\ttabbed', score: null, not_applicable: true });
      assert.ok(!('justification' in page2.items[0].evaluator_results[0]));
      // The whole rows read back as recorded, beside their scores.
      assert.deepEqual((await store.listBatchRows(b.id, { limit: 9 })).items, byPosition);
      assert.deepEqual((await store.listBatchRowScores('bat_missing', { limit: 9 })).items, []);
    });

    it('keeps the items of an inline run in order', async () => {
      const store = await fresh();
      const b = batch('org_a', { dataset_id: null, total: 4 });
      const items = [0, 1, 2, 3].map((i) => ({ response: `r${i}`, tags: [`t${i}`] }));
      await store.createBatchExecution(b, items);
      assert.deepEqual(await store.getBatchItems(b.id, 1, 2), items.slice(1, 3));
      assert.deepEqual(await store.getBatchItems(b.id, 3, 5), items.slice(3));
    });

    it('logs carry batch_execution_id and filter on it', async () => {
      const store = await fresh();
      const { log } = await import('./store-contract.ts');
      const inBatch = { ...log('org_a', { created_at: at(1) }), batch_execution_id: 'bat_1' };
      const alone = log('org_a', { created_at: at(2) });
      await store.appendExecutionLog(inBatch);
      await store.appendExecutionLog(alone);
      assert.equal((await store.getExecutionLog(inBatch.id))?.batch_execution_id, 'bat_1');
      assert.deepEqual(
        (await store.listExecutionLogs({ org_id: 'org_a', batch_execution_id: 'bat_1' }, { limit: 9 })).items.map((l) => l.id),
        [inBatch.id],
      );
      assert.deepEqual((await store.listExecutionLogs({ org_id: 'org_a', batch_execution_id: 'bat_2' }, { limit: 9 })).items, []);
    });
  });
}
