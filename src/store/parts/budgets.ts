// Store part for budgets (room h-cost, src/budgets/): cost caps and the spend counted against them.
import type { BudgetCap, BudgetCounter, BudgetKey, BudgetScope } from '../budget-types.ts';

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
  listBudgetCaps(orgId: string): Promise<BudgetCap[]>;
}
