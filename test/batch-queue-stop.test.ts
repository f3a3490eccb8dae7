// The pg-boss batch queue's stop (src/batch/pg-boss-db.ts, pg-jobs.ts): once it answers, nothing of
// the queue reaches the store's pool, which the server closes next. pg-boss sends a handler's
// `complete` without awaiting it, so a job still running at shutdown used to reach the closed pool as
// an unhandled rejection (a CI run of budgets-rest on PostgreSQL). The gate alone runs on every pass;
// the queue over a real database only with TRIBUNAL_TEST_STORE=postgres.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { PgBossDb } from '../src/batch/pg-boss-db.ts';
import { PgBatchJobs } from '../src/batch/pg-jobs.ts';
import { PostgresStore } from '../src/store/postgres-store.ts';
import type { Chunk } from '../src/batch/work.ts';

const PG = process.env.TRIBUNAL_TEST_STORE === 'postgres';

/** A pool whose statements answer when the test says. */
function heldPool() {
  const sent: Array<{ text: string; answer: (rows: unknown[]) => void }> = [];
  const pool = {
    query: ((text: string) => new Promise((resolve) => sent.push({ text, answer: (rows) => resolve({ rows, rowCount: rows.length }) }))) as never,
  };
  return { pool, sent };
}

describe('the batch queue database gate', () => {
  it('waits for a statement on its way and for what starts when it ends, then sends nothing more', async () => {
    const { pool, sent } = heldPool();
    const db = new PgBossDb(pool);
    // A fetch on its way; when it answers, its job's handler runs and ends with a `complete` not awaited (as pg-boss does).
    let completed: unknown;
    const fetch = db.executeSql('fetch');
    void fetch.then(() => db.hold(Promise.resolve()).then(() => void db.executeSql('complete').then((r) => (completed = r))));
    let closedAfter = -1;
    const closing = db.close(Date.now() + 5000).then((left) => (closedAfter = left));
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(closedAfter, -1, 'close waits for the fetch');
    sent[0].answer([{ id: 'job' }]);
    for (const deadline = Date.now() + 2000; sent.length < 2; ) {
      assert.ok(Date.now() < deadline, 'the complete was sent');
      await new Promise((r) => setImmediate(r));
    }
    assert.equal(sent[1].text, 'complete');
    assert.equal(closedAfter, -1, 'close waits for the complete started after the fetch');
    sent[1].answer([{ id: 'job' }]);
    await closing;
    assert.equal(closedAfter, 0);
    assert.deepEqual((completed as { rows: unknown[] }).rows, [{ id: 'job' }]);
    // Closed: a statement is not sent, and answers no rows.
    assert.deepEqual(await db.executeSql('fetch'), { rowCount: 0 });
    assert.equal(sent.length, 2);
  });

  it('closes at the deadline with work still running, which then sends nothing', async () => {
    const { pool, sent } = heldPool();
    const db = new PgBossDb(pool);
    let finish!: () => void;
    const handler = db.hold(new Promise<void>((resolve) => (finish = resolve)));
    const started = Date.now();
    assert.equal(await db.close(Date.now() + 100), 1);
    assert.ok(Date.now() - started >= 95, 'it waited until the deadline');
    finish();
    await handler;
    assert.deepEqual(await db.executeSql('complete'), { rowCount: 0 });
    assert.equal(sent.length, 0);
  });
});

describe('the pg-boss queue stopped with a job still running', { skip: PG ? false : 'PostgreSQL only (TRIBUNAL_TEST_STORE=postgres)' }, () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => {});
  });

  it('leaves the closed pool alone when the job ends, and the job is taken up again by the next instance', async () => {
    const { createTestSchema } = await import('./helpers/postgres.ts');
    const schema = await createTestSchema('trb_qstop');
    cleanups.push(() => schema.drop());
    const open = async () => {
      const s = new PostgresStore({ connectionString: schema.url, poolMax: 4 });
      await s.init();
      return s;
    };
    const unhandled: unknown[] = [];
    const onUnhandled = (err: unknown) => unhandled.push(err);
    process.on('unhandledRejection', onUnhandled);
    cleanups.push(async () => process.off('unhandledRejection', onUnhandled));

    const chunk: Chunk = { batch_id: 'bex_stop', first: 0, rows: [{ item_id: null, index: 0, item: { request: 'q', response: 'a' } }] };
    const first = await open();
    let started!: () => void;
    const handlerStarted = new Promise<void>((r) => (started = r));
    let release!: () => void;
    const jobs = await PgBatchJobs.start(first, {
      leaseMs: 30_000,
      workers: 1,
      onPlan: async () => {},
      onChunk: () => {
        started();
        return new Promise<void>((r) => (release = r));
      },
    });
    await jobs.sendChunk(chunk, 'org_stop', 0);
    await handlerStarted;
    // The server's shutdown: the queue stops (grace 100 ms, which the job outlives), then the store closes.
    await jobs.stop(100);
    await first.close();
    // The job ends after the pool has closed: pg-boss sends its `complete`, which must not reach the pool.
    release();
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(unhandled, []);

    // The next instance takes the job up again (pg-boss failed it at shutdown; retried after 1 s).
    const second = await open();
    cleanups.push(() => second.close());
    let taken!: (c: Chunk) => void;
    const again = new Promise<Chunk>((resolve) => (taken = resolve));
    const next = await PgBatchJobs.start(second, { leaseMs: 30_000, workers: 1, onPlan: async () => {}, onChunk: async (c) => taken(c) });
    cleanups.push(() => next.stop(100));
    const timeUp = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the job was not taken up again')), 8000).unref());
    assert.deepEqual((await Promise.race([again, timeUp])).rows, chunk.rows);
  });
});
