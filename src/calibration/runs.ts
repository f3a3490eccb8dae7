// Calibration runs (SPEC section 8): a batch run of a judge (or one evaluator) over a dataset whose
// items carry expected_scores, plus the agreement metrics. The run's status follows its batch; the
// metrics are computed once the batch has completed (on the first read that sees it) and stored.
import { batchRowScores, batchRows, getVisibleBatch, isTerminal, startBatch } from '../batch/batches.ts';
import type { RequestContext } from '../context.ts';
import type { ScoringEngine } from '../runs/types.ts';
import { getDatasetItems } from './items.ts';
import { getOwnDataset } from '../datasets/datasets.ts';
import { getVisibleEvaluator } from '../domain/evaluators.ts';
import { assertRunnable, getVisibleJudge, loadJudgeEvaluators } from '../domain/judges.ts';
import { pageQuery, toPage } from '../domain/pagination.ts';
import { notFound, validationError } from '../errors.ts';
import { newId } from '../ids.ts';
import type { CalibrationMetrics, CalibrationRun } from '../schemas/calibration.ts';
import type { BatchRowScores, CalibrationRunFilter, CalibrationRunRecord, DatasetItemRecord as DatasetItem, EvaluatorRecord, Store } from '../store/types.ts';
import type { BatchRow } from '../schemas/batches.ts';
import { agreementMetrics } from './metrics.ts';
import { intervalsAndEce } from './fitness.ts'; // h-review

type ReadCtx = Pick<RequestContext, 'store' | 'caller'>;
type VersionRef = CalibrationRunRecord['evaluator_versions'][number];

export const DEFAULT_THRESHOLD = 0.5;

/** The person's score for an evaluator on an item: by evaluator id first, then by exact name. */
export function expectedFor(item: Pick<DatasetItem, 'expected_scores'>, ref: Pick<VersionRef, 'evaluator_id' | 'evaluator_name'>): number | null {
  const scores = item.expected_scores;
  if (!scores) return null;
  if (Object.hasOwn(scores, ref.evaluator_id)) return scores[ref.evaluator_id];
  if (Object.hasOwn(scores, ref.evaluator_name)) return scores[ref.evaluator_name];
  return null;
}

/** Refuses a dataset where no item has an expected score for any of the evaluators, saying what to add. */
async function assertLabelled(store: Store, datasetId: string, datasetName: string, refs: VersionRef[]): Promise<void> {
  for await (const item of getDatasetItems(store, datasetId)) {
    if (refs.some((r) => expectedFor(item, r) !== null)) return;
  }
  const example = JSON.stringify(Object.fromEntries(refs.slice(0, 2).map((r) => [r.evaluator_name, 0.8])));
  throw validationError(
    `Dataset ${datasetName} has no expected_scores for ${refs.length === 1 ? 'the evaluator' : 'any of the evaluators'} ${refs.map((r) => `${r.evaluator_name} (${r.evaluator_id})`).join(', ')}: ` +
      `give its items the scores a person would give, keyed by evaluator id or exact name, e.g. "expected_scores": ${example} ` +
      '(PATCH /v1/datasets/{id}/items/{item_id}/, or copy annotated runs with POST /v1/datasets/{id}/items/from-annotations/).',
    [{ field: 'dataset_id', message: 'no expected_scores for these evaluators' }],
  );
}

export interface StartInput {
  judge_id?: string;
  evaluator_id?: string;
  dataset_id: string;
  threshold?: number;
  /** Issue 32: the batch's model calls through the provider's batch API. */
  mode?: 'live' | 'provider_batch';
}

/** The last completed run of the same judge (or evaluator) on the same dataset, for side-by-side metrics. */
async function previousRun(ctx: ReadCtx, target: Pick<CalibrationRunRecord, 'judge_id' | 'evaluator_id' | 'dataset_id'>, before?: string): Promise<CalibrationRunRecord | null> {
  const filter: CalibrationRunFilter = { org_id: ctx.caller.org.id, dataset_id: target.dataset_id, status: 'completed' };
  if (target.judge_id) filter.judge_id = target.judge_id;
  else filter.evaluator_id = target.evaluator_id!;
  const { items } = await ctx.store.listCalibrationRuns(filter, { limit: 20 });
  return items.find((r) => r.id !== before) ?? null;
}

/** `engine` checks that the evaluators have a model to score with before the run starts. */
export async function startCalibrationRun(ctx: RequestContext & { engine: Pick<ScoringEngine, 'assertCanScore'> }, input: StartInput): Promise<CalibrationRun> {
  if ((input.judge_id === undefined) === (input.evaluator_id === undefined)) {
    throw validationError('Give judge_id or evaluator_id (the judge or the one evaluator to calibrate), not both.', [
      { field: 'judge_id', message: 'give judge_id or evaluator_id' },
    ]);
  }
  const dataset = await getOwnDataset(ctx, input.dataset_id);
  let refs: VersionRef[];
  let record: Pick<CalibrationRunRecord, 'judge_id' | 'judge_version' | 'evaluator_id'>;
  let target: { judge: Awaited<ReturnType<typeof getVisibleJudge>> } | { evaluator: EvaluatorRecord };
  if (input.judge_id !== undefined) {
    const judge = await getVisibleJudge(ctx, input.judge_id);
    assertRunnable(judge);
    const evaluators = await loadJudgeEvaluators(ctx, judge);
    await ctx.engine.assertCanScore(ctx, evaluators);
    refs = evaluators.map((e) => ({ evaluator_id: e.id, evaluator_name: e.name, version: e.version }));
    record = { judge_id: judge.id, judge_version: judge.version, evaluator_id: null };
    target = { judge };
  } else {
    const evaluator = await getVisibleEvaluator(ctx, input.evaluator_id!);
    await ctx.engine.assertCanScore(ctx, [evaluator]);
    refs = [{ evaluator_id: evaluator.id, evaluator_name: evaluator.name, version: evaluator.version }];
    record = { judge_id: null, judge_version: null, evaluator_id: evaluator.id };
    target = { evaluator };
  }
  await assertLabelled(ctx.store, dataset.id, dataset.name, refs);
  const previous = await previousRun(ctx, { ...record, dataset_id: dataset.id });
  const batch = await startBatch(ctx, target, { dataset }, { tags: ['calibration'], ...(input.mode ? { mode: input.mode } : {}) });
  const run: CalibrationRunRecord = {
    id: newId('cal'),
    org_id: ctx.caller.org.id,
    status: batch.status,
    ...record,
    dataset_id: dataset.id,
    threshold: input.threshold ?? DEFAULT_THRESHOLD,
    batch_execution_id: batch.id,
    evaluator_versions: refs,
    metrics: null,
    previous_run_id: previous?.id ?? null,
    created_at: new Date().toISOString(),
    finished_at: null,
  };
  await ctx.store.createCalibrationRun(run);
  return toWire(ctx, run);
}

/** One (item, evaluator) pair of a finished run: what the person said and what the judge said. */
export interface CalibrationPair {
  item_id: string;
  evaluator_id: string;
  expected: number;
  score: number | null;
  justification: string | null;
  execution_log_id: string | null;
  /** The judge's confidence in its score, when the result had one (reliability.ts). */
  confidence: number | null;
}

/**
 * Every labelled pair of a run, in item order: items with an expected score for one of its
 * evaluators. `justifications: false` (the metrics) reads the rows' scores only, not whole rows.
 */
export async function runPairs(
  store: Store,
  run: CalibrationRunRecord,
  opts: { justifications?: boolean } = {},
): Promise<{ pairs: CalibrationPair[]; items: Map<string, DatasetItem> }> {
  const items = new Map<string, DatasetItem>();
  for await (const item of getDatasetItems(store, run.dataset_id)) {
    if (run.evaluator_versions.some((r) => expectedFor(item, r) !== null)) items.set(item.id, item);
  }
  const pairs: CalibrationPair[] = [];
  const rows: AsyncIterable<BatchRowScores | BatchRow> =
    opts.justifications === false ? batchRowScores(store, run.batch_execution_id) : batchRows(store, run.batch_execution_id, 1000);
  for await (const row of rows) {
    const item = row.item_id === null ? undefined : items.get(row.item_id);
    if (!item) continue;
    for (const ref of run.evaluator_versions) {
      const expected = expectedFor(item, ref);
      if (expected === null) continue;
      const result = row.evaluator_results.find((r: { evaluator_id: string }) => r.evaluator_id === ref.evaluator_id);
      pairs.push({
        item_id: item.id,
        evaluator_id: ref.evaluator_id,
        expected,
        score: result?.score ?? null,
        justification: (result && 'justification' in result ? result.justification : null) ?? row.error ?? null,
        execution_log_id: row.execution_log_id,
        confidence: result && typeof result.confidence === 'number' ? result.confidence : null,
      });
    }
  }
  return { pairs, items };
}

/** The metrics of each evaluator that has at least one expected score, in the run's evaluator order. */
export function metricsOf(run: Pick<CalibrationRunRecord, 'evaluator_versions' | 'threshold'>, pairs: CalibrationPair[]): CalibrationMetrics[] {
  const out: CalibrationMetrics[] = [];
  for (const ref of run.evaluator_versions) {
    const mine = pairs.filter((p) => p.evaluator_id === ref.evaluator_id);
    if (!mine.length) continue;
    const scored = mine.filter((p) => p.score !== null);
    const m = agreementMetrics(
      scored.map((p) => p.expected),
      scored.map((p) => p.score!),
      run.threshold,
    );
    // h-review: 95% bootstrap intervals; ECE and reliability bins of the confidence (SPEC sections 16, 17).
    const extra = intervalsAndEce(
      scored.map((p) => p.expected),
      scored.map((p) => p.score!),
      run.threshold,
      scored.map((p) => p.confidence),
    );
    out.push({ evaluator_id: ref.evaluator_id, evaluator_name: ref.evaluator_name, evaluator_version: ref.version, ...m, ...extra });
  }
  return out;
}

/** Brings a run up to date with its batch: status, finished_at, and the metrics once it completed. */
export async function refreshRun(store: Store, run: CalibrationRunRecord): Promise<CalibrationRunRecord> {
  if (isTerminal(run.status) && (run.status !== 'completed' || run.metrics !== null)) return run;
  const batch = await store.getBatchExecution(run.batch_execution_id);
  if (!batch) {
    const failed: CalibrationRunRecord = { ...run, status: 'failed', finished_at: run.finished_at ?? new Date().toISOString() };
    await store.updateCalibrationRun(failed);
    return failed;
  }
  if (batch.status === run.status && !(batch.status === 'completed' && run.metrics === null)) return run;
  const next: CalibrationRunRecord = { ...run, status: batch.status, finished_at: batch.finished_at };
  if (batch.status === 'completed') next.metrics = metricsOf(run, (await runPairs(store, run, { justifications: false })).pairs);
  await store.updateCalibrationRun(next);
  return next;
}

export async function ownRun(ctx: ReadCtx, id: string): Promise<CalibrationRunRecord> {
  const run = await ctx.store.getCalibrationRun(id);
  if (!run || run.org_id !== ctx.caller.org.id) throw notFound('Calibration run', id);
  return refreshRun(ctx.store, run);
}

async function toWire(ctx: ReadCtx, { org_id: _org, ...run }: CalibrationRunRecord): Promise<CalibrationRun> {
  const previous = run.previous_run_id ? await ctx.store.getCalibrationRun(run.previous_run_id) : null;
  return { ...run, previous_metrics: previous?.metrics ?? null };
}

export const getCalibrationRun = async (ctx: ReadCtx, id: string) => toWire(ctx, await ownRun(ctx, id));

export interface RunListQuery {
  judge_id?: string;
  evaluator_id?: string;
  dataset_id?: string;
  status?: CalibrationRun['status'];
  limit?: number;
  cursor?: string;
}

export async function listCalibrationRuns(ctx: ReadCtx, q: RunListQuery, maxPageSize: number) {
  const filter: CalibrationRunFilter = { org_id: ctx.caller.org.id, status: q.status };
  if (q.judge_id !== undefined) filter.judge_id = (await getVisibleJudge(ctx, q.judge_id)).id;
  if (q.evaluator_id !== undefined) filter.measures_evaluator_id = (await getVisibleEvaluator(ctx, q.evaluator_id)).id;
  if (q.dataset_id !== undefined) filter.dataset_id = (await getOwnDataset(ctx, q.dataset_id)).id;
  const page = await ctx.store.listCalibrationRuns(filter, pageQuery(q, maxPageSize));
  const fresh = await Promise.all(page.items.map((r) => refreshRun(ctx.store, r)));
  const wire = await Promise.all(fresh.map((r) => toWire(ctx, r)));
  return toPage({ ...page, items: wire }, (r) => r);
}

/** Offset cursors for the items of a run (sorted in memory, so a position is stable for a finished run). */
const offsetCursor = (cursor: string | undefined): number => {
  if (cursor === undefined || cursor === '') return 0;
  const match = /^o(\d{1,9})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match)
    throw validationError('cursor is not a cursor this server issued: pass `next_cursor` from the previous page unchanged.', [{ field: 'cursor', message: 'invalid cursor' }]);
  return Number(match[1]);
};

export interface RunItem extends CalibrationPair {
  difference: number | null;
  note: string | null;
}

/** A note for an item and evaluator: the one from-annotations copied (metadata.notes), else metadata.note. */
export function noteFor(item: DatasetItem | undefined, evaluatorId: string): string | null {
  const meta = item?.metadata ?? {};
  const notes = meta.notes;
  if (notes && typeof notes === 'object' && typeof (notes as Record<string, unknown>)[evaluatorId] === 'string') return (notes as Record<string, string>)[evaluatorId];
  return typeof meta.note === 'string' ? meta.note : null;
}

/** Every labelled pair of a finished run, largest absolute difference first; pairs the judge did not score last. */
export async function runItems(ctx: ReadCtx, run: CalibrationRunRecord, evaluatorId?: string): Promise<RunItem[]> {
  const { pairs, items } = await runPairs(ctx.store, run);
  const rows = pairs
    .filter((p) => evaluatorId === undefined || p.evaluator_id === evaluatorId)
    .map((p) => ({ ...p, difference: p.score === null ? null : p.score - p.expected, note: noteFor(items.get(p.item_id), p.evaluator_id) }));
  const key = (r: RunItem) => (r.difference === null ? -1 : Math.abs(r.difference));
  return rows.sort((a, b) => key(b) - key(a));
}

// The sorted items of a few completed runs are kept, so that paging through a large run reads the
// dataset and the rows once, not once per page. The key holds the dataset's updated_at: an edited
// expected score or note is seen on the next page read.
const RECENT_RUNS = 8;
const recentItems = new Map<string, RunItem[]>();

async function sortedItems(ctx: ReadCtx, run: CalibrationRunRecord, evaluatorId: string | undefined): Promise<RunItem[]> {
  const dataset = await ctx.store.getDataset(run.dataset_id);
  const key = `${run.id} ${evaluatorId ?? ''} ${dataset?.updated_at ?? 'gone'}`;
  const kept = recentItems.get(key);
  if (kept) {
    recentItems.delete(key);
    recentItems.set(key, kept);
    return kept;
  }
  const items = await runItems(ctx, run, evaluatorId);
  recentItems.set(key, items);
  if (recentItems.size > RECENT_RUNS) recentItems.delete(recentItems.keys().next().value!);
  return items;
}

export async function listRunItems(ctx: ReadCtx, id: string, q: { evaluator_id?: string; limit?: number; cursor?: string }, maxPageSize: number) {
  const run = await ownRun(ctx, id);
  const { limit } = pageQuery({ limit: q.limit }, maxPageSize);
  const from = offsetCursor(q.cursor);
  if (run.status !== 'completed') return { status: run.status, results: [], next_cursor: null };
  let evaluatorId = q.evaluator_id;
  if (evaluatorId !== undefined) {
    const ref = run.evaluator_versions.find((r) => r.evaluator_id === evaluatorId || r.evaluator_name === evaluatorId);
    if (!ref) throw validationError(`Evaluator ${JSON.stringify(evaluatorId)} was not measured by this run.`, [{ field: 'evaluator_id', message: 'not in this run' }]);
    evaluatorId = ref.evaluator_id;
  }
  const all = await sortedItems(ctx, run, evaluatorId);
  const results = all.slice(from, from + limit);
  return { status: run.status, results, next_cursor: from + limit < all.length ? Buffer.from(`o${from + limit}`).toString('base64url') : null };
}

/** For the web and the CLI: the run waits for its batch. */
export const batchOf = (ctx: ReadCtx, run: CalibrationRunRecord) => getVisibleBatch(ctx, run.batch_execution_id);
