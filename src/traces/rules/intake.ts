// New spans -> each active rule of the organization: matched, then sampled (by trace id), then within
// the daily budget, then queued (or shed by the rule's policy). Every matched span is counted in
// exactly one place: not_sampled, budget_exhausted, shed_*, merged (it joined a trace or session
// already waiting), or a queued unit, which ends done, failed or skipped with its reason.
import { isoOfMs, msOfIso } from '../../iso-time.ts';
import type { Span } from '../types.ts';
import { matches, sampled, sessionOf } from './match.ts';
import type { EnqueueCounts, EvalJob, RuleRecord, RuleStore } from './types.ts';

export const today = (now = Date.now()) => isoOfMs(now).slice(0, 10);

/**
 * When a unit's delay starts (ms). Span scope: at the span's end, as delay_seconds says ("after the
 * span"), so the time the exporter took to send it is not added; never later than now (a clock ahead).
 * Trace and session scope: at arrival, because their delay is a quiet period in which the rest of
 * the trace may still be on its way from the application's batching exporter.
 */
export function dueBase(rule: RuleRecord, span: Span, now: Date): number {
  if (rule.scope !== 'span') return now.getTime();
  const end = msOfIso(span.end_time);
  return Number.isFinite(end) ? Math.min(end, now.getTime()) : now.getTime();
}

/**
 * The unit a span is judged in, for a rule; null for session scope when the span names no session.
 * `createdAt` is `now` as ISO text, passed by intake, which makes it once per batch, not per span.
 */
export function unitOf(rule: RuleRecord, span: Span, now: Date, createdAt = isoOfMs(now.getTime())): EvalJob | null {
  const session = rule.scope === 'session' ? sessionOf(span) : null;
  if (rule.scope === 'session' && !session) return null;
  const unit = rule.scope === 'span' ? `${span.trace_id}:${span.span_id}` : rule.scope === 'trace' ? span.trace_id : `session:${session}`;
  return {
    id: `${rule.id}:${unit}`,
    org_id: rule.org_id,
    rule_id: rule.id,
    scope: rule.scope,
    trace_id: span.trace_id,
    span_id: rule.scope === 'span' ? span.span_id : null,
    session_id: session,
    state: 'queued',
    created_at: createdAt,
    run_after: isoOfMs(dueBase(rule, span, now) + rule.delay_seconds * 1000),
    lease_until: null,
    attempts: 0,
  };
}

function overBudget(rule: RuleRecord, counters: Record<string, number>): boolean {
  const b = rule.budget;
  if (!b) return false;
  const d = today();
  if (b.max_runs_per_day !== undefined && (counters[`day:${d}:runs`] ?? 0) >= b.max_runs_per_day) return true;
  if (b.max_cost_usd_per_day !== undefined && (counters[`day:${d}:cost_usd`] ?? 0) >= b.max_cost_usd_per_day) return true;
  return false;
}

/**
 * Adds one to a count. At module level, not a closure made per rule and batch: tsx (esbuild
 * keepNames) names every named closure with a defineProperty call, about 2 µs a batch (issue 33).
 */
const add = (counts: Record<string, number>, k: string) => {
  counts[k] = (counts[k] ?? 0) + 1;
};

/** Takes new spans for the given rules; answers how many units were queued (the worker is woken for them). */
export async function intake(rules: RuleStore, active: RuleRecord[], spans: Span[], now = new Date()): Promise<number> {
  let queued = 0;
  // Per batch, not per span and rule: the same for every unit of it.
  const createdAt = isoOfMs(now.getTime());
  const day = `day:${createdAt.slice(0, 10)}:runs`;
  // matched and sampled are counted with the queue change itself: a crash never leaves a queued span
  // uncounted. The same counts for every unit: one object, which the stores only read.
  const jobCounts: EnqueueCounts = { always: { matched: 1, sampled: 1 }, queued: { [day]: 1 } };
  for (const rule of active) {
    const counts: Record<string, number> = {};
    let counters: Record<string, number> | null = null;
    let queuedHere = 0;
    const batch: Array<{ job: EvalJob; counts: EnqueueCounts }> = [];
    for (const span of spans) {
      if (!matches(span, rule.filter)) continue;
      if (!sampled(span.trace_id, rule.sampling_rate)) {
        add(counts, 'matched');
        add(counts, 'skipped:not_sampled');
        continue;
      }
      const job = unitOf(rule, span, now, createdAt);
      if (!job) {
        add(counts, 'matched');
        add(counts, 'sampled');
        add(counts, 'skipped:no_session_id');
        continue;
      }
      if (!rule.budget) {
        // No budget to gate on: the units wait for one queue write for the whole batch.
        batch.push({ job, counts: jobCounts });
        continue;
      }
      counters ??= await rules.counters(rule.id);
      const runsToday = (counters[day] ?? 0) + queuedHere;
      if (overBudget(rule, { ...counters, [day]: runsToday })) {
        add(counts, 'matched');
        add(counts, 'sampled');
        add(counts, 'skipped:budget_exhausted');
        continue;
      }
      const outcome = await rules.enqueue(job, rule.queue_limit, rule.shed_policy, jobCounts);
      if (outcome === 'queued' || outcome === 'shed_oldest') {
        queued++;
        queuedHere++;
      }
    }
    if (batch.length) {
      for (const outcome of await rules.enqueueMany(rule.id, batch, rule.queue_limit, rule.shed_policy)) if (outcome === 'queued' || outcome === 'shed_oldest') queued++;
    }
    if (Object.keys(counts).length) await rules.count(rule.id, counts);
  }
  return queued;
}
