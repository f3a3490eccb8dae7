// What `next` on PostgreSQL may skip, and what it must keep (issue 31): a lease commits without
// waiting for the WAL flush, so a crash may forget it; a submit commits durably. A forgotten lease
// only returns its item to the queue, and its holder's submit is refused, so no item gets more
// annotations than annotators_per_item. And the candidate scan stays on the open items, and a submit
// on the leases' primary key, whatever the statistics say (migration 030), and `next` reads the
// item's log by its primary key. PostgreSQL only (TRIBUNAL_TEST_STORE=postgres).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type pg from 'pg';
import { NEXT_STATEMENT } from '../src/review/pg-review.ts';
import { reviewId } from '../src/review/queues.ts';
import { reviewStore } from '../src/review/store.ts';
import type { ReviewItemRecord, ReviewLabelRecord } from '../src/review/types.ts';
import { reviewQueueRecord } from './helpers/review.ts';

const PG = process.env.TRIBUNAL_TEST_STORE === 'postgres';
const skip = !PG && 'PostgreSQL only (TRIBUNAL_TEST_STORE=postgres)';
const now = () => new Date().toISOString();
const later = () => new Date(Date.now() + 600_000).toISOString();

const items = (queueId: string, n: number): ReviewItemRecord[] =>
  Array.from({ length: n }, (_, i) => ({
    id: reviewId('rvi'),
    queue_id: queueId,
    execution_log_id: `log_${i}`,
    source: 'manual',
    done: 0,
    adjudicated_at: null,
    created_at: now(),
  }));

const label = (queueId: string, item: ReviewItemRecord, who: string): ReviewLabelRecord => ({
  id: reviewId('rvl'),
  queue_id: queueId,
  item_id: item.id,
  execution_log_id: item.execution_log_id,
  evaluator_id: 'evl_x',
  annotator_id: who,
  score: 0.5,
  note: null,
  created_at: now(),
});

async function withStore(fn: (store: import('../src/store/postgres-store.ts').PostgresStore) => Promise<void>) {
  const { openTestPostgresStore } = await import('./helpers/postgres.ts');
  const store = await openTestPostgresStore({ poolMax: 2 });
  try {
    await fn(store);
  } finally {
    await store.close();
  }
}

/** A queue of one person per item, in the store's review room. */
async function queueOfOne(store: import('../src/store/postgres-store.ts').PostgresStore, name: string) {
  const rs = reviewStore(store);
  const q = { ...reviewQueueRecord(name), annotators_per_item: 1 };
  await rs.createQueue(q);
  return { rs, q };
}

/** The plans auto_explain reports (as notices) for the statements `fn` runs on `client`, nested ones too. */
async function explained(client: pg.PoolClient, fn: () => Promise<void>): Promise<string[]> {
  const plans: string[] = [];
  const onNotice = (n: { message?: string }) => plans.push(n.message ?? '');
  await client.query("LOAD 'auto_explain'");
  for (const [name, value] of Object.entries({ log_min_duration: '0', log_nested_statements: 'on', log_level: 'notice' })) {
    await client.query(`SET auto_explain.${name} = '${value}'`);
  }
  client.on('notice', onNotice);
  try {
    await fn();
  } finally {
    client.off('notice', onNotice);
    await client.query('RESET auto_explain.log_min_duration');
  }
  return plans;
}

describe('review leases: soft state, durable annotations', () => {
  it('a lease a crash forgot only returns the item: its holder is refused and nobody counts twice', { skip }, () =>
    withStore(async (store) => {
      const rs = reviewStore(store);
      const q = reviewQueueRecord('crash'); // two people per item
      await rs.createQueue(q);
      const [item] = await rs.addItems(q.id, items(q.id, 1));
      assert.equal((await rs.next(q, 'key_a', now(), later()))?.item.id, item.id);
      // What a crash leaves of a lease whose commit had not reached the disk: no row at all. (WAL is
      // replayed in order, so a later durable commit, such as a submit that saw this lease, would
      // have brought the lease's commit to disk with it: only the last leases can be lost.)
      await store.sql('DELETE FROM review_leases WHERE item_id = $1 AND annotator_id = $2', [item.id, 'key_a']);
      for (const who of ['key_b', 'key_c']) {
        assert.equal((await rs.next(q, who, now(), later()))?.item.id, item.id, `${who} gets the item the lost lease freed`);
        assert.equal(await rs.submit(q, item.id, who, [label(q.id, item, who)], now()), 'ok');
      }
      assert.equal(await rs.submit(q, item.id, 'key_a', [label(q.id, item, 'key_a')], now()), 'not_leased', 'the lost lease cannot be submitted');
      assert.equal(await rs.next(q, 'key_a', now(), later()), null, 'and the item, done by two, is not handed out again');
      const annotators = (await rs.listLabels(q.id)).map((l) => l.annotator_id).sort();
      assert.deepEqual(annotators, ['key_b', 'key_c'], 'two annotations, as asked');
      assert.equal((await rs.getItem(q.id, item.id))?.done, 2);
    }),
  );

  it('the lease transaction commits without waiting for the flush, the submit waits, and neither setting stays on the connection', { skip }, () =>
    withStore(async (store) => {
      const { rs, q } = await queueOfOne(store, 'durability');
      const [item] = await rs.addItems(q.id, items(q.id, 1));
      const client: pg.PoolClient = await store.pool.connect();
      const setting = async () => (await client.query('SHOW synchronous_commit')).rows[0].synchronous_commit as string;
      try {
        await client.query('BEGIN');
        const { rows } = await client.query('SELECT * FROM review_next($1, NULL, $2, now(), NULL)', [q.id, 'key_a']);
        assert.equal(rows[0].item_id, item.id);
        assert.equal(await setting(), 'off', 'the lease commits asynchronously');
        await client.query('COMMIT');
        assert.equal(await setting(), 'on', 'only for its own transaction');
        await client.query('BEGIN');
        const labels = JSON.stringify([label(q.id, item, 'key_a')]);
        const submitted = await client.query('SELECT review_submit($1, $2, $3, now(), 1, $4) AS outcome', [q.id, item.id, 'key_a', labels]);
        assert.equal(submitted.rows[0].outcome, 'ok');
        assert.equal(await setting(), 'on', 'the submit commits durably');
        await client.query('COMMIT');
      } finally {
        client.release();
      }
      assert.equal((await rs.getItem(q.id, item.id))?.done, 1);
    }),
  );

  it("the candidate scan reads the open items' index, the only one that gives its order", { skip }, () =>
    withStore(async (store) => {
      const { rs, q } = await queueOfOne(store, 'plan');
      await rs.addItems(q.id, items(q.id, 400));
      await store.sql('ANALYZE review_items');
      // Worked after it was analyzed: most items done, as submits leave them (the statistics lag).
      await store.sql('UPDATE review_items SET done = 1, open = false WHERE id IN (SELECT id FROM review_items WHERE queue_id = $1 ORDER BY id LIMIT 300)', [q.id]);
      const client: pg.PoolClient = await store.pool.connect();
      let plans: string[];
      try {
        // Without `open`, no index gives the candidate's order, whatever the costs: the primary key is
        // not in that order, and review_items_by_queue (migration 030: id descending) is not either,
        // so its rows must be sorted (main's review_items_by_queue gave that order, and tied with the
        // open items' index in the function's generic plan).
        await client.query('SET plan_cache_mode = force_generic_plan');
        await client.query('PREPARE ordered(text) AS SELECT id FROM review_items WHERE queue_id >= $1 AND queue_id <= $1 ORDER BY queue_id, id LIMIT 1');
        const ordered = (await client.query(`EXPLAIN EXECUTE ordered('${q.id}')`)).rows.map((r) => r['QUERY PLAN']).join('\n');
        assert.match(ordered, /Sort Key: queue_id/, ordered);
        await client.query('DEALLOCATE ordered');
        await client.query('RESET plan_cache_mode');
        // And the function's own plans, custom then generic (they turn generic after five calls).
        plans = await explained(client, async () => {
          for (let i = 0; i < 10; i++) await client.query('SELECT * FROM review_next($1, NULL, $2, now(), NULL)', [q.id, `key_${i}`]);
        });
      } finally {
        client.release(true);
      }
      const candidates = plans.filter((p) => p.includes('SKIP LOCKED'));
      assert.equal(candidates.length, 10, 'one candidate plan per call');
      for (const plan of candidates) {
        assert.match(plan, /review_items_open/);
        assert.doesNotMatch(plan, /review_items_by_queue|review_items_pkey on review_items i/);
      }
    }),
  );

  it("next reads the item's log by its primary key, however few logs there are", { skip }, () =>
    withStore(async (store) => {
      const { rs, q } = await queueOfOne(store, 'log lookup');
      // Few short logs (a new deployment): as a plain join against the 1,000 rows PostgreSQL assumes
      // of review_next, reading execution_logs whole (a hash join, or a merge join walking its primary
      // key up to the item's log) looked cheaper than one lookup.
      await store.sql(
        `INSERT INTO execution_logs (id, org_id, type, project_id, response, tags, evaluator_results, evaluator_ids, latency_ms, created_at)
         SELECT 'log_' || g, $1, 'judge', 'prj_x', 'r', '{}', '[]', '{}', 1, now() FROM generate_series(0, 2999) g`,
        [q.org_id],
      );
      await rs.addItems(q.id, items(q.id, 3000));
      await store.sql('ANALYZE execution_logs');
      await store.sql('ANALYZE review_items');
      const client: pg.PoolClient = await store.pool.connect();
      let plans: string[];
      try {
        // Prepared once and run seven times: custom plans, then the generic one.
        plans = await explained(client, async () => {
          for (let i = 0; i < 7; i++) {
            const { rows } = await client.query({ ...NEXT_STATEMENT, values: [q.id, q.org_id, `key_${i}`, now()] });
            assert.equal(rows[0].id, rows[0].item_log_id, "the answer carries the leased item's log");
          }
        });
      } finally {
        client.release(true);
      }
      const outer = plans.filter((p) => p.includes('Function Scan on review_next'));
      assert.equal(outer.length, 7, 'one plan per call');
      for (const plan of outer) {
        assert.match(plan, /Index Scan using execution_logs_pkey on execution_logs/, plan);
        assert.doesNotMatch(plan, /Hash|Merge|Seq Scan/, plan);
      }
    }),
  );

  it('a submit looks its lease up on the primary key, even when the leases were analyzed while there were none', { skip }, () =>
    withStore(async (store) => {
      const { rs, q } = await queueOfOne(store, 'lookup');
      const added = await rs.addItems(q.id, items(q.id, 5000));
      await store.sql('ANALYZE review_leases'); // empty, as in a new database
      // Leases since (done), all but the last 8 items, which this test leases and submits.
      const open = added.slice(-8).map((i) => i.id);
      await store.sql(
        `WITH done AS (UPDATE review_items SET done = 1, open = false WHERE queue_id = $1 AND id <> ALL ($2::text[]) RETURNING id)
         INSERT INTO review_leases SELECT id, 'key_past', $1, 'done', now(), NULL, now(), now() FROM done`,
        [q.id, open],
      );
      const client: pg.PoolClient = await store.pool.connect();
      let plans: string[];
      try {
        // The function's plans turn generic after five calls: eight submits see both kinds.
        plans = await explained(client, async () => {
          for (let i = 0; i < 8; i++) {
            const who = `key_${i}`;
            const leased = await client.query('SELECT * FROM review_next($1, NULL, $2, now(), NULL)', [q.id, who]);
            const item = added.find((x) => x.id === leased.rows[0].item_id)!;
            const { rows } = await client.query('SELECT review_submit($1, $2, $3, now(), 1, $4) AS outcome', [q.id, item.id, who, JSON.stringify([label(q.id, item, who)])]);
            assert.equal(rows[0].outcome, 'ok');
          }
        });
      } finally {
        client.release(true);
      }
      const lookups = plans.filter((p) => /FROM review_leases l WHERE l.item_id = p_item|UPDATE review_leases SET state/.test(p));
      assert.equal(lookups.length, 16, 'the check and the completion of each submit');
      for (const plan of lookups) {
        assert.match(plan, /review_leases_pkey/, plan);
        assert.doesNotMatch(plan, /review_leases_by_queue/, plan);
      }
    }),
  );
});
