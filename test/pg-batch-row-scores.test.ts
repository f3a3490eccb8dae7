// The batch rows' scores kept by the PostgreSQL store (src/store/postgres/batch-row-scores.ts): a
// row read once comes back without its record being sent again, a row recorded late below the
// highest position kept is read, pages stay exact, and the bound holds.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BatchRowScoresCache } from '../src/store/postgres/batch-row-scores.ts';
import { PgConnection } from '../src/store/postgres/connection.ts';
import type { BatchRowRecord } from '../src/store/types.ts';
import { openTestPostgresStore } from './helpers/postgres.ts';
import { org } from './store-contract.ts';

describe('batch rows scores kept on PostgreSQL', () => {
  let store: Awaited<ReturnType<typeof openTestPostgresStore>>;
  let db: PgConnection;
  const statements: Array<{ sql: string; records: unknown[] }> = [];
  before(async () => {
    store = await openTestPostgresStore();
    db = new PgConnection({ connectionString: store.url, migrate: false });
    const query = db.query.bind(db);
    db.query = async (sql, params, opts) => {
      const result = await query(sql, params, opts);
      statements.push({ sql: typeof sql === 'string' ? sql : sql.text, records: result.rows.map((r) => r.record) });
      return result;
    };
  });
  after(async () => {
    await db.close();
    await store.close();
  });

  const run = async (id: string) => {
    await store.createBatchExecution({
      id,
      org_id: org().id,
      judge_id: 'jdg_1',
      dataset_id: null,
      status: 'running',
      total: 10,
      done: 0,
      failed: 0,
      cost_usd: 0,
      created_at: new Date().toISOString(),
    } as never);
  };
  const row = (position: number): BatchRowRecord => ({
    position,
    item_id: null,
    index: position,
    execution_log_id: null,
    score: position / 10,
    evaluator_results: [{ evaluator_id: 'evl_a', evaluator_name: 'A', score: position / 10, reason: 'long justification' } as never],
    error: null,
    cost_usd: 0.001,
  });
  const scores = (page: { items: Array<{ position: number; score: number | null }> }) => page.items.map((r) => [r.position, r.score]);

  it('reads a row once, reads a row recorded late below the rows kept, and answers pages as the table holds them', async () => {
    await run('bex_kept');
    const cache = new BatchRowScoresCache();
    for (const p of [0, 1, 3, 4]) await store.recordBatchRow('bex_kept', row(p));
    assert.deepEqual(scores(await cache.page(db, 'bex_kept', { limit: 10 })), [
      [0, 0],
      [1, 0.1],
      [3, 0.3],
      [4, 0.4],
    ]);
    await store.recordBatchRow('bex_kept', row(2));
    await store.recordBatchRow('bex_kept', row(5));
    statements.length = 0;
    const again = await cache.page(db, 'bex_kept', { limit: 10 });
    assert.deepEqual(scores(again), [
      [0, 0],
      [1, 0.1],
      [2, 0.2],
      [3, 0.3],
      [4, 0.4],
      [5, 0.5],
    ]);
    // The page's statement sent only row 5's record; row 2 (late, below the rows kept) was read alone.
    assert.equal(statements.length, 2);
    assert.deepEqual(
      statements[0].records.map((r) => (r === null ? null : (r as BatchRowRecord).position)),
      [null, null, null, null, null, 5],
    );
    assert.match(statements[1].sql, /ANY/);
    assert.equal(statements[1].records.length, 1);
    // Pages through the cursor, and the scores only (no justification).
    const first = await cache.page(db, 'bex_kept', { limit: 4 });
    assert.equal(first.last, 3);
    assert.deepEqual(scores(await cache.page(db, 'bex_kept', { limit: 4, after: first.last })), [
      [4, 0.4],
      [5, 0.5],
    ]);
    assert.deepEqual(first.items[0].evaluator_results, [{ evaluator_id: 'evl_a', evaluator_name: 'A', score: 0 }]);
  });

  it('keeps at most its bound of rows, dropping the run read least recently, and answers the same past it', async () => {
    await run('bex_bound_a');
    await run('bex_bound_b');
    for (let p = 0; p < 3; p++) await store.recordBatchRow('bex_bound_a', row(p));
    for (let p = 0; p < 4; p++) await store.recordBatchRow('bex_bound_b', row(p));
    const cache = new BatchRowScoresCache(4);
    await cache.page(db, 'bex_bound_a', { limit: 10 });
    // b's 4 rows need a's room: a is dropped and read whole again next time.
    await cache.page(db, 'bex_bound_b', { limit: 10 });
    statements.length = 0;
    assert.deepEqual(scores(await cache.page(db, 'bex_bound_a', { limit: 10 })).length, 3);
    assert.deepEqual(
      statements[0].records.map((r) => r === null),
      [false, false, false],
    );
    // A run bigger than the bound alone is never kept: every read sends its records.
    for (let p = 3; p < 6; p++) await store.recordBatchRow('bex_bound_a', row(p));
    await cache.page(db, 'bex_bound_a', { limit: 10 });
    statements.length = 0;
    assert.equal((await cache.page(db, 'bex_bound_a', { limit: 10 })).items.length, 6);
    assert.ok(statements[0].records.every((r) => r !== null));
  });
});
