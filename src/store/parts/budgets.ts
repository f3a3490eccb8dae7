// Store part for budgets (room h-cost, src/budgets/): cost caps and the spend counted against them.
import type { BudgetCap, BudgetCounter, BudgetKey, BudgetScope } from '../budget-types.ts';

/** How a caps read may be shared (BudgetStore.listBudgetCaps). */
export interface CapReuse {
  key: string;
  maxAgeMs: number;
}

export interface BudgetStore {
  /**
   * Atomically adds `amount` to the counter's reserved USD when spent + reserved is below `cap`
   * (the counter starts at 0); answers the counter after, or null (changing nothing) when not below.
   */
  reserveBudget(key: BudgetKey, amount: number, cap: number): Promise<BudgetCounter | null>;
  /** Atomically takes `reserved` off the counter's reservations and adds `spent` to what it spent (the counter starts at 0). */
  settleBudget(key: BudgetKey, reserved: number, spent: number): Promise<void>;
  /** Counters of one organization (or every one when org_id is absent), in one period when given. */
  listBudgetCounters(filter: { org_id?: string; period?: string; scope?: BudgetScope }): Promise<BudgetCounter[]>;
  /** Sets (or, with cap_usd null, removes) the cap of one scope. */
  setBudgetCap(cap: Omit<BudgetCap, 'cap_usd'> & { cap_usd: number | null }): Promise<void>;
  /**
   * The org's caps. With `reuse`, a copy read for the same `reuse.key` at most `reuse.maxAgeMs` ago
   * may answer, unless this process set a cap since (a batch run's rows, keyed by their run: a cap
   * set by another instance during the run applies to its rows within maxAgeMs). Without it, a read.
   */
  listBudgetCaps(orgId: string, reuse?: CapReuse): Promise<BudgetCap[]>;
}
