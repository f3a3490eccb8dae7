// Budgets (room h-cost, SPEC section 18, docs/COST.md): cost caps on an organization (per UTC day:
// TRIBUNAL_ORG_DAILY_BUDGET_USD, or per org set by an admin), an evaluator (per day) and a batch run
// (in total). A run reserves its estimated cost on every cap that applies before any model call;
// the store takes a reservation only while spent + reserved is below the cap (atomically, also across
// instances on PostgreSQL), so a cap is passed by at most the runs admitted just under it. When the
// run ends its reservation is replaced by what it really cost. A refused run is 429 budget_exceeded
// with Retry-After at the reset (the next UTC midnight; none for a batch run's total cap).
import type { Config } from '../config.ts';
import { TribunalError } from '../errors.ts';
import type { BudgetCap, BudgetKey, Store } from '../store/types.ts';

/** The UTC day last asked for, and the instants it spans: toISOString per run cost microseconds. */
let known = { day: '', from: 0, until: 0 };
/** The UTC day of `at` (a Date or epoch ms; default now): a Date is made only when the day changes. */
export function dayOf(at?: Date | number): string {
  const t = at === undefined ? Date.now() : typeof at === 'number' ? at : at.getTime();
  if (t >= known.from && t < known.until) return known.day;
  const date = typeof at === 'object' ? at : new Date(t);
  const day = date.toISOString().slice(0, 10); // throws for an invalid date, as before
  const from = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate());
  known = { day, from, until: from + 86_400_000 };
  return day;
}
/** The next UTC midnight: when daily counters start again. */
export const nextReset = (at = new Date()) => new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() + 1));

/** What one run counts against. */
export interface RunScopes {
  orgId: string;
  evaluatorIds: string[];
  batchId?: string;
}

export interface AppliedCap {
  key: BudgetKey;
  cap: number;
  daily: boolean;
}

/**
 * How old a caps read a batch run's row may use (the store shares one read among the run's rows): a
 * cap set during a run by another instance applies to its rows within this. A row still reserves on
 * every cap it sees, so a spent cap stops the run as before.
 */
export const BATCH_CAPS_MAX_AGE_MS = 1000;

/** Every cap that applies to a run: the org's (its own, else the server default), its evaluators', its batch run's. */
export async function appliedCaps(store: Store, config: Pick<Config, 'budget'>, scopes: RunScopes, at?: Date): Promise<AppliedCap[]> {
  const reuse = scopes.batchId ? { key: scopes.batchId, maxAgeMs: BATCH_CAPS_MAX_AGE_MS } : undefined;
  const caps = await store.listBudgetCaps(scopes.orgId, reuse);
  const out: AppliedCap[] = [];
  const orgCap = caps.find((c) => c.scope === 'org')?.cap_usd ?? config.budget?.orgDailyUsd ?? null;
  // No cap at all (the common case): no day to name.
  if (orgCap === null && !caps.length) return out;
  const day = dayOf(at);
  if (orgCap !== null) out.push({ key: { org_id: scopes.orgId, scope: 'org', scope_id: scopes.orgId, period: day }, cap: orgCap, daily: true });
  for (const c of caps) {
    const applies = (c.scope === 'evaluator' && scopes.evaluatorIds.includes(c.scope_id)) || (c.scope === 'batch' && c.scope_id === scopes.batchId);
    if (applies)
      out.push({ key: { org_id: scopes.orgId, scope: c.scope, scope_id: c.scope_id, period: c.period === 'daily' ? day : 'total' }, cap: c.cap_usd, daily: c.period === 'daily' });
  }
  return out;
}

const describeScope = (key: BudgetKey) =>
  key.scope === 'org' ? "the organization's daily budget" : key.scope === 'evaluator' ? `the daily budget of evaluator ${key.scope_id}` : `the budget of batch run ${key.scope_id}`;

export function budgetExceeded(applied: AppliedCap, at = new Date()): TribunalError {
  const reset = applied.daily ? nextReset(at) : null;
  const retryAfter = reset ? Math.max(1, Math.ceil((reset.getTime() - at.getTime()) / 1000)) : null;
  return new TribunalError(
    'budget_exceeded',
    429,
    `${describeScope(applied.key)[0].toUpperCase()}${describeScope(applied.key).slice(1)} of $${applied.cap} is spent; ${reset ? `it resets at ${reset.toISOString()}` : 'it does not reset'}. Nothing was run.`,
    {
      ...(retryAfter ? { headers: { 'Retry-After': String(retryAfter) } } : {}),
      extra: { budget: { scope: applied.key.scope, scope_id: applied.key.scope_id, cap_usd: applied.cap, resets_at: reset?.toISOString() ?? null } },
    },
  );
}

/** What a run reserved, to be settled once with what it cost. */
export class Reservation {
  private settled = false;
  constructor(
    private readonly store: Store,
    /** The org's counter today: its spend is always counted, capped or not. */
    readonly orgKey: BudgetKey,
    private readonly taken: Array<{ key: BudgetKey; amount: number }>,
  ) {}

  /** Replaces the reservations with the run's real cost: `total` on the org and batch, each evaluator's own part on its cap. */
  async settle(total: number, byEvaluator: Map<string, number>): Promise<void> {
    if (this.settled) return;
    this.settled = true;
    const spentOn = (key: BudgetKey) => (key.scope === 'evaluator' ? (byEvaluator.get(key.scope_id) ?? 0) : total);
    const keys = this.taken.some((t) => t.key.scope === 'org') ? this.taken : [...this.taken, { key: this.orgKey, amount: 0 }];
    await Promise.all(keys.filter((t) => t.amount !== 0 || spentOn(t.key) !== 0).map((t) => this.store.settleBudget(t.key, t.amount, spentOn(t.key))));
  }
}

/**
 * Reserves `estimate` (the run's total; each evaluator cap its own part) on every applied cap, or
 * throws budget_exceeded having let go of what it took. The org's spend is always counted (settle),
 * capped or not, so that it can be shown.
 */
export async function reserve(store: Store, scopes: RunScopes, applied: AppliedCap[], estimate: number, byEvaluator: Map<string, number>, at = new Date()): Promise<Reservation> {
  const taken: Array<{ key: BudgetKey; amount: number }> = [];
  for (const a of applied) {
    const amount = a.key.scope === 'evaluator' ? (byEvaluator.get(a.key.scope_id) ?? 0) : estimate;
    const ok = await store.reserveBudget(a.key, amount, a.cap).catch(async (err) => {
      await Promise.all(taken.map((t) => store.settleBudget(t.key, t.amount, 0)));
      throw err;
    });
    if (!ok) {
      await Promise.all(taken.map((t) => store.settleBudget(t.key, t.amount, 0)));
      throw budgetExceeded(a, at);
    }
    taken.push({ key: a.key, amount });
  }
  return new Reservation(store, { org_id: scopes.orgId, scope: 'org', scope_id: scopes.orgId, period: dayOf(at) }, taken);
}

/** Throws budget_exceeded when a cap that applies is spent already (a batch run is refused at its start). */
export async function assertBudgetOpen(store: Store, config: Pick<Config, 'budget'>, scopes: RunScopes): Promise<void> {
  const applied = await appliedCaps(store, config, scopes);
  if (!applied.length) return;
  const counters = await store.listBudgetCounters({ org_id: scopes.orgId });
  for (const a of applied) {
    const c = counters.find((x) => x.scope === a.key.scope && x.scope_id === a.key.scope_id && x.period === a.key.period);
    if (c && !(c.spent_usd + c.reserved_usd < a.cap)) throw budgetExceeded(a);
    if (a.cap <= 0) throw budgetExceeded(a);
  }
}

/** The org's caps and today's spend, as GET /v1/budgets/ answers them. */
export async function budgetStatus(store: Store, config: Pick<Config, 'budget'>, orgId: string) {
  const day = dayOf();
  const [caps, counters] = await Promise.all([store.listBudgetCaps(orgId), store.listBudgetCounters({ org_id: orgId, period: day })]);
  const spent = (scope: BudgetCap['scope'], id: string) => counters.find((c) => c.scope === scope && c.scope_id === id)?.spent_usd ?? 0;
  const orgCap = caps.find((c) => c.scope === 'org')?.cap_usd ?? config.budget?.orgDailyUsd ?? null;
  return {
    period: day,
    resets_at: nextReset().toISOString(),
    org: {
      daily_cap_usd: orgCap,
      spent_today_usd: spent('org', orgId),
      cap_source: caps.some((c) => c.scope === 'org') ? ('organization' as const) : orgCap === null ? ('none' as const) : ('server_default' as const),
    },
    evaluators: caps.filter((c) => c.scope === 'evaluator').map((c) => ({ evaluator_id: c.scope_id, daily_cap_usd: c.cap_usd, spent_today_usd: spent('evaluator', c.scope_id) })),
  };
}
