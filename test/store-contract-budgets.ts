// The Store contract for budgets (room h-cost, src/budgets/): a reservation is taken only while
// spent + reserved is below the cap (so a counter exactly at its cap refuses), settling moves a
// reservation into spent, caps are set and removed per scope, and counters are listed per org and
// period. Concurrent reservations never pass the cap together by more than one.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newId } from '../src/ids.ts';
import type { BudgetKey, Store } from '../src/store/types.ts';
import { batch, row } from './store-contract-batches.ts';

const key = (org_id: string, over: Partial<BudgetKey> = {}): BudgetKey => ({ org_id, scope: 'org', scope_id: org_id, period: '2026-11-26', ...over });

export function defineBudgetContract(fresh: () => Promise<Store>): void {
  describe('budgets', () => {
    it('reserves below the cap, refuses exactly at it, and settles reservations into spent', async () => {
      const store = await fresh();
      const org = newId('org');
      const k = key(org);
      const first = await store.reserveBudget(k, 0.4, 1);
      assert.deepEqual(first, { ...k, spent_usd: 0, reserved_usd: 0.4 });
      // 0.4 reserved < 1: a second reservation is taken (it may pass the cap: one run over at most).
      assert.equal((await store.reserveBudget(k, 0.4, 1))?.reserved_usd, 0.8);
      await store.settleBudget(k, 0.4, 0.5);
      await store.settleBudget(k, 0.4, 0.5);
      const [counter] = await store.listBudgetCounters({ org_id: org });
      assert.deepEqual(counter, { ...k, spent_usd: 1, reserved_usd: 0 });
      // Exactly at the cap: refused, and nothing changes.
      assert.equal(await store.reserveBudget(k, 0.1, 1), null);
      assert.equal(await store.reserveBudget(k, 0, 1), null);
      assert.deepEqual((await store.listBudgetCounters({ org_id: org }))[0], { ...k, spent_usd: 1, reserved_usd: 0 });
      // A higher cap lets it go on; a cap of 0 refuses from the start.
      assert.ok(await store.reserveBudget(k, 0.1, 1.05));
      assert.equal(await store.reserveBudget(key(org, { scope: 'evaluator', scope_id: 'evl_1' }), 0.1, 0), null);
    });

    it('keeps counters apart by scope and period and lists them by org, period and scope', async () => {
      const store = await fresh();
      const a = newId('org');
      const b = newId('org');
      await store.settleBudget(key(a), 0, 0.25);
      await store.settleBudget(key(a, { period: '2026-11-27' }), 0, 0.5);
      await store.settleBudget(key(a, { scope: 'evaluator', scope_id: 'evl_1' }), 0, 0.125);
      await store.settleBudget(key(b), 0, 2);
      const day = await store.listBudgetCounters({ org_id: a, period: '2026-11-26' });
      assert.deepEqual(day.map((c) => [c.scope, c.scope_id, c.spent_usd]).sort(), [
        ['evaluator', 'evl_1', 0.125],
        ['org', a, 0.25],
      ]);
      const orgs = await store.listBudgetCounters({ period: '2026-11-26', scope: 'org' });
      assert.deepEqual(
        orgs
          .filter((c) => c.org_id === a || c.org_id === b)
          .map((c) => [c.org_id, c.spent_usd])
          .sort(),
        [
          [a, 0.25],
          [b, 2],
        ].sort(),
      );
    });

    it('sets, replaces and removes caps per scope', async () => {
      const store = await fresh();
      const org = newId('org');
      await store.setBudgetCap({ org_id: org, scope: 'org', scope_id: org, period: 'daily', cap_usd: 5 });
      await store.setBudgetCap({ org_id: org, scope: 'evaluator', scope_id: 'evl_1', period: 'daily', cap_usd: 1.5 });
      await store.setBudgetCap({ org_id: org, scope: 'org', scope_id: org, period: 'daily', cap_usd: 7.25 });
      const caps = await store.listBudgetCaps(org);
      assert.deepEqual(caps.map((c) => [c.scope, c.scope_id, c.period, c.cap_usd]).sort(), [
        ['evaluator', 'evl_1', 'daily', 1.5],
        ['org', org, 'daily', 7.25],
      ]);
      await store.setBudgetCap({ org_id: org, scope: 'evaluator', scope_id: 'evl_1', period: 'daily', cap_usd: null });
      assert.deepEqual(
        (await store.listBudgetCaps(org)).map((c) => c.scope),
        ['org'],
      );
      assert.deepEqual(await store.listBudgetCaps(newId('org')), []);
    });

    it('shares a caps read among the reads given the same key, and sees a cap this store sets at once', async () => {
      const store = await fresh();
      const org = newId('org');
      const reuse = { key: 'bat_1', maxAgeMs: 60_000 };
      assert.deepEqual(await store.listBudgetCaps(org, reuse), []);
      await store.setBudgetCap({ org_id: org, scope: 'batch', scope_id: 'bat_1', period: 'total', cap_usd: 2 });
      // A cap set through this store drops the read kept before it.
      assert.deepEqual(
        (await store.listBudgetCaps(org, reuse)).map((c) => [c.scope, c.cap_usd]),
        [['batch', 2]],
      );
      // A read handed out is a copy: changing it changes no later answer.
      (await store.listBudgetCaps(org, reuse))[0].cap_usd = 99;
      assert.equal((await store.listBudgetCaps(org, reuse))[0].cap_usd, 2);
    });

    it("counts a row's spend when the row is recorded, and not again for the same position", async () => {
      const store = await fresh();
      const org = newId('org');
      const b = batch(org);
      await store.createBatchExecution(b);
      const spend = { key: key(org), usd: 0.125 };
      assert.equal(await store.recordBatchRow(b.id, row(0), spend), true);
      assert.equal(await store.recordBatchRow(b.id, row(0), spend), false);
      assert.equal(await store.recordBatchRow(b.id, row(1), { key: key(org), usd: 0.25 }), true);
      assert.equal(await store.recordBatchRow(b.id, row(2), { key: key(org), usd: 0 }), true);
      assert.deepEqual(await store.listBudgetCounters({ org_id: org }), [{ ...key(org), spent_usd: 0.375, reserved_usd: 0 }]);
      assert.equal((await store.getBatchExecution(b.id))?.done, 3);
    });

    it('lets at most one concurrent reservation past the cap', async () => {
      const store = await fresh();
      const k = key(newId('org'));
      const taken = await Promise.all(Array.from({ length: 20 }, () => store.reserveBudget(k, 0.1, 0.5)));
      // 0, 0.1, ..., 0.4 are below 0.5: exactly five reservations, whatever the interleaving.
      assert.equal(taken.filter(Boolean).length, 5);
      assert.equal((await store.listBudgetCounters({ org_id: k.org_id }))[0].reserved_usd, 0.5);
    });
  });
}
