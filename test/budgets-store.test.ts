// The budgets part of the Store contract (store-contract-budgets.ts) on both stores, on its own so
// that it can be run without the whole contract suite.
import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import type { Store } from '../src/store/types.ts';
import { jsonTempDirs, openJson } from './helpers/json-store.ts';
import { openTestPostgresStore } from './helpers/postgres.ts';
import { PostgresStore } from '../src/store/postgres-store.ts';
import { defineBudgetContract } from './store-contract-budgets.ts';

const tempDir = jsonTempDirs('tribunal-budgets-');
const open: Store[] = [];
after(() => Promise.all(open.map((s) => s.close())));
const track = async (s: Promise<Store>) => (open.push(await s), open[open.length - 1]);

defineBudgetContract(() => (process.env.TRIBUNAL_TEST_STORE === 'postgres' ? track(openTestPostgresStore()) : track(openJson(tempDir()))));

it('JSON store: spend survives a close and reopen; reservations of the closed process are let go', {
  skip: process.env.TRIBUNAL_TEST_STORE === 'postgres' && 'JSON store only',
}, async () => {
  const dir = tempDir();
  const key = { org_id: 'org_x', scope: 'org' as const, scope_id: 'org_x', period: '2026-11-26' };
  const first = await openJson(dir);
  await first.reserveBudget(key, 0.5, 10);
  await first.settleBudget(key, 0, 1.25);
  await first.setBudgetCap({ org_id: 'org_x', scope: 'org', scope_id: 'org_x', period: 'daily', cap_usd: 10 });
  await first.close();
  const second = await openJson(dir);
  try {
    assert.deepEqual(await second.listBudgetCounters({ org_id: 'org_x' }), [{ ...key, spent_usd: 1.25, reserved_usd: 0 }]);
    assert.equal((await second.listBudgetCaps('org_x'))[0].cap_usd, 10);
  } finally {
    await second.close();
  }
});

it('PostgreSQL: a caps read kept for a run answers until it is maxAgeMs old; a cap set by another instance is seen then', {
  skip: process.env.TRIBUNAL_TEST_STORE !== 'postgres' && 'PostgreSQL only',
}, async () => {
  const first = await openTestPostgresStore();
  open.push(first);
  const second = new PostgresStore({ connectionString: first.url, poolMax: 2, migrate: false });
  await second.init();
  try {
    const org = 'org_reuse';
    const kept = { key: 'bat_a', maxAgeMs: 300 };
    assert.deepEqual(await first.listBudgetCaps(org, kept), []);
    await second.setBudgetCap({ org_id: org, scope: 'org', scope_id: org, period: 'daily', cap_usd: 3 });
    // The kept read answers for its run; a read without reuse, or for another run, reads afresh.
    assert.deepEqual(await first.listBudgetCaps(org, kept), []);
    assert.equal((await first.listBudgetCaps(org))[0]?.cap_usd, 3);
    assert.equal((await first.listBudgetCaps(org, { key: 'bat_b', maxAgeMs: 300 }))[0]?.cap_usd, 3);
    await new Promise((r) => setTimeout(r, 350));
    assert.equal((await first.listBudgetCaps(org, kept))[0]?.cap_usd, 3);
  } finally {
    await second.close();
  }
});
