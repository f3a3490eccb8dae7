// Batch runs (SPEC section 7), the API the doors and other features use: start a run over a dataset
// or given items, read it (404 when unknown or another organization's), its rows in item order,
// list runs, cancel. The work itself is done by the batch queue (queue.ts), which each server starts.
import { performance } from 'node:perf_hooks';
import type { RequestContext } from '../context.ts';
import { notFound, TribunalError, validationError } from '../errors.ts';
import { newId } from '../ids.ts';
import { getOwnDataset } from '../datasets/datasets.ts';
import { pageQuery, toPage } from '../domain/pagination.ts';
import type { DatasetItemInput } from '../schemas.ts';
import type { BatchExecution, BatchRow, BatchStatus } from '../schemas/batches.ts';
import type { BatchExecutionRecord, BatchRowRecord, BatchRowScores, DatasetRecord, EvaluatorRecord, JudgeRecord, Store } from '../store/types.ts';
import { batchSummary } from './summary.ts';
import { cancelSettleMs } from './status-reads.ts';
import { log } from '../log.ts';
import { checkBatchQuota } from '../quotas/quotas.ts';
import { assertBudgetOpen } from '../budgets/budgets.ts';
import { assertProviderBatchable, cancelProviderBatches, type BatchMode } from './provider-mode.ts';

/** What a started run is handed to: the runner of this process, when one runs. */
export interface BatchDispatcher {
  dispatch(batch: BatchExecutionRecord): Promise<void>;
}
const dispatchers = new WeakMap<Store, BatchDispatcher>();
/** The runner of a store registers here, so that a run started through that store starts at once. */
export function registerDispatcher(store: Store, dispatcher: BatchDispatcher | null): void {
  if (dispatcher) dispatchers.set(store, dispatcher);
  else dispatchers.delete(store);
}

export const batchToWire = ({ org_id: _o, key_id: _k, planned: _p, planned_all: _a, plan_cursor: _c, ...wire }: BatchExecutionRecord): BatchExecution => ({
  ...wire,
  mode: wire.mode ?? 'live',
});
export const rowToWire = ({ cost_usd: _c, ...row }: BatchRowRecord): BatchRow => row;

export type BatchTarget = { judge: JudgeRecord } | { evaluator: EvaluatorRecord };
/** `dataset`: a door that has read the dataset already hands it over, so a start reads it once. */
export type BatchSource = { dataset_id: string } | { dataset: DatasetRecord } | { items: DatasetItemInput[] };

export const MAX_INLINE_ITEMS = 1000;

export async function startBatch(
  ctx: RequestContext,
  target: BatchTarget,
  source: BatchSource,
  options: { tags?: string[]; use_cache?: boolean; budget_usd?: number; mode?: BatchMode },
): Promise<BatchExecution> {
  let datasetId: string | null = null;
  let total: number;
  let items: DatasetItemInput[] | undefined;
  if (!('items' in source)) {
    const dataset = 'dataset' in source ? source.dataset : await getOwnDataset(ctx, source.dataset_id);
    datasetId = dataset.id;
    total = dataset.item_count;
  } else {
    if (!source.items.length || source.items.length > MAX_INLINE_ITEMS) {
      throw validationError(`items must hold 1 to ${MAX_INLINE_ITEMS} items; for more, put them in a dataset.`, [{ field: 'items', message: `1..${MAX_INLINE_ITEMS} items` }]);
    }
    items = source.items;
    total = items.length;
  }
  // Budgets (room h-cost): a spent cap refuses the run at its start (429 budget_exceeded).
  const evaluatorIds = 'judge' in target ? target.judge.evaluators.map((e) => e.id) : [target.evaluator.id];
  await assertBudgetOpen(ctx.store, ctx.config, { orgId: ctx.caller.org.id, evaluatorIds });
  // Issue 32: every model must have a batch API; refused now, naming the model, not row by row.
  if (options.mode === 'provider_batch') await assertProviderBatchable(ctx, target);
  const now = new Date().toISOString();
  const record: BatchExecutionRecord = {
    id: newId('bat'),
    org_id: ctx.caller.org.id,
    key_id: ctx.caller.key.id,
    judge_id: 'judge' in target ? target.judge.id : null,
    judge_version: 'judge' in target ? target.judge.version : null,
    evaluator_id: 'evaluator' in target ? target.evaluator.id : null,
    dataset_id: datasetId,
    status: 'queued',
    total,
    done: 0,
    failed: 0,
    started_at: null,
    finished_at: null,
    cost_usd: 0,
    summary: [],
    tags: options.tags ?? [],
    use_cache: options.use_cache ?? false,
    error: null,
    created_at: now,
    planned: 0,
    planned_all: false,
    plan_cursor: null,
    // The evaluator's version is fixed like the judge's: a resumed run scores as it started.
    ...('evaluator' in target ? { evaluator_version: target.evaluator.version } : {}),
    ...(options.mode === 'provider_batch' ? { mode: 'provider_batch' as const } : {}),
  };
  await checkBatchQuota(ctx, total); // h-harden: runs in flight and rows per day, before anything is stored
  // Budgets (room h-cost): the run's own total cap, before any row can run.
  if (options.budget_usd !== undefined) await ctx.store.setBudgetCap({ org_id: record.org_id, scope: 'batch', scope_id: record.id, period: 'total', cap_usd: options.budget_usd });
  await ctx.store.createBatchExecution(record, items);
  // Without a runner in this process the run waits: every runner resumes queued runs when it starts.
  // The run is stored: a failure to hand it out now is not the caller's (the runners look for
  // unfinished runs by themselves), so it is logged, not answered.
  await dispatchers
    .get(ctx.store)
    ?.dispatch(record)
    .catch((err) => log.warn(`batch ${record.id}: not handed out yet (${(err as Error).message}); it starts when a runner finds it`));
  return batchToWire(record);
}

/** A run of the caller's organization; 404 when unknown or another's. */
export async function getVisibleBatch(ctx: Pick<RequestContext, 'store' | 'caller'>, id: string): Promise<BatchExecutionRecord> {
  const batch = await ctx.store.getBatchExecution(id);
  if (!batch || batch.org_id !== ctx.caller.org.id) throw notFound('Batch execution', id);
  return batch;
}

/** Every row of a run in item order, a page at a time underneath. */
export async function* batchRows(store: Store, batchId: string, pageSize = 200): AsyncGenerator<BatchRow> {
  let after: number | undefined;
  for (;;) {
    const page = await store.listBatchRows(batchId, { limit: pageSize, after });
    for (const row of page.items) yield rowToWire(row);
    if (page.last === undefined) return;
    after = page.last;
  }
}

/** Every row of a run cut to its scores (no justifications), in item order, a page at a time underneath. */
export async function* batchRowScores(store: Store, batchId: string, pageSize = 1000): AsyncGenerator<BatchRowScores> {
  let after: number | undefined;
  for (;;) {
    const page = await store.listBatchRowScores(batchId, { limit: pageSize, after });
    yield* page.items;
    if (page.last === undefined) return;
    after = page.last;
  }
}

export interface BatchListQuery {
  judge_id?: string;
  dataset_id?: string;
  status?: BatchStatus;
  date_from?: string;
  date_to?: string;
  limit?: number;
  cursor?: string;
}

export async function listBatches(ctx: Pick<RequestContext, 'store' | 'caller'>, q: BatchListQuery, maxPageSize: number) {
  const page = await ctx.store.listBatchExecutions(
    { org_id: ctx.caller.org.id, judge_id: q.judge_id, dataset_id: q.dataset_id, status: q.status, date_from: q.date_from, date_to: q.date_to },
    pageQuery(q, maxPageSize),
  );
  return toPage(page, batchToWire);
}

const rowCursor = (cursor: string | undefined): number | undefined => {
  if (cursor === undefined || cursor === '') return undefined;
  const match = /^p(\d{1,9})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match)
    throw validationError('cursor is not a cursor this server issued: pass `next_cursor` from the previous page unchanged.', [{ field: 'cursor', message: 'invalid cursor' }]);
  return Number(match[1]);
};

/** A page of a run's rows in item order; the cursor is the last row's position. */
export async function listBatchResults(ctx: Pick<RequestContext, 'store' | 'caller'>, id: string, q: { limit?: number; cursor?: string }, maxPageSize: number) {
  const batch = await getVisibleBatch(ctx, id);
  const { limit } = pageQuery({ limit: q.limit }, maxPageSize);
  const page = await ctx.store.listBatchRows(batch.id, { limit, after: rowCursor(q.cursor) });
  return { results: page.items.map(rowToWire), next_cursor: page.last === undefined ? null : Buffer.from(`p${page.last}`).toString('base64url') };
}

const TERMINAL: BatchStatus[] = ['completed', 'failed', 'cancelled'];
export const isTerminal = (status: BatchStatus) => TERMINAL.includes(status);

/** A run that has ended cannot be cancelled: 409, saying how it ended (issue 26). */
const alreadyEnded = (batch: BatchExecutionRecord) =>
  new TribunalError(
    'conflict',
    409,
    `Batch run ${batch.id} has already ended (${batch.status}); only a queued or running run can be cancelled. Its rows and summary are kept as they are.`,
    {
      extra: { batch_status: batch.status },
    },
  );

/** Stops a run: rows not started are never scored; rows in flight finish and are kept. A run that has ended answers 409. */
export async function cancelBatch(ctx: Pick<RequestContext, 'store' | 'caller' | 'config'>, id: string): Promise<BatchExecution> {
  const batch = await getVisibleBatch(ctx, id);
  if (isTerminal(batch.status)) throw alreadyEnded(batch);
  const now = new Date().toISOString();
  const cancelled = await ctx.store.updateBatchExecution(batch.id, { status: 'cancelled', finished_at: now, if_status: ['queued', 'running'] });
  // It ended between the read and the write (its last row, or another cancel): as above.
  if (!cancelled) throw alreadyEnded(await getVisibleBatch(ctx, id));
  const written = performance.now();
  await cancelProviderBatches(ctx, cancelled); // issue 32
  const summed = await ctx.store.updateBatchExecution(batch.id, { summary: await batchSummary(ctx.store, cancelled) });
  // Answered once every instance's cancel checks read after the write (status-reads.ts).
  const settle = cancelSettleMs(ctx.store) - (performance.now() - written);
  if (settle > 0) await new Promise((r) => setTimeout(r, settle));
  return batchToWire(summed ?? cancelled);
}
