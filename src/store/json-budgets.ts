// The JSON store's budgets (room h-cost): two tables of db.json, "budget_caps" and "budget_counters"
// (absent in files written before them). One process owns the data directory, so a check and its
// change happen in one synchronous step: atomic without a lock. Reservations are estimates of runs in
// flight in this process: they are not kept across a restart (a run cut short never settles).
import type { BudgetCap, BudgetCounter, BudgetKey, BudgetScope } from './types.ts';

export type BudgetTables = { budget_caps: Record<string, BudgetCap>; budget_counters: Record<string, BudgetCounter> };

const counterKey = (k: BudgetKey) => JSON.stringify([k.org_id, k.scope, k.scope_id, k.period]);
const capKey = (c: Pick<BudgetCap, 'org_id' | 'scope' | 'scope_id'>) => JSON.stringify([c.org_id, c.scope, c.scope_id]);
const round = (usd: number) => Math.round(usd * 1e9) / 1e9;

export class JsonBudgetTables {
  constructor(
    private readonly tables: () => BudgetTables,
    private readonly save: () => Promise<void>,
  ) {}

  /** At load: reservations of a process that is gone are let go. */
  static forget(tables: BudgetTables): void {
    for (const c of Object.values(tables.budget_counters)) c.reserved_usd = 0;
  }

  private counter(key: BudgetKey): BudgetCounter {
    const table = this.tables().budget_counters;
    return (table[counterKey(key)] ??= { org_id: key.org_id, scope: key.scope, scope_id: key.scope_id, period: key.period, spent_usd: 0, reserved_usd: 0 });
  }

  async reserve(key: BudgetKey, amount: number, cap: number): Promise<BudgetCounter | null> {
    const c = this.counter(key);
    if (!(c.spent_usd + c.reserved_usd < cap)) return null;
    c.reserved_usd = round(c.reserved_usd + amount);
    return { ...c };
  }

  async settle(key: BudgetKey, reserved: number, spent: number): Promise<void> {
    const c = this.counter(key);
    c.reserved_usd = Math.max(0, round(c.reserved_usd - reserved));
    c.spent_usd = round(c.spent_usd + spent);
    if (spent !== 0) this.saveSoon();
  }

  private saving?: NodeJS.Timeout;
  /**
   * Spend is written with the next save of db.json, at most a second later, not by every run: a run
   * rewriting the whole file would cost more than the run's own work. A crash may lose up to a second
   * of counted spend (close() writes db.json, counters included).
   */
  private saveSoon(): void {
    if (this.saving) return;
    this.saving = setTimeout(() => {
      this.saving = undefined;
      this.save().catch(() => {}); // the store closed meanwhile: close() wrote the counters
    }, 1000);
    this.saving.unref();
  }

  async list(f: { org_id?: string; period?: string; scope?: BudgetScope }): Promise<BudgetCounter[]> {
    return Object.values(this.tables().budget_counters)
      .filter((c) => (f.org_id === undefined || c.org_id === f.org_id) && (f.period === undefined || c.period === f.period) && (f.scope === undefined || c.scope === f.scope))
      .map((c) => ({ ...c }));
  }

  async setCap(cap: Omit<BudgetCap, 'cap_usd'> & { cap_usd: number | null }): Promise<void> {
    const table = this.tables().budget_caps;
    if (cap.cap_usd === null) delete table[capKey(cap)];
    else table[capKey(cap)] = { ...cap, cap_usd: cap.cap_usd };
    await this.save();
  }

  async caps(orgId: string): Promise<BudgetCap[]> {
    return Object.values(this.tables().budget_caps)
      .filter((c) => c.org_id === orgId)
      .map((c) => ({ ...c }));
  }

  purgeOrganization(orgId: string): void {
    const t = this.tables();
    for (const [k, c] of Object.entries(t.budget_caps)) if (c.org_id === orgId) delete t.budget_caps[k];
    for (const [k, c] of Object.entries(t.budget_counters)) if (c.org_id === orgId) delete t.budget_counters[k];
  }
}
