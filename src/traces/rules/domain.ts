// Evaluation rules as the caller sees them: create/read/update/delete within the caller's organization,
// the live status, the test panel (what would be extracted and judged from the latest matching spans)
// and backfill (stored spans of a period judged as a batch run, through the batch queue).
import { startBatch, MAX_INLINE_ITEMS } from '../../batch/batches.ts';
import type { RequestContext } from '../../context.ts';
import { getVisibleEvaluator } from '../../domain/evaluators.ts';
import { getVisibleJudge } from '../../domain/judges.ts';
import { TribunalError, validationError } from '../../errors.ts';
import { newId } from '../../ids.ts';
import type { DatasetItemInput } from '../../schemas.ts';
import { extractSpan } from '../extract/index.ts';
import { rulesChanged } from '../hooks.ts';
import { traceStoreOf } from '../store.ts';
import type { SpanRecord } from '../types.ts';
import { assemble } from './assemble.ts';
import { unitOf } from './intake.ts';
import { matches, sampled } from './match.ts';
import { ruleStoreOf } from './store.ts';
import type { EvaluationRule, RuleRecord, RuleStatus } from './types.ts';

type Ctx = RequestContext;
export type RuleInput = Partial<Omit<EvaluationRule, 'id' | 'created_at' | 'updated_at'>>;

/** A new rule's fields not given (also the tests' rule records). */
export const DEFAULTS = {
  scope: 'span' as const,
  filter: [],
  sampling_rate: 1,
  delay_seconds: 0,
  budget: null,
  active: true,
  extractor: null,
  queue_limit: 10_000,
  shed_policy: 'drop_oldest' as const,
};

export async function statusOf(ctx: Ctx, rule: RuleRecord): Promise<RuleStatus> {
  const rules = await ruleStoreOf(ctx.store);
  const { counters: c, queue: q } = await rules.progress(rule.id);
  const skipped: Record<string, number> = {};
  for (const [k, n] of Object.entries(c)) if (k.startsWith('skipped:')) skipped[k.slice(8)] = n;
  const age = q.oldest_queued_at ? Math.max(0, (Date.now() - Date.parse(q.oldest_queued_at)) / 1000) : null;
  return {
    matched: c.matched ?? 0,
    sampled: c.sampled ?? 0,
    queued: q.queued,
    running: q.running,
    done: c.done ?? 0,
    failed: c.failed ?? 0,
    skipped,
    oldest_queued_age_s: age === null ? null : Math.round(age * 10) / 10,
    backlog: age !== null && age > rule.delay_seconds + 60,
  };
}

export const ruleToWire = async (ctx: Ctx, r: RuleRecord) => {
  const { org_id: _o, key_id: _k, ...wire } = r;
  return { ...wire, status: await statusOf(ctx, r) };
};

async function checkTarget(ctx: Ctx, r: { judge_id: string | null; evaluator_id: string | null }) {
  if ((r.judge_id === null) === (r.evaluator_id === null)) {
    throw validationError('Give judge_id or evaluator_id (one of them).', [{ field: 'judge_id', message: 'give judge_id or evaluator_id' }]);
  }
  if (r.judge_id) await getVisibleJudge(ctx, r.judge_id);
  else await getVisibleEvaluator(ctx, r.evaluator_id!);
}

export async function getOwnRule(ctx: Ctx, id: string): Promise<RuleRecord> {
  const r = await (await ruleStoreOf(ctx.store)).getRule(id);
  if (!r || r.org_id !== ctx.caller.org.id) throw new TribunalError('not_found', 404, `No evaluation rule ${id} in your organization.`);
  return r;
}

export async function createRule(ctx: Ctx, input: RuleInput & { name: string }): Promise<RuleRecord> {
  const now = new Date().toISOString();
  const r: RuleRecord = {
    ...DEFAULTS,
    ...input,
    // erl_<uuidv7>: made from the shared id maker without adding a kind to ids.ts (another room's file).
    id: `erl_${newId('bat').slice(4)}`,
    judge_id: input.judge_id ?? null,
    evaluator_id: input.evaluator_id ?? null,
    budget: input.budget ?? null,
    extractor: input.extractor ?? null,
    created_at: now,
    updated_at: now,
    org_id: ctx.caller.org.id,
    key_id: ctx.caller.key.id,
  } as RuleRecord;
  await checkTarget(ctx, r);
  await (await ruleStoreOf(ctx.store)).createRule(r);
  rulesChanged(ctx.store, r.org_id);
  return r;
}

export async function updateRule(ctx: Ctx, id: string, patch: RuleInput): Promise<RuleRecord> {
  const old = await getOwnRule(ctx, id);
  const next = { ...old, ...patch, updated_at: new Date().toISOString() } as RuleRecord;
  if (patch.judge_id) next.evaluator_id = null;
  if (patch.evaluator_id) next.judge_id = null;
  await checkTarget(ctx, next);
  await (await ruleStoreOf(ctx.store)).updateRule(next);
  rulesChanged(ctx.store, next.org_id);
  return next;
}

export async function deleteRule(ctx: Ctx, id: string): Promise<void> {
  const r = await getOwnRule(ctx, id);
  await (await ruleStoreOf(ctx.store)).deleteRule(r.id);
  rulesChanged(ctx.store, r.org_id);
}

/** The latest stored spans (newest traces first) that match the rule, at most `limit`. */
async function latestMatching(ctx: Ctx, rule: RuleRecord, limit: number): Promise<SpanRecord[]> {
  const traces = await traceStoreOf(ctx.store);
  const out: SpanRecord[] = [];
  let after: { start_time: string; trace_id: string } | undefined;
  for (let pages = 0; pages < 10 && out.length < limit; pages++) {
    const page = await traces.listTraces({ org_id: rule.org_id }, { limit: 50, ...(after ? { after } : {}) });
    for (const t of page.items) {
      const spans = (await traces.getTrace(rule.org_id, t.trace_id)).filter((s) => matches(s, rule.filter)).reverse();
      out.push(...spans.slice(0, limit - out.length));
      if (out.length >= limit) break;
    }
    if (!page.last) break;
    after = page.last;
  }
  return out;
}

export async function testRule(ctx: Ctx, rule: RuleRecord, limit: number) {
  const traces = await traceStoreOf(ctx.store);
  const spans = await latestMatching(ctx, rule, limit);
  const results = [];
  for (const s of spans) {
    const base = { trace_id: s.trace_id, span_id: s.span_id, span_name: s.name, service_name: s.service_name, sampled: sampled(s.trace_id, rule.sampling_rate) };
    const job = unitOf(rule, s, new Date());
    if (!job) {
      results.push({ ...base, would_judge: null, reason: 'no_session_id' });
      continue;
    }
    const unit = await assemble(traces, rule, { ...job, span_id: rule.scope === 'span' ? s.span_id : null });
    results.push(unit.ok ? { ...base, would_judge: unit.inputs as unknown as Record<string, unknown>, reason: null } : { ...base, would_judge: null, reason: unit.reason });
  }
  return { matched_spans: spans.length, results };
}

export async function backfillRule(ctx: Ctx, rule: RuleRecord, from: string, to: string) {
  if (from >= to) throw validationError('date_from must be before date_to.', [{ field: 'date_from', message: 'not before date_to' }]);
  const traces = await traceStoreOf(ctx.store);
  const items: DatasetItemInput[] = [];
  const skipped: Record<string, number> = {};
  const seen = new Set<string>();
  let matched = 0;
  let after: { received_at: string; key: string } | undefined;
  scan: for (;;) {
    const spans = await traces.listSpans(rule.org_id, { from, to, limit: 500, ...(after ? { after } : {}) });
    for (const s of spans) {
      if (!matches(s, rule.filter)) continue;
      matched++;
      if (!sampled(s.trace_id, rule.sampling_rate)) {
        skipped.not_sampled = (skipped.not_sampled ?? 0) + 1;
        continue;
      }
      const job = unitOf(rule, s, new Date());
      if (!job || seen.has(job.id)) continue;
      seen.add(job.id);
      const unit =
        rule.scope === 'span'
          ? (() => {
              const e = extractSpan(s, rule.extractor ?? undefined);
              return e.ok ? { ok: true as const, inputs: e.value, span: s } : { ok: false as const, reason: `unreadable_${e.reason}` };
            })()
          : await assemble(traces, rule, job);
      if (!unit.ok) {
        skipped[unit.reason] = (skipped[unit.reason] ?? 0) + 1;
        continue;
      }
      const x = unit.inputs;
      items.push({
        ...(x.turns ? { turns: x.turns } : { response: x.response, ...(x.request !== undefined ? { request: x.request } : {}) }),
        ...(x.system_prompt !== undefined ? { system_prompt: x.system_prompt } : {}),
        ...(x.contexts?.length ? { contexts: x.contexts } : {}),
        tags: [`trace_id:${unit.span.trace_id}`, `span_id:${unit.span.span_id}`],
      });
      if (items.length >= MAX_INLINE_ITEMS) {
        skipped.over_batch_limit = 0;
        break scan;
      }
    }
    if (spans.length < 500) break;
    const last = spans[spans.length - 1];
    after = { received_at: last.received_at, key: `${last.trace_id}:${last.span_id}` };
  }
  if (!items.length)
    throw new TribunalError(
      'validation_error',
      422,
      `No stored span from ${from} to ${to} matches the rule and can be judged (matched ${matched}; skipped ${JSON.stringify(skipped)}).`,
    );
  const target = rule.judge_id ? { judge: await getVisibleJudge(ctx, rule.judge_id) } : { evaluator: await getVisibleEvaluator(ctx, rule.evaluator_id!) };
  const batch = await startBatch(ctx, target, { items }, { tags: [`evaluation_rule:${rule.id}`, 'backfill'] });
  return { batch_execution_id: batch.id, items: items.length, matched, skipped };
}
