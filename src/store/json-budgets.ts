// The JSON store's budgets (room h-cost): two tables of db.json, "budget_caps" and "budget_counters"
// (absent in files written before them). One process owns the data directory, so a check and its
// change happen in one synchronous step: atomic without a lock. Reservations are estimates of runs in
// flight in this process: they are not kept across a restart (a run cut short never settles).
import type { BudgetStore } from './parts/budgets.ts';
import type { BudgetCap, BudgetCounter, BudgetKey } from './types.ts';

export type BudgetTables = { budget_caps: Record<string, BudgetCap>; budget_counters: Record<string, BudgetCounter> };

const counterKey = (k: BudgetKey) => JSON.stringify([k.org_id, k.scope, k.scope_id, k.period]);
const capKey = (c: Pick<BudgetCap, 'org_id' | 'scope' | 'scope_id'>) => JSON.stringify([c.org_id, c.scope, c.scope_id]);
const round = (usd: number) => Math.round(usd * 1e9) / 1e9;

/** At load: reservations of a process that is gone are let go. */
export function forgetReservations(tables: BudgetTables): void {
  for (const c of Object.values(tables.budget_counters)) c.reserved_usd = 0;
}

/** The budget part of the JSON store, over its tables (read late: init loads db.json) and the commit. */
export function jsonBudgets(tables: () => BudgetTables, save: () => Promise<void>): BudgetStore {
  const counter = (key: BudgetKey): BudgetCounter =>
    (tables().budget_counters[counterKey(key)] ??= { org_id: key.org_id, scope: key.scope, scope_id: key.scope_id, period: key.period, spent_usd: 0, reserved_usd: 0 });

  let saving: NodeJS.Timeout | undefined;
  /**
   * Spend is written with the next save of db.json, at most a second later, not by every run: a run
   * rewriting the whole file would cost more than the run's own work. A crash may lose up to a second
   * of counted spend (close() writes db.json, counters included).
   */
  const saveSoon = () => {
    if (saving) return;
    saving = setTimeout(() => {
      saving = undefined;
      save().catch(() => {}); // the store closed meanwhile: close() wrote the counters
    }, 1000);
    saving.unref();
  };

  return {
    async reserveBudget(key, amount, cap) {
      const c = counter(key);
      if (!(c.spent_usd + c.reserved_usd < cap)) return null;
      c.reserved_usd = round(c.reserved_usd + amount);
      return { ...c };
    },
    async settleBudget(key, reserved, spent) {
      const c = counter(key);
      c.reserved_usd = Math.max(0, round(c.reserved_usd - reserved));
      c.spent_usd = round(c.spent_usd + spent);
      if (spent !== 0) saveSoon();
    },
    async listBudgetCounters(f) {
      return Object.values(tables().budget_counters)
        .filter((c) => (f.org_id === undefined || c.org_id === f.org_id) && (f.period === undefined || c.period === f.period) && (f.scope === undefined || c.scope === f.scope))
        .map((c) => ({ ...c }));
    },
    async setBudgetCap(cap) {
      const table = tables().budget_caps;
      if (cap.cap_usd === null) delete table[capKey(cap)];
      else table[capKey(cap)] = { ...cap, cap_usd: cap.cap_usd };
      await save();
    },
    async listBudgetCaps(orgId) {
      return Object.values(tables().budget_caps)
        .filter((c) => c.org_id === orgId)
        .map((c) => ({ ...c }));
    },
  };
}
