// Budgets (room h-cost): the records of the Store's budget methods (types.ts), kept apart so types.ts stays short.
/** What a budget counts: an organization, one of its evaluators, or a batch run. */
export type BudgetScope = 'org' | 'evaluator' | 'batch';
/** One counter: a scope in a period (a UTC day `YYYY-MM-DD`, or `total`). */
export interface BudgetKey {
  org_id: string;
  scope: BudgetScope;
  scope_id: string;
  period: string;
}
/** What a run spent on one counter, added with the batch row that records the run (Store.recordBatchRow). */
export interface RowSpend {
  key: BudgetKey;
  usd: number;
}
export interface BudgetCounter extends BudgetKey {
  spent_usd: number;
  /** Estimates of runs in flight, taken off when each settles. */
  reserved_usd: number;
}
export interface BudgetCap {
  org_id: string;
  scope: BudgetScope;
  scope_id: string;
  /** daily: per UTC day; total: over the scope's life (a batch run). */
  period: 'daily' | 'total';
  cap_usd: number;
}
