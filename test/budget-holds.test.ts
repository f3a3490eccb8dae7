// Budget reservations of a server gone (issue 32, PostgreSQL): each process holds its reservations
// under a lease it renews while it lives. A process that stops without settling (kill -9; here a store
// closed mid-run, which renews nothing more, as a dead process) has its hold expire, and another
// instance takes its amount off the counter, so the cap is not blocked until the day ends. A live
// process's holds are renewed and never let go. PostgreSQL only (the JSON store lets go at load).
import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import { PostgresStore } from '../src/store/postgres-store.ts';
import type { BudgetKey } from '../src/store/types.ts';

const PG = process.env.TRIBUNAL_TEST_STORE === 'postgres';
const LEASE = 300;
const cleanups: Array<() => Promise<unknown>> = [];
after(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => {});
});

it('a dead process lets go of its reservation after the lease; a live one keeps its own', { skip: PG ? false : 'PostgreSQL only (TRIBUNAL_TEST_STORE=postgres)' }, async () => {
  const { createTestSchema } = await import('./helpers/postgres.ts');
  const schema = await createTestSchema('trb_holds');
  cleanups.push(() => schema.drop());
  const open = async () => {
    const s = new PostgresStore({ connectionString: schema.url, poolMax: 2, budgetLeaseMs: LEASE });
    await s.init();
    return s;
  };
  const dead = await open();
  const live = await open();
  cleanups.push(() => live.close());
  const key: BudgetKey = { org_id: 'org_holds', scope: 'org', scope_id: 'org_holds', period: '2026-11-26' };
  const reserved = async () => (await live.listBudgetCounters({ org_id: 'org_holds' }))[0].reserved_usd;

  assert.ok(await dead.reserveBudget(key, 1, 1), 'the first run is admitted');
  await dead.close(); // never settles: a server killed mid-run
  assert.equal(await live.reserveBudget(key, 0.25, 1), null, 'the cap is held by the dead run for now');

  // After the lease (and a renewal period of the live process) the dead hold is gone.
  for (const deadline = Date.now() + 5000; (await reserved()) !== 0; ) {
    if (Date.now() > deadline) throw new Error(`still reserved: ${await reserved()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.ok(await live.reserveBudget(key, 0.25, 1), 'admitted once the dead reservation is let go');
  // The live process's own hold is renewed: several leases later it is still reserved.
  await new Promise((r) => setTimeout(r, LEASE * 4));
  assert.equal(await reserved(), 0.25);
  await live.settleBudget(key, 0.25, 0.1);
  const [c] = await live.listBudgetCounters({ org_id: 'org_holds' });
  assert.deepEqual([c.spent_usd, c.reserved_usd], [0.1, 0]);
});
