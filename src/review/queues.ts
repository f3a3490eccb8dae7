// Review queues (SPEC section 17): queues of execution logs that people score, each item leased to
// at most `annotators_per_item` people and never twice to one person. Queues are their organization's
// alone: another organization's queue is a 404.
import type { RequestContext } from '../context.ts';
import { getVisibleEvaluator } from '../domain/evaluators.ts';
import { getVisibleJudge } from '../domain/judges.ts';
import { toPage } from '../domain/pagination.ts';
import { notFound, TribunalError, validationError } from '../errors.ts';
import { reviewId } from './ids.ts';
import { forgetQueues } from './sources.ts';
import type { ExecutionLogRecord, PageQuery } from '../store/types.ts';
import { krippendorffAlphaInterval } from './alpha.ts';
import { reviewStore } from './store.ts';
import type { LeaseOutcome, ReviewItemRecord, ReviewLabelRecord, ReviewQueueRecord, ReviewSources } from './types.ts';

export type Ctx = Pick<RequestContext, 'store' | 'caller'>;

export { reviewId };

export interface QueueInput {
  name: string;
  judge_id?: string;
  evaluator_ids?: string[];
  annotators_per_item?: number;
  lease_seconds?: number;
  sources?: ReviewSources;
  show_justification?: boolean;
}

export async function getOwnQueue(ctx: Ctx, id: string): Promise<ReviewQueueRecord> {
  const q = await reviewStore(ctx.store).getQueue(id);
  if (!q || q.org_id !== ctx.caller.org.id) throw notFound('Review queue', id);
  return q;
}

async function queueEvaluators(ctx: Ctx, input: { judge_id?: string; evaluator_ids?: string[] }): Promise<{ judge_id: string | null; evaluator_ids: string[] }> {
  if ((input.judge_id === undefined) === (input.evaluator_ids === undefined)) {
    throw validationError('Give judge_id or evaluator_ids (the evaluators people score on each item), not both and not neither.', [
      { field: 'judge_id', message: 'give this or evaluator_ids' },
    ]);
  }
  if (input.judge_id !== undefined) {
    const judge = await getVisibleJudge(ctx, input.judge_id);
    return { judge_id: judge.id, evaluator_ids: judge.evaluators.map((e) => e.id) };
  }
  const ids: string[] = [];
  for (const ref of new Set(input.evaluator_ids)) ids.push((await getVisibleEvaluator(ctx, ref)).id);
  if (!ids.length) throw validationError('evaluator_ids is empty: name at least one evaluator.', [{ field: 'evaluator_ids', message: 'at least one' }]);
  return { judge_id: null, evaluator_ids: ids };
}

export async function createQueue(ctx: Ctx, input: QueueInput): Promise<ReviewQueueRecord> {
  const now = new Date().toISOString();
  const q: ReviewQueueRecord = {
    id: reviewId('rvq'),
    org_id: ctx.caller.org.id,
    name: input.name,
    ...(await queueEvaluators(ctx, input)),
    annotators_per_item: input.annotators_per_item ?? 1,
    lease_seconds: input.lease_seconds ?? 600,
    sources: input.sources ?? {},
    show_justification: input.show_justification ?? false,
    created_at: now,
    updated_at: now,
  };
  await reviewStore(ctx.store).createQueue(q);
  forgetQueues(ctx.store, q.org_id);
  return q;
}

export async function updateQueue(ctx: Ctx, id: string, patch: Partial<Omit<QueueInput, 'judge_id' | 'evaluator_ids'>>): Promise<ReviewQueueRecord> {
  const current = await getOwnQueue(ctx, id);
  if (patch.annotators_per_item !== undefined && patch.annotators_per_item < current.annotators_per_item) {
    throw validationError(
      `annotators_per_item can grow but not shrink (it is ${current.annotators_per_item}): items already done by that many people would be over-counted. Make a new queue instead.`,
      [{ field: 'annotators_per_item', message: `at least ${current.annotators_per_item}` }],
    );
  }
  const next: ReviewQueueRecord = { ...current, ...Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)), updated_at: new Date().toISOString() };
  if (!(await reviewStore(ctx.store).updateQueue(next))) throw notFound('Review queue', id);
  forgetQueues(ctx.store, next.org_id);
  return next;
}

export async function deleteQueue(ctx: Ctx, id: string): Promise<string> {
  await getOwnQueue(ctx, id);
  if (!(await reviewStore(ctx.store).deleteQueue(id))) throw notFound('Review queue', id);
  forgetQueues(ctx.store, ctx.caller.org.id);
  return id;
}

/** Per evaluator of the queue: alpha (interval) over the items at least two people scored. */
export async function queueAgreement(ctx: Ctx, q: ReviewQueueRecord, labels?: ReviewLabelRecord[]) {
  const all = labels ?? (await reviewStore(ctx.store).listLabels(q.id));
  const byEvaluator = new Map<string, Map<string, number[]>>();
  for (const l of all) {
    const units = byEvaluator.get(l.evaluator_id) ?? new Map<string, number[]>();
    byEvaluator.set(l.evaluator_id, units);
    units.set(l.item_id, [...(units.get(l.item_id) ?? []), l.score]);
  }
  return q.evaluator_ids.map((evaluator_id) => ({ evaluator_id, ...krippendorffAlphaInterval(byEvaluator.get(evaluator_id)?.values() ?? []) }));
}

export async function queueToWire(ctx: Ctx, q: ReviewQueueRecord) {
  const { org_id: _org, ...wire } = q;
  const counts = await reviewStore(ctx.store).counts(q.id, q.annotators_per_item, new Date().toISOString());
  return { ...wire, counts, agreement: await queueAgreement(ctx, q) };
}

export async function listQueues(ctx: Ctx, page: PageQuery) {
  const found = await reviewStore(ctx.store).listQueues(ctx.caller.org.id, page);
  const wire = [];
  for (const q of found.items) wire.push(await queueToWire(ctx, q));
  return toPage({ items: wire, last: found.last }, (x) => x);
}

async function ownLog(ctx: Ctx, id: string): Promise<ExecutionLogRecord> {
  const log = await ctx.store.getExecutionLog(id);
  if (!log || log.org_id !== ctx.caller.org.id) throw notFound('Execution log', id);
  return log;
}

/** The queue's evaluators that have a result in this log: what a person scores on it. */
export const itemEvaluators = (q: ReviewQueueRecord, log: Pick<ExecutionLogRecord, 'evaluator_results'>) =>
  q.evaluator_ids.filter((id) => log.evaluator_results.some((r) => r.evaluator_id === id));

export async function addItems(ctx: Ctx, queueId: string, logIds: string[], source = 'manual') {
  const q = await getOwnQueue(ctx, queueId);
  const now = new Date().toISOString();
  const items: ReviewItemRecord[] = [];
  for (const logId of new Set(logIds)) {
    const log = await ownLog(ctx, logId);
    if (log.type === 'comparison' || !itemEvaluators(q, log).length) {
      throw validationError(
        `Execution log ${log.id} has no result of this queue's evaluators (${q.evaluator_ids.join(', ')}); add runs of ${q.judge_id ? `judge ${q.judge_id}` : 'those evaluators'}.`,
        [{ field: 'execution_log_ids', message: `${log.id} does not fit this queue` }],
      );
    }
    items.push({ id: reviewId('rvi'), queue_id: q.id, execution_log_id: log.id, source, done: 0, adjudicated_at: null, created_at: now });
  }
  const added = await reviewStore(ctx.store).addItems(q.id, items);
  const addedLogs = new Set(added.map((i) => i.execution_log_id));
  return {
    added: added.map((i) => ({ item_id: i.id, execution_log_id: i.execution_log_id })),
    already_queued: items.filter((i) => !addedLogs.has(i.execution_log_id)).map((i) => i.execution_log_id),
  };
}

export async function listItems(ctx: Ctx, queueId: string, page: PageQuery) {
  const q = await getOwnQueue(ctx, queueId);
  const rs = reviewStore(ctx.store);
  const found = await rs.listItems(q.id, page);
  const leases = await rs.listLeases(
    q.id,
    found.items.map((i) => i.id),
  );
  const now = new Date().toISOString();
  const wire = found.items.map((i) => {
    const mine = leases.filter((l) => l.item_id === i.id);
    const active = mine.filter((l) => l.state === 'leased' && l.expires_at > now).length;
    const skipped = mine.filter((l) => l.state === 'skipped').length;
    const status = (i.done >= q.annotators_per_item ? 'done' : active ? 'leased' : skipped ? 'skipped' : 'queued') as 'done' | 'leased' | 'skipped' | 'queued';
    return {
      id: i.id,
      execution_log_id: i.execution_log_id,
      source: i.source,
      status,
      annotations_done: i.done,
      leased: active,
      skipped,
      adjudicated_at: i.adjudicated_at,
      created_at: i.created_at,
    };
  });
  return toPage({ items: wire, last: found.last }, (x) => x);
}

export async function nextItem(ctx: Ctx, queueId: string) {
  // One step of the store: the queue (another organization's is a 404), the lease and, on
  // PostgreSQL, the log, in one round trip (issue 31's 5 ms p95).
  const found = await reviewStore(ctx.store).nextInQueue(queueId, ctx.caller.org.id, ctx.caller.key.id, new Date().toISOString());
  if (!found) throw notFound('Review queue', queueId);
  const { queue: q, got } = found;
  if (!got) return {};
  const log = found.log !== undefined ? found.log : await ctx.store.getExecutionLog(got.item.execution_log_id);
  return {
    item_id: got.item.id,
    execution_log_id: got.item.execution_log_id,
    lease_expires_at: got.lease.expires_at,
    evaluator_ids: log ? itemEvaluators(q, log) : q.evaluator_ids,
    show_justification: q.show_justification,
    log: log ? logForReview(log, q.show_justification) : null,
  };
}

/** The run as a person sees it; justifications only when the queue shows them before scoring. */
function logForReview(log: ExecutionLogRecord, withJustification: boolean) {
  const { org_id: _org, ...wire } = log;
  return { ...wire, evaluator_results: log.evaluator_results.map((r) => (withJustification ? r : { ...r, justification: null, score: null })) };
}

const LEASE_ERRORS: Record<Exclude<LeaseOutcome, 'ok'>, (item: string) => TribunalError> = {
  no_item: (item) => notFound('Review item', item),
  not_leased: (item) => new TribunalError('conflict', 409, `Item ${item} is not leased to you: take an item with POST .../next/ first, then annotate the item it gives you.`),
  expired: (item) => new TribunalError('conflict', 409, `Your lease on item ${item} expired, so it went back to the queue; take a new item with POST .../next/.`),
  already_done: (item) => new TribunalError('conflict', 409, `You already annotated item ${item}; each person annotates an item once (nothing was counted twice).`),
  already_skipped: (item) => new TribunalError('conflict', 409, `You skipped item ${item}; it went back to the queue for others.`),
};

export interface LabelInput {
  evaluator_id: string;
  score: number;
  note?: string | null;
}

export async function submitItem(ctx: Ctx, queueId: string, itemId: string, annotations: LabelInput[]) {
  const rs = reviewStore(ctx.store);
  // The queue, the item and (on PostgreSQL) its log in one step; the same 404s as reading them one by one.
  const found = await rs.itemInQueue(queueId, itemId);
  if (!found || found.queue.org_id !== ctx.caller.org.id) throw notFound('Review queue', queueId);
  const { queue: q, item } = found;
  if (!item) throw notFound('Review item', itemId);
  const log = found.log !== undefined ? found.log : await ctx.store.getExecutionLog(item.execution_log_id);
  if (!log || log.org_id !== ctx.caller.org.id) throw notFound('Execution log', item.execution_log_id);
  const wanted = itemEvaluators(q, log);
  const given = new Map(
    annotations.map((a) => [log.evaluator_results.find((r) => r.evaluator_id === a.evaluator_id || r.evaluator_name === a.evaluator_id)?.evaluator_id ?? a.evaluator_id, a]),
  );
  const missing = wanted.filter((id) => !given.has(id));
  const extra = [...given.keys()].filter((id) => !wanted.includes(id));
  if (missing.length || extra.length || given.size !== annotations.length) {
    throw validationError(
      `Score every evaluator of this item once: ${wanted.join(', ')}${missing.length ? `; missing ${missing.join(', ')}` : ''}${extra.length ? `; not in this item: ${extra.join(', ')}` : ''}.`,
      [{ field: 'annotations', message: 'one entry per evaluator of the item' }],
    );
  }
  const now = new Date().toISOString();
  const labels: ReviewLabelRecord[] = wanted.map((evaluator_id) => ({
    id: reviewId('rvl'),
    queue_id: q.id,
    item_id: item.id,
    execution_log_id: log.id,
    evaluator_id,
    annotator_id: ctx.caller.key.id,
    score: given.get(evaluator_id)!.score,
    note: given.get(evaluator_id)!.note?.trim() ? given.get(evaluator_id)!.note! : null,
    created_at: now,
  }));
  const outcome = await rs.submit(q, item.id, ctx.caller.key.id, labels, now);
  if (outcome !== 'ok') throw LEASE_ERRORS[outcome](itemId);
  return { item_id: item.id, execution_log_id: log.id, annotations: labels.map(({ queue_id: _q, ...l }) => l) };
}

export async function skipItem(ctx: Ctx, queueId: string, itemId: string, reason: string) {
  const q = await getOwnQueue(ctx, queueId);
  const outcome = await reviewStore(ctx.store).skip(q.id, itemId, ctx.caller.key.id, reason, new Date().toISOString());
  if (outcome !== 'ok') throw LEASE_ERRORS[outcome](itemId);
  return { item_id: itemId, skipped: true as const, reason };
}
