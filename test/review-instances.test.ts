// Two instances on one PostgreSQL database (two stores, two connection pools) hand out review
// leases together: 20 reviewers racing over both, every item goes to exactly annotators_per_item
// different people and nobody gets one item twice; and the route's one-round-trip next (migration
// 025's review_next): organizations, expiry, the lease given back to its holder. PostgreSQL only
// (TRIBUNAL_TEST_STORE=postgres).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { reviewId } from '../src/review/queues.ts';
import { reviewStore } from '../src/review/store.ts';
import { reviewQueueRecord } from './helpers/review.ts';

const PG = process.env.TRIBUNAL_TEST_STORE === 'postgres';

describe('review leases on two instances', () => {
  it('each lease is handed out exactly once across two instances', { skip: !PG && 'PostgreSQL only (TRIBUNAL_TEST_STORE=postgres)' }, async () => {
    const { openTestPostgresStore } = await import('./helpers/postgres.ts');
    const { PostgresStore } = await import('../src/store/postgres-store.ts');
    const one = await openTestPostgresStore({ poolMax: 6 });
    const two = new PostgresStore({ connectionString: one.url, poolMax: 6 });
    await two.init();
    try {
      const [a, b] = [reviewStore(one), reviewStore(two)];
      const now = () => new Date().toISOString();
      const q = reviewQueueRecord('race');
      await a.createQueue(q);
      const ITEMS = 40;
      await b.addItems(
        q.id,
        Array.from({ length: ITEMS }, (_, i) => ({
          id: reviewId('rvi'),
          queue_id: q.id,
          execution_log_id: `log_${i}`,
          source: 'manual',
          done: 0,
          adjudicated_at: null,
          created_at: now(),
        })),
      );
      const got: Array<[string, string]> = [];
      const reviewers = Array.from({ length: 20 }, (_, r) => `key_${r}`);
      await Promise.all(
        reviewers.map(async (who, r) => {
          const s = r % 2 ? a : b;
          for (;;) {
            const lease = await s.next(q, who, now(), new Date(Date.now() + 600_000).toISOString());
            if (!lease) return;
            got.push([lease.item.id, who]);
            // Half of them finish at once; the rest keep their lease (it still counts).
            if (got.length % 2) {
              const label = {
                id: reviewId('rvl'),
                queue_id: q.id,
                item_id: lease.item.id,
                execution_log_id: lease.item.execution_log_id,
                evaluator_id: 'evl_x',
                annotator_id: who,
                score: 0.5,
                note: null,
                created_at: now(),
              };
              assert.equal(await s.submit(q, lease.item.id, who, [label], now()), 'ok');
            }
          }
        }),
      );
      const perItem = new Map<string, Set<string>>();
      for (const [item, who] of got) {
        const people = perItem.get(item) ?? new Set();
        assert.ok(!people.has(who), `${item} leased twice to ${who}`);
        perItem.set(item, people.add(who));
      }
      assert.equal(got.length, ITEMS * 2, 'every item went to exactly two people, no more');
      assert.equal(perItem.size, ITEMS);
      for (const people of perItem.values()) assert.equal(people.size, 2);
    } finally {
      await two.close();
      await one.close();
    }
  });

  it('next in one round trip: the queue of another organization is refused, an expired lease goes back (to its holder too), the log comes along', {
    skip: !PG && 'PostgreSQL only (TRIBUNAL_TEST_STORE=postgres)',
  }, async () => {
    const { openTestPostgresStore } = await import('./helpers/postgres.ts');
    const store = await openTestPostgresStore({ poolMax: 2 });
    try {
      const rs = reviewStore(store);
      const t0 = Date.parse('2026-11-26T08:00:00.000Z');
      const at = (s: number) => new Date(t0 + s * 1000).toISOString();
      const q = { ...reviewQueueRecord('one trip'), org_id: 'org_a', annotators_per_item: 1, lease_seconds: 30, created_at: at(0), updated_at: at(0) };
      await rs.createQueue(q);
      const [item] = await rs.addItems(q.id, [
        { id: reviewId('rvi'), queue_id: q.id, execution_log_id: 'log_missing', source: 'manual', done: 0, adjudicated_at: null, created_at: at(0) },
      ]);
      assert.equal(await rs.nextInQueue(q.id, 'org_b', 'key_1', at(0)), null, "another organization's queue is not found");
      assert.equal(await rs.nextInQueue('rvq_none', 'org_a', 'key_1', at(0)), null);

      const first = (await rs.nextInQueue(q.id, 'org_a', 'key_1', at(0)))!;
      assert.equal(first.queue.name, 'one trip');
      assert.equal(first.got?.item.id, item.id);
      assert.equal(first.got?.lease.expires_at, at(30), "the queue's lease_seconds");
      assert.equal(first.log, null, 'a log that does not exist comes back as null');
      assert.equal((await rs.nextInQueue(q.id, 'org_a', 'key_2', at(29)))?.got, null, 'leased to one person, as asked');
      assert.equal((await rs.nextInQueue(q.id, 'org_a', 'key_1', at(29)))?.got, null, 'never twice to one person while the lease holds');

      // Expired: nobody holds it, and its former holder may take it back (the lease row is reused).
      const again = (await rs.nextInQueue(q.id, 'org_a', 'key_1', at(31)))!;
      assert.equal(again.got?.item.id, item.id);
      assert.equal(again.got?.lease.expires_at, at(61));
      assert.equal(again.got?.lease.created_at, at(0), 'the same lease, renewed');
      assert.equal((await rs.nextInQueue(q.id, 'org_a', 'key_2', at(32)))?.got, null);
      assert.deepEqual(await rs.counts(q.id, 1, at(32)), { queued: 0, leased: 1, done: 0, skipped: 0 });
    } finally {
      await store.close();
    }
  });
});
