// Disagreements between people and their adjudication (SPEC section 17, issue 31 item 2). A
// disagreement is an item whose people's scores for one evaluator spread by at least `min_spread`.
// Adjudicating an item writes the decided score as the section-8 annotation of (log, evaluator),
// which is what calibration datasets are built from (from-annotations), so calibration uses it.
import { createAnnotation, updateAnnotation } from '../calibration/annotations.ts';
import { validationError } from '../errors.ts';
import { notFound } from '../errors.ts';
import { getOwnQueue, itemEvaluators, type Ctx, type LabelInput } from './queues.ts';
import { reviewStore } from './store.ts';

export async function listDisagreements(ctx: Ctx, queueId: string, opts: { min_spread?: number; include_adjudicated?: boolean; limit?: number }) {
  const q = await getOwnQueue(ctx, queueId);
  const rs = reviewStore(ctx.store);
  const labels = await rs.listLabels(q.id);
  const minSpread = opts.min_spread ?? 0.25;
  const groups = new Map<string, typeof labels>();
  for (const l of labels) {
    const key = `${l.item_id} ${l.evaluator_id}`;
    groups.set(key, [...(groups.get(key) ?? []), l]);
  }
  const found = [];
  for (const group of groups.values()) {
    if (group.length < 2) continue;
    const scores = group.map((l) => l.score);
    const spread = Math.max(...scores) - Math.min(...scores);
    if (spread < minSpread) continue;
    found.push({
      item_id: group[0].item_id,
      execution_log_id: group[0].execution_log_id,
      evaluator_id: group[0].evaluator_id,
      spread,
      mean: scores.reduce((a, b) => a + b, 0) / scores.length,
      annotations: group.map((l) => ({ annotator_id: l.annotator_id, score: l.score, note: l.note, created_at: l.created_at })),
    });
  }
  const adjudicated = new Set<string>();
  if (!opts.include_adjudicated) {
    for (const id of new Set(found.map((f) => f.item_id))) if ((await rs.getItem(q.id, id))?.adjudicated_at) adjudicated.add(id);
  }
  const results = found.filter((f) => !adjudicated.has(f.item_id)).sort((a, b) => b.spread - a.spread || (a.item_id < b.item_id ? -1 : 1));
  return { results: results.slice(0, opts.limit ?? 50), total: results.length };
}

/**
 * Writes the decided score of each evaluator of the item as its section-8 annotation (created, or
 * edited when the log has one already). Without a score for an evaluator, the people's mean is used.
 */
export async function adjudicateItem(ctx: Ctx, queueId: string, itemId: string, decided: LabelInput[]) {
  const q = await getOwnQueue(ctx, queueId);
  const rs = reviewStore(ctx.store);
  const item = await rs.getItem(q.id, itemId);
  if (!item) throw notFound('Review item', itemId);
  const log = await ctx.store.getExecutionLog(item.execution_log_id);
  if (!log || log.org_id !== ctx.caller.org.id) throw notFound('Execution log', item.execution_log_id);
  const evaluators = itemEvaluators(q, log);
  const unknown = decided.filter((d) => !evaluators.includes(d.evaluator_id));
  if (unknown.length) {
    throw validationError(`Not evaluators of this item: ${unknown.map((d) => d.evaluator_id).join(', ')}; its evaluators are ${evaluators.join(', ')}.`, [
      { field: 'scores', message: 'unknown evaluator' },
    ]);
  }
  const labels = (await rs.listLabels(q.id)).filter((l) => l.item_id === item.id);
  const out = [];
  for (const evaluator_id of evaluators) {
    const given = decided.find((d) => d.evaluator_id === evaluator_id);
    const people = labels.filter((l) => l.evaluator_id === evaluator_id).map((l) => l.score);
    if (!given && !people.length) {
      throw validationError(`Nobody scored evaluator ${evaluator_id} on this item yet: give its score in scores.`, [{ field: 'scores', message: `${evaluator_id} needs a score` }]);
    }
    const score = given?.score ?? people.reduce((a, b) => a + b, 0) / people.length;
    const note = given?.note ?? `adjudicated in review queue ${q.name} from ${people.length} annotation(s)`;
    const existing = (await ctx.store.listAnnotations({ org_id: ctx.caller.org.id, execution_log_id: log.id, evaluator_id }, { limit: 1 })).items[0];
    out.push(existing ? await updateAnnotation(ctx, existing.id, { score, note }) : await createAnnotation(ctx, { execution_log_id: log.id, evaluator_id, score, note }));
  }
  await rs.setAdjudicated(q.id, item.id, new Date().toISOString());
  return { item_id: item.id, execution_log_id: log.id, annotations: out };
}
