// The PostgreSQL store's budgets (room h-cost, migrations/017_budgets.sql). A reservation is one
// conditional UPDATE ... WHERE spent + reserved < cap RETURNING: the row lock makes concurrent
// reservations from any number of instances take turns, so none passes a check another has spent.
import type { BudgetCap, BudgetCounter, BudgetKey, BudgetScope } from '../types.ts';

type Rows = { rows: Array<Record<string, unknown>> };
export type PgRun = (sql: string, params: unknown[]) => Promise<Rows>;

const counterFromRow = (r: Record<string, unknown>): BudgetCounter => ({
  org_id: r.org_id as string,
  scope: r.scope as BudgetScope,
  scope_id: r.scope_id as string,
  period: r.period as string,
  spent_usd: Number(r.spent_usd),
  reserved_usd: Number(r.reserved_usd),
});
const keyParams = (k: BudgetKey) => [k.org_id, k.scope, k.scope_id, k.period];
const ENSURE = 'INSERT INTO budget_counters (org_id, scope, scope_id, period) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING';

export async function pgReserveBudget(run: PgRun, key: BudgetKey, amount: number, cap: number): Promise<BudgetCounter | null> {
  await run(ENSURE, keyParams(key));
  const { rows } = await run(
    `UPDATE budget_counters SET reserved_usd = reserved_usd + $5::numeric
     WHERE org_id = $1 AND scope = $2 AND scope_id = $3 AND period = $4 AND spent_usd + reserved_usd < $6::numeric RETURNING *`,
    [...keyParams(key), amount.toFixed(9), cap.toFixed(9)],
  );
  return rows[0] ? counterFromRow(rows[0]) : null;
}

export async function pgSettleBudget(run: PgRun, key: BudgetKey, reserved: number, spent: number): Promise<void> {
  await run(
    `INSERT INTO budget_counters AS c (org_id, scope, scope_id, period, spent_usd) VALUES ($1, $2, $3, $4, $6::numeric)
     ON CONFLICT (org_id, scope, scope_id, period) DO UPDATE SET spent_usd = c.spent_usd + $6::numeric, reserved_usd = GREATEST(0, c.reserved_usd - $5::numeric)`,
    [...keyParams(key), reserved.toFixed(9), spent.toFixed(9)],
  );
}

export async function pgListBudgetCounters(run: PgRun, f: { org_id?: string; period?: string; scope?: BudgetScope }): Promise<BudgetCounter[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  for (const field of ['org_id', 'period', 'scope'] as const) {
    if (f[field] === undefined) continue;
    params.push(f[field]);
    where.push(`${field} = $${params.length}`);
  }
  const { rows } = await run(`SELECT * FROM budget_counters${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY org_id, scope, scope_id, period`, params);
  return rows.map(counterFromRow);
}

export async function pgSetBudgetCap(run: PgRun, cap: Omit<BudgetCap, 'cap_usd'> & { cap_usd: number | null }): Promise<void> {
  if (cap.cap_usd === null) {
    await run('DELETE FROM budget_caps WHERE org_id = $1 AND scope = $2 AND scope_id = $3', [cap.org_id, cap.scope, cap.scope_id]);
    return;
  }
  await run(
    `INSERT INTO budget_caps (org_id, scope, scope_id, period, cap_usd) VALUES ($1, $2, $3, $4, $5::numeric)
     ON CONFLICT (org_id, scope, scope_id) DO UPDATE SET period = EXCLUDED.period, cap_usd = EXCLUDED.cap_usd`,
    [cap.org_id, cap.scope, cap.scope_id, cap.period, cap.cap_usd.toFixed(9)],
  );
}

export async function pgListBudgetCaps(run: PgRun, orgId: string): Promise<BudgetCap[]> {
  const { rows } = await run('SELECT * FROM budget_caps WHERE org_id = $1 ORDER BY scope, scope_id', [orgId]);
  return rows.map((r) => ({
    org_id: r.org_id as string,
    scope: r.scope as BudgetScope,
    scope_id: r.scope_id as string,
    period: r.period as 'daily' | 'total',
    cap_usd: Number(r.cap_usd),
  }));
}
