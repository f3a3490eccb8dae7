// The PostgreSQL store's budgets (room h-cost, migrations/017_budgets.sql). A reservation is one
// conditional UPDATE ... WHERE spent + reserved < cap RETURNING: the row lock makes concurrent
// reservations from any number of instances take turns, so none passes a check another has spent.
import { randomUUID } from 'node:crypto';
import type { BudgetStore, CapReuse } from '../parts/budgets.ts';
import type { BudgetCap, BudgetCounter, BudgetKey, BudgetScope } from '../types.ts';
import type { PgConnection } from './connection.ts';

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
export const budgetKeyParams = (k: BudgetKey) => [k.org_id, k.scope, k.scope_id, k.period];
const ENSURE = 'INSERT INTO budget_counters (org_id, scope, scope_id, period) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING';

export async function pgReserveBudget(run: PgRun, key: BudgetKey, amount: number, cap: number, hold?: Hold): Promise<BudgetCounter | null> {
  await run(ENSURE, budgetKeyParams(key));
  // The counter and this process's hold move in one statement: a reservation is never left unheld.
  const { rows } = await run(
    `WITH r AS (
       UPDATE budget_counters SET reserved_usd = reserved_usd + $5::numeric
       WHERE org_id = $1 AND scope = $2 AND scope_id = $3 AND period = $4 AND spent_usd + reserved_usd < $6::numeric RETURNING *
     ), h AS (
       INSERT INTO budget_holds AS b (holder, org_id, scope, scope_id, period, amount_usd, expires_at)
       SELECT $7, org_id, scope, scope_id, period, $5::numeric, now() + make_interval(secs => $8) FROM r WHERE $7::text IS NOT NULL
       ON CONFLICT (holder, org_id, scope, scope_id, period) DO UPDATE SET amount_usd = b.amount_usd + EXCLUDED.amount_usd, expires_at = EXCLUDED.expires_at
     )
     SELECT * FROM r`,
    [...budgetKeyParams(key), amount.toFixed(9), cap.toFixed(9), hold?.holder ?? null, (hold?.leaseMs ?? 0) / 1000],
  );
  return rows[0] ? counterFromRow(rows[0]) : null;
}

export async function pgSettleBudget(run: PgRun, key: BudgetKey, reserved: number, spent: number, hold?: Hold): Promise<void> {
  await run(
    `WITH h AS (
       UPDATE budget_holds SET amount_usd = GREATEST(0, amount_usd - $5::numeric)
       WHERE holder = $7 AND org_id = $1 AND scope = $2 AND scope_id = $3 AND period = $4
     )
     INSERT INTO budget_counters AS c (org_id, scope, scope_id, period, spent_usd) VALUES ($1, $2, $3, $4, $6::numeric)
     ON CONFLICT (org_id, scope, scope_id, period) DO UPDATE SET spent_usd = c.spent_usd + $6::numeric, reserved_usd = GREATEST(0, c.reserved_usd - $5::numeric)`,
    [...budgetKeyParams(key), reserved.toFixed(9), spent.toFixed(9), hold?.holder ?? null],
  );
}

/** This process's name on its budget holds and how long they outlive it (migrations/019). */
export interface Hold {
  holder: string;
  leaseMs: number;
}

/**
 * Keeps this process's holds alive (renewed every third of the lease) and lets go of the holds of
 * processes gone: an expired hold's amount is taken off its counter's reservations, in one statement.
 */
export class BudgetHolds {
  private timer?: NodeJS.Timeout;
  constructor(
    private readonly run: PgRun,
    readonly hold: Hold,
  ) {}

  static started(run: PgRun, leaseMs: number): BudgetHolds {
    const holds = new BudgetHolds(run, { holder: randomUUID(), leaseMs });
    holds.start();
    return holds;
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.tick().catch(() => {}), Math.max(50, this.hold.leaseMs / 3));
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  async tick(): Promise<void> {
    await this.run(`UPDATE budget_holds SET expires_at = now() + make_interval(secs => $2) WHERE holder = $1`, [this.hold.holder, this.hold.leaseMs / 1000]);
    await pgReleaseExpiredHolds(this.run);
  }
}

/** Takes the expired holds off their counters (a server killed mid-run); answers how many were let go. */
export async function pgReleaseExpiredHolds(run: PgRun): Promise<number> {
  const { rows } = await run(
    `WITH gone AS (DELETE FROM budget_holds WHERE expires_at < now() RETURNING *),
     sums AS (SELECT org_id, scope, scope_id, period, sum(amount_usd) AS amount, count(*) AS n FROM gone GROUP BY org_id, scope, scope_id, period),
     u AS (
       UPDATE budget_counters c SET reserved_usd = GREATEST(0, c.reserved_usd - s.amount)
       FROM sums s WHERE c.org_id = s.org_id AND c.scope = s.scope AND c.scope_id = s.scope_id AND c.period = s.period
     )
     SELECT coalesce(sum(n), 0) AS n FROM sums`,
    [],
  );
  return Number(rows[0]?.n ?? 0);
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

/**
 * Caps reads shared by a batch run's rows (listBudgetCaps with `reuse`): one read per run per
 * maxAgeMs, not one per row. A read is kept from when it started; a cap this process sets drops
 * every kept read once written (one started before the write may not see it), so within one
 * instance a change applies to the next row; another instance's change within maxAgeMs. Keyed by
 * run, so a run's first rows always read its caps afresh (its own cap is set before it starts).
 */
export class CapReads {
  private readonly kept = new Map<string, { at: number; caps: Promise<BudgetCap[]> }>();
  constructor(
    private readonly read: (orgId: string) => Promise<BudgetCap[]>,
    private readonly max = 256,
  ) {}

  async list(orgId: string, reuse?: CapReuse): Promise<BudgetCap[]> {
    if (!reuse) return this.read(orgId);
    const key = `${orgId}\n${reuse.key}`;
    const now = Date.now();
    let hit = this.kept.get(key);
    if (!hit || now - hit.at > reuse.maxAgeMs) {
      const caps = this.read(orgId);
      hit = { at: now, caps };
      this.kept.delete(key);
      this.kept.set(key, hit);
      caps.catch(() => this.kept.get(key)?.caps === caps && this.kept.delete(key));
      for (const oldest of this.kept.keys()) {
        if (this.kept.size <= this.max) break;
        this.kept.delete(oldest);
      }
    }
    return (await hit.caps).map((c) => ({ ...c }));
  }

  /** A cap was set by this process: no read kept from before answers again. */
  changed(): void {
    this.kept.clear();
  }
}

/**
 * The budget part over the store's connection. Reservations and settlements are single statements,
 * never retried; they are held by this process (BudgetHolds, started at the first reservation), so
 * one killed mid-run lets go after the lease. `stop` ends the renewals (the store's close).
 */
export function pgBudgets(db: PgConnection): { part: BudgetStore; stop: () => void } {
  const write: PgRun = (sql, params) => db.write(sql, params);
  const read: PgRun = (sql, params) => db.query(sql, params);
  let holds: BudgetHolds | undefined;
  const hold = () => (holds ??= BudgetHolds.started(write, db.budgetLeaseMs)).hold;
  const caps = new CapReads((orgId) => pgListBudgetCaps(read, orgId));
  const part: BudgetStore = {
    reserveBudget: (key, amount, cap) => pgReserveBudget(write, key, amount, cap, hold()),
    settleBudget: (key, reserved, spent) => pgSettleBudget(write, key, reserved, spent, hold()),
    listBudgetCounters: (filter) => pgListBudgetCounters(read, filter),
    setBudgetCap: (cap) => pgSetBudgetCap(write, cap).finally(() => caps.changed()),
    listBudgetCaps: (orgId, reuse) => caps.list(orgId, reuse),
  };
  return { part, stop: () => holds?.stop() };
}
