// Group commit on PostgreSQL (src/store/postgres/group-commit.ts, issue 33): batch rows and
// execution logs written at once share multi-row statements, and each write still gets its own
// outcome: a row recorded twice answers false once, counters and budget counters move once per
// row, a taken log id is refused alone, and a group the database refuses is retried write by write.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { batchWrites } from '../src/store/postgres/batch-writes.ts';
import { PgConnection } from '../src/store/postgres/connection.ts';
import { GroupCommit } from '../src/store/postgres/group-commit.ts';
import { StoreConflictError, type BatchRowRecord } from '../src/store/types.ts';
import { openTestPostgresStore } from './helpers/postgres.ts';
import { log, org } from './store-contract.ts';

describe('GroupCommit', () => {
  it('sends the writes queued behind a statement together, and retries a refused group write by write', async () => {
    const groups: number[][] = [];
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const commit = new GroupCommit<number, number>({
      one: async (n) => {
        groups.push([n]);
        await gate;
        if (n === 13) throw new Error('thirteen refused');
        return n * 2;
      },
      many: async (ns) => {
        groups.push(ns);
        if (ns.includes(13)) throw new Error('a group with thirteen is refused');
        return ns.map((n) => ({ ok: n * 2 }));
      },
      maxGroup: 3,
      maxInFlight: 1,
    });
    const answers = [1, 2, 3, 4, 13, 6].map((n) =>
      commit.write(n).then(
        (v) => ({ v }),
        (err: Error) => ({ err: err.message }),
      ),
    );
    release();
    assert.deepEqual(await Promise.all(answers), [{ v: 2 }, { v: 4 }, { v: 6 }, { v: 8 }, { err: 'thirteen refused' }, { v: 12 }]);
    // The first alone (a slot was free), the next three together, then [13, 6] refused and each alone.
    assert.deepEqual(groups, [[1], [2, 3, 4], [13, 6], [13], [6]]);
  });

  it('keeps a write whose key is in a statement on its way for a later statement, so the first write of a key wins', async () => {
    const sent: string[][] = [];
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const stored = new Set<string>();
    const store = (id: string) => {
      if (stored.has(id)) throw new Error(`${id} taken`);
      stored.add(id);
      return id;
    };
    const commit = new GroupCommit<string, string>({
      one: async (id) => {
        sent.push([id]);
        await gate;
        return store(id);
      },
      many: async (ids) => {
        sent.push(ids);
        return ids.map((id) => ({ ok: store(id) }));
      },
      maxGroup: 8,
      maxInFlight: 2,
      key: (id) => id,
    });
    const answers = ['a', 'a', 'b'].map((id) =>
      commit.write(id).then(
        (v) => v,
        (err: Error) => err.message,
      ),
    );
    release();
    // The second 'a' waited for the first's statement although a slot was free ('b' took it).
    assert.deepEqual(await Promise.all(answers), ['a', 'a taken', 'b']);
    assert.deepEqual(sent, [['a'], ['b'], ['a']]);
  });
});

describe('grouped batch rows and logs on PostgreSQL', () => {
  let store: Awaited<ReturnType<typeof openTestPostgresStore>>;
  before(async () => {
    store = await openTestPostgresStore();
  });
  after(() => store.close());

  const batch = (id: string, orgId: string) =>
    store.createBatchExecution({
      id,
      org_id: orgId,
      judge_id: 'jdg_1',
      dataset_id: null,
      status: 'running',
      total: 100,
      done: 0,
      failed: 0,
      cost_usd: 0,
      created_at: new Date().toISOString(),
    } as never);
  const row = (position: number, score: number | null, cost: number | null): BatchRowRecord => ({
    position,
    item_id: null,
    index: position,
    execution_log_id: null,
    score,
    evaluator_results: [],
    error: score === null ? 'failed' : null,
    cost_usd: cost,
  });

  it('records rows of two runs written at once: each once, counters and spend summed per run and key', async () => {
    const o = org();
    await batch('bex_group_a', o.id);
    await batch('bex_group_b', o.id);
    const key = (id: string) => ({ org_id: o.id, scope: 'batch' as const, scope_id: id, period: 'total' });
    const writes = [];
    for (let p = 0; p < 20; p++) {
      writes.push(store.recordBatchRow('bex_group_a', row(p, p % 5 === 0 ? null : 0.5, 0.001), { key: key('bex_group_a'), usd: 0.001 }));
      writes.push(store.recordBatchRow('bex_group_b', row(p, 1, p === 7 ? null : 0.002), { key: key('bex_group_b'), usd: 0.002 }));
    }
    // The same row twice, at once and again after: recorded once.
    writes.push(store.recordBatchRow('bex_group_a', row(3, 0.5, 0.001), { key: key('bex_group_a'), usd: 0.001 }));
    const recorded = await Promise.all(writes);
    assert.equal(recorded.filter(Boolean).length, 40);
    assert.equal(await store.recordBatchRow('bex_group_b', row(0, 1, 0.002), { key: key('bex_group_b'), usd: 0.002 }), false);
    const a = await store.getBatchExecution('bex_group_a');
    const b = await store.getBatchExecution('bex_group_b');
    assert.deepEqual([a?.done, a?.failed, a?.cost_usd], [16, 4, 0.02]);
    // One row of b has an unknown cost: the run's cost is unknown from then on.
    assert.deepEqual([b?.done, b?.failed, b?.cost_usd], [20, 0, null]);
    const counters = await store.listBudgetCounters({ org_id: o.id });
    const spent = Object.fromEntries(counters.map((c) => [c.scope_id, c.spent_usd]));
    assert.deepEqual(spent, { bex_group_a: 0.02, bex_group_b: 0.04 });
  });

  it('appends logs written at once, and refuses a taken id alone', async () => {
    const o = org();
    const logs = Array.from({ length: 30 }, () => log(o.id, { batch_execution_id: 'bex_group_logs' }));
    await store.appendExecutionLog(logs[0]);
    const outcomes = await Promise.all(
      [...logs, logs[0], logs[5]].map((l) =>
        store.appendExecutionLog(l).then(
          () => 'stored',
          (err) => (err instanceof StoreConflictError ? `taken ${err.reason.kind}` : String(err)),
        ),
      ),
    );
    assert.deepEqual(outcomes, ['taken id_taken', ...Array(29).fill('stored'), 'taken id_taken', 'taken id_taken']);
    for (const l of logs) assert.equal((await store.getExecutionLog(l.id))?.id, l.id);
  });

  it('writes the logs and rows finishing at once in shared statements, each write with its own outcome', async () => {
    const o = org();
    await batch('bex_group_mixed', o.id);
    // The store's own writer over a connection whose statements are seen.
    const db = new PgConnection({ connectionString: store.url, migrate: false });
    const sent: string[] = [];
    const write = db.write.bind(db);
    db.write = (sql, params, conflict) => (sent.push(sql), write(sql, params, conflict));
    const writes = batchWrites(db);
    try {
      const logs = Array.from({ length: 12 }, () => log(o.id, { batch_execution_id: 'bex_group_mixed' }));
      await writes.appendLog(logs[0]);
      assert.equal(await writes.recordRow({ batchId: 'bex_group_mixed', row: row(0, 1, 0.001) }), true);
      const answers: Array<Promise<string>> = [];
      for (let p = 0; p < 12; p++) {
        answers.push(
          writes.appendLog(logs[p]).then(
            () => 'stored',
            (err) => (err instanceof StoreConflictError ? 'taken' : String(err)),
          ),
        );
        answers.push(writes.recordRow({ batchId: 'bex_group_mixed', row: row(p, 0.5, 0.001) }).then((inserted) => (inserted ? 'recorded' : 'again')));
      }
      const expected = ['taken', 'again', ...Array.from({ length: 11 }, () => ['stored', 'recorded']).flat()];
      assert.deepEqual(await Promise.all(answers), expected);
      assert.ok(
        sent.some((sql) => sql.startsWith('WITH logs AS')),
        'a statement carried logs and rows together',
      );
      const b = await store.getBatchExecution('bex_group_mixed');
      assert.deepEqual([b?.done, b?.failed, b?.cost_usd], [12, 0, 0.012]);
      for (const l of logs) assert.equal((await store.getExecutionLog(l.id))?.id, l.id);
    } finally {
      await db.close();
    }
  });
});
