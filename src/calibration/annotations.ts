// Annotations (SPEC section 8): a person's verdict on one evaluator result of one execution log, and
// copying annotated runs into a dataset (the person's scores become expected_scores). Logs are their
// organization's alone, so an annotation is too: an unknown or foreign log or annotation is a 404.
import type { RequestContext } from '../context.ts';
import { conflictToError } from '../domain/conflicts.ts';
import { instant } from '../domain/logs.ts';
import { filterIdsForNames } from '../domain/names.ts';
import { pageQuery, toPage } from '../domain/pagination.ts';
import { getOwnDataset, newItem } from '../datasets/datasets.ts';
import { notFound, validationError } from '../errors.ts';
import { newId } from '../ids.ts';
import type { DatasetItemInput } from '../schemas.ts';
import type { Annotation } from '../schemas/calibration.ts';
import type { AnnotationFilter, AnnotationRecord, ExecutionLogRecord } from '../store/types.ts';

type Ctx = Pick<RequestContext, 'store' | 'caller'>;

export const annotationToWire = ({ org_id: _org, ...wire }: AnnotationRecord): Annotation => wire;

async function ownLog(ctx: Ctx, id: string): Promise<ExecutionLogRecord> {
  const log = await ctx.store.getExecutionLog(id);
  if (!log || log.org_id !== ctx.caller.org.id) throw notFound('Execution log', id);
  return log;
}

/** The evaluator of the log's results named by id or exact name; a 400 listing them when none matches. */
function resultEvaluatorId(log: ExecutionLogRecord, idOrName: string): string {
  const result = log.evaluator_results.find((r) => r.evaluator_id === idOrName) ?? log.evaluator_results.find((r) => r.evaluator_name === idOrName);
  if (result) return result.evaluator_id;
  const known = log.evaluator_results.map((r) => `${r.evaluator_name} (${r.evaluator_id})`).join(', ');
  throw validationError(`Evaluator ${JSON.stringify(idOrName)} has no result in execution log ${log.id}; its evaluators are: ${known || 'none'}.`, [
    { field: 'evaluator_id', message: 'not among the results of this log' },
  ]);
}

/**
 * A comparison log holds each evaluator's preference between two responses, not a score: a person's
 * score for it would become an expected score on an item holding only one of the two responses.
 */
const COMPARISON_REFUSED = 'it is a comparison (type "comparison": preferences between two responses, no score to correct); annotate a scored run of the judge instead';

export async function createAnnotation(ctx: Ctx, input: { execution_log_id: string; evaluator_id: string; score: number; note?: string | null }): Promise<Annotation> {
  const log = await ownLog(ctx, input.execution_log_id);
  if (log.type === 'comparison') {
    throw validationError(`Execution log ${log.id} cannot be annotated: ${COMPARISON_REFUSED}.`, [{ field: 'execution_log_id', message: 'a comparison log has no scores' }]);
  }
  const now = new Date().toISOString();
  const record: AnnotationRecord = {
    id: newId('ann'),
    org_id: ctx.caller.org.id,
    execution_log_id: log.id,
    evaluator_id: resultEvaluatorId(log, input.evaluator_id),
    judge_id: log.judge_id,
    score: input.score,
    note: input.note?.trim() ? input.note : null,
    created_at: now,
    updated_at: now,
  };
  try {
    await ctx.store.createAnnotation(record);
  } catch (err) {
    throw conflictToError(err, 'edit that annotation (PATCH /v1/annotations/{id}/) instead of adding another.');
  }
  return annotationToWire(record);
}

async function ownAnnotation(ctx: Ctx, id: string): Promise<AnnotationRecord> {
  const found = await ctx.store.getAnnotation(id);
  if (!found || found.org_id !== ctx.caller.org.id) throw notFound('Annotation', id);
  return found;
}

export const getAnnotation = async (ctx: Ctx, id: string) => annotationToWire(await ownAnnotation(ctx, id));

export async function updateAnnotation(ctx: Ctx, id: string, patch: { score?: number; note?: string | null }): Promise<Annotation> {
  const current = await ownAnnotation(ctx, id);
  const next: AnnotationRecord = { ...current, updated_at: new Date().toISOString() };
  if (patch.score !== undefined) next.score = patch.score;
  if (patch.note !== undefined) next.note = patch.note?.trim() ? patch.note : null;
  if (!(await ctx.store.updateAnnotation(next))) throw notFound('Annotation', id);
  return annotationToWire(next);
}

export async function deleteAnnotation(ctx: Ctx, id: string): Promise<string> {
  await ownAnnotation(ctx, id);
  if (!(await ctx.store.deleteAnnotation(id))) throw notFound('Annotation', id);
  return id;
}

export interface AnnotationQuery {
  execution_log_id?: string;
  evaluator_id?: string;
  judge_id?: string;
  date_from?: string;
  date_to?: string;
  limit?: number;
  cursor?: string;
}

async function storeFilter(ctx: Ctx, q: AnnotationQuery): Promise<AnnotationFilter> {
  const named = await filterIdsForNames(ctx, { judge_id: q.judge_id, evaluator_id: q.evaluator_id });
  const filter: AnnotationFilter = {
    org_id: ctx.caller.org.id,
    execution_log_id: q.execution_log_id,
    evaluator_id: named.evaluator_id,
    judge_id: named.judge_id,
    date_from: q.date_from ? instant('date_from', q.date_from, false) : undefined,
    date_to: q.date_to ? instant('date_to', q.date_to, true) : undefined,
  };
  if (filter.date_from && filter.date_to && filter.date_from > filter.date_to) {
    throw validationError('date_from is after date_to.', [{ field: 'date_from', message: 'after date_to' }]);
  }
  return filter;
}

export async function listAnnotations(ctx: Ctx, q: AnnotationQuery, maxPageSize: number) {
  const page = await ctx.store.listAnnotations(await storeFilter(ctx, q), pageQuery(q, maxPageSize));
  return toPage(page, annotationToWire);
}

/** Most annotations one from-annotations call copies (judge mode); more is a 400 asking for a date range. */
export const FROM_ANNOTATIONS_MAX = 10_000;

export interface FromAnnotationsResult {
  created: number;
  ids: string[];
  annotations: number;
  skipped: Array<{ execution_log_id: string; reason: string }>;
}

/**
 * Copies annotated runs into a dataset: one item per execution log, with the log's inputs, each
 * annotated evaluator's person score in expected_scores (by evaluator id), and the notes and the
 * log id in metadata. A conversation (turns) is copied as its turns.
 */
export async function itemsFromAnnotations(
  ctx: Ctx,
  datasetIdOrName: string,
  input: { annotation_ids?: string[]; judge_id?: string; date_from?: string; date_to?: string },
): Promise<FromAnnotationsResult> {
  const dataset = await getOwnDataset(ctx, datasetIdOrName);
  const byIds = input.annotation_ids !== undefined;
  if (byIds === (input.judge_id !== undefined)) {
    throw validationError('Give annotation_ids, or judge_id (with date_from/date_to if you like), not both and not neither.', [
      { field: 'annotation_ids', message: 'give this or judge_id' },
    ]);
  }
  if (byIds && (input.date_from || input.date_to)) {
    throw validationError('date_from and date_to go with judge_id, not with annotation_ids.', [{ field: 'date_from', message: 'only with judge_id' }]);
  }
  const annotations: AnnotationRecord[] = [];
  if (byIds) {
    for (const id of new Set(input.annotation_ids)) annotations.push(await ownAnnotation(ctx, id));
  } else {
    const filter = await storeFilter(ctx, { judge_id: input.judge_id, date_from: input.date_from, date_to: input.date_to });
    let after: { created_at: string; id: string } | undefined;
    do {
      const page = await ctx.store.listAnnotations(filter, { limit: 500, after });
      annotations.push(...page.items);
      after = page.last;
      if (annotations.length > FROM_ANNOTATIONS_MAX) {
        throw validationError(`More than ${FROM_ANNOTATIONS_MAX} annotations match; narrow them with date_from and date_to.`, [
          { field: 'judge_id', message: 'too many annotations' },
        ]);
      }
    } while (after);
    if (annotations.length === 0)
      throw validationError(
        `No annotation of judge ${input.judge_id} matches${input.date_from || input.date_to ? ' these dates' : ''}: annotate its runs first (POST /v1/annotations/).`,
        [{ field: 'judge_id', message: 'no annotations' }],
      );
  }
  // Oldest first, grouped by log in the order each log was first annotated.
  annotations.sort((a, b) => (a.created_at === b.created_at ? (a.id < b.id ? -1 : 1) : a.created_at < b.created_at ? -1 : 1));
  const byLog = new Map<string, AnnotationRecord[]>();
  for (const a of annotations) byLog.set(a.execution_log_id, [...(byLog.get(a.execution_log_id) ?? []), a]);

  const inputs: DatasetItemInput[] = [];
  const skipped: FromAnnotationsResult['skipped'] = [];
  for (const [logId, group] of byLog) {
    const log = await ctx.store.getExecutionLog(logId);
    if (!log || log.org_id !== ctx.caller.org.id) {
      skipped.push({ execution_log_id: logId, reason: 'the execution log no longer exists' });
      continue;
    }
    // Annotations of comparison logs made before they were refused: kept, but they make no item.
    if (log.type === 'comparison') {
      skipped.push({ execution_log_id: logId, reason: COMPARISON_REFUSED });
      continue;
    }
    const notes = Object.fromEntries(group.filter((a) => a.note).map((a) => [a.evaluator_id, a.note]));
    // A conversation is copied as its turns (the judged turn is the last one); otherwise request/response.
    inputs.push({
      ...(log.turns?.length
        ? { turns: log.turns, ...(log.system_prompt ? { system_prompt: log.system_prompt } : {}) }
        : { response: log.response, ...(log.request !== null ? { request: log.request } : {}) }),
      ...(log.contexts ? { contexts: log.contexts } : {}),
      ...(log.expected_output !== null ? { expected_output: log.expected_output } : {}),
      tags: log.tags,
      metadata: { execution_log_id: log.id, annotation_ids: group.map((a) => a.id), ...(Object.keys(notes).length ? { notes } : {}) },
      expected_scores: Object.fromEntries(group.map((a) => [a.evaluator_id, a.score])),
    });
  }
  const now = new Date().toISOString();
  const ids: string[] = [];
  for (let i = 0; i < inputs.length; i += 1000) {
    const items = inputs.slice(i, i + 1000).map((x) => newItem(x, now));
    if (!(await ctx.store.addDatasetItems(dataset.id, items))) throw notFound('Dataset', datasetIdOrName);
    ids.push(...items.map((x) => x.id));
  }
  return { created: ids.length, ids, annotations: annotations.length, skipped };
}
