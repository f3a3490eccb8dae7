// The units of a batch run, shared by the in-process runner (JSON store) and the pg-boss workers
// (PostgreSQL): planning the next chunk of rows, running a chunk's rows, and ending the run.
//
// Exactly once per row: a row's execution log has an id fixed by (run, position), and the row is
// recorded at most once per position (Store.recordBatchRow). Before scoring, a row already recorded
// is skipped, and a row whose log exists (a crash between the log and the row) is recorded from the
// log without calling the model again (looked for unless the queue knows the chunk is on its first
// attempt); a second writer of the same log is refused by the store, and the row recorded from it.
import type { Caller } from '../auth.ts';
import { sha256hex } from '../sha256.ts';
import type { RequestContext } from '../context.ts';
import { TribunalError } from '../errors.ts';
import type { PreparedRun, RunOptions, ScoringEngine, SpendHolder } from '../runs/types.ts';
import type { JudgeModel } from '../engine/providers/model.ts';
import { ResilientJudgeModel, type BatchGate } from '../engine/providers/resilient-model.ts';
import type { DatasetItemInput, EvaluatorResult, ExecutionInput } from '../schemas.ts';
import type { BatchStatus } from '../schemas/batches.ts';
import {
  StoreConflictError,
  type BatchExecutionRecord,
  type BatchRowRecord,
  type DatasetItemRecord,
  type EvaluatorRecord,
  type ExecutionLogRecord,
  type JudgeRecord,
  type Store,
} from '../store/types.ts';
import { isTerminal } from './batches.ts';
import type { RunStatusReads } from './status-reads.ts';
import { batchSummary } from './summary.ts';

export interface ChunkRow {
  item_id: string | null;
  index: number | null;
  item: DatasetItemInput;
}
/** Rows first..first+rows.length-1 of a run, with their inputs. */
export interface Chunk {
  batch_id: string;
  first: number;
  rows: ChunkRow[];
}

export interface BatchEnv {
  store: Store;
  /** The cancel checks' reads of a run, shared by the asks made at once (status-reads.ts). */
  status: RunStatusReads;
  engine: ScoringEngine;
  ctx: Omit<RequestContext, 'caller'>;
}

/** The log id of row `position` of a run: the same on every instance and after every restart. */
export const rowLogId = (batchId: string, position: number) => `log_${sha256hex(`${batchId}:${position}`).slice(0, 32)}`;

/** Where the planner is: rows handed out, the dataset cursor, and whether it is done. */
export interface PlanState {
  planned: number;
  cursor: number | null;
}

/** The next chunk of a run (null when every row is handed out), reading the dataset one page at a time. */
export async function planNext(store: Store, batch: BatchExecutionRecord, state: PlanState, size: number): Promise<{ chunk: Chunk | null; state: PlanState; end: boolean }> {
  const left = batch.total - state.planned;
  if (left <= 0) return { chunk: null, state, end: true };
  const n = Math.min(size, left);
  if (!batch.dataset_id) {
    const items = await store.getBatchItems(batch.id, state.planned, n);
    const rows = items.map((item, i) => ({ item_id: null, index: state.planned + i, item }));
    const next = { planned: state.planned + rows.length, cursor: null };
    return { chunk: rows.length ? { batch_id: batch.id, first: state.planned, rows } : null, state: next, end: !rows.length || next.planned >= batch.total };
  }
  if (!(await store.getDataset(batch.dataset_id))) throw new DatasetGone(batch.dataset_id);
  const page = await store.listDatasetItems(batch.dataset_id, { limit: n, after: state.cursor ?? undefined });
  const rows = page.items.map((item) => ({ item_id: item.id, index: null, item: itemInput(item) }));
  const next = { planned: state.planned + rows.length, cursor: page.last ?? state.cursor };
  const end = !rows.length || next.planned >= batch.total || page.last === undefined;
  return { chunk: rows.length ? { batch_id: batch.id, first: state.planned, rows } : null, state: next, end };
}

/** A dataset item as a run's inputs: request/response, or a conversation (turns with its system prompt). */
const itemInput = (item: DatasetItemRecord): DatasetItemInput => ({
  ...(item.response !== null ? { response: item.response } : {}),
  ...(item.request !== null ? { request: item.request } : {}),
  ...(item.turns ? { turns: item.turns } : {}),
  ...(item.system_prompt ? { system_prompt: item.system_prompt } : {}),
  ...(item.contexts !== null ? { contexts: item.contexts } : {}),
  ...(item.expected_output !== null ? { expected_output: item.expected_output } : {}),
  ...(item.attachments?.length ? { attachments: item.attachments } : {}), // h-attach
  tags: item.tags,
});

export class DatasetGone extends Error {
  constructor(readonly datasetId: string) {
    super(`dataset ${datasetId} was deleted during the run; the rows scored before are kept`);
  }
}

/** The caller a run's rows run as: the organization and key that started it. */
export async function batchCaller(store: Store, batch: BatchExecutionRecord): Promise<Caller | null> {
  const [org, key] = await Promise.all([store.getOrganization(batch.org_id), store.getApiKey(batch.key_id)]);
  return org && key ? { org, key } : null;
}

export type Target = { judge: JudgeRecord } | { evaluator: EvaluatorRecord };

/** The exact judge (or evaluator) version the run started with; null when it was deleted since. */
export async function batchTarget(store: Store, batch: BatchExecutionRecord): Promise<Target | null> {
  if (batch.judge_id) {
    const judge = await store.getJudgeVersion(batch.judge_id, batch.judge_version ?? 0);
    return judge && (await store.getJudge(batch.judge_id)) ? { judge } : null;
  }
  const version = (batch as { evaluator_version?: number }).evaluator_version;
  const evaluator = version ? await store.getEvaluatorVersion(batch.evaluator_id!, version) : await store.getEvaluator(batch.evaluator_id!);
  return evaluator && (await store.getEvaluator(batch.evaluator_id!)) ? { evaluator } : null;
}

/** Positions of this chunk already recorded. */
export async function recordedIn(store: Store, chunk: Chunk): Promise<Set<number>> {
  const page = await store.listBatchRowScores(chunk.batch_id, { limit: chunk.rows.length, after: chunk.first - 1 });
  return new Set(page.items.map((r) => r.position).filter((p) => p < chunk.first + chunk.rows.length));
}

const fromLog = (position: number, row: ChunkRow, log: Pick<ExecutionLogRecord, 'id' | 'score' | 'evaluator_results' | 'cost_usd'>, error: string | null): BatchRowRecord => ({
  position,
  item_id: row.item_id,
  index: row.index,
  execution_log_id: log.id,
  score: log.score,
  evaluator_results: log.evaluator_results,
  error: log.score === null ? (error ?? 'no evaluator gave a score') : null,
  cost_usd: log.cost_usd,
});

/** A failed row's cost: null when any call's cost is unknown. */
const costOf = (results: EvaluatorResult[]) => results.reduce<number | null>((sum, r) => (sum === null || r.cost_usd === null ? null : sum + r.cost_usd), 0);

/**
 * The target's versions and models for a run's rows, loaded once per run (prepared-runs.ts). Null when
 * loading fails: each row then loads them itself and fails (or is recorded failed) as it always has.
 */
export const prepareRun = (env: BatchEnv, caller: Caller, target: Target): Promise<PreparedRun | null> => env.engine.prepare({ ...env.ctx, caller }, target).catch(() => null);

/**
 * Throws once the run has ended (cancelled, failed): asked before each of a row's model calls
 * starts, so that no call starts after a cancel was answered, even one that waited for a slot.
 */
function stillRunning(status: RunStatusReads, batchId: string): Promise<void> | undefined {
  const now = status.read(batchId);
  return now instanceof Promise ? now.then(refuseEnded) : refuseEnded(now);
}

function refuseEnded(now: BatchStatus | null): undefined {
  if (!now || isTerminal(now)) throw new Error(`The batch run was ${now ?? 'deleted'} before this judge-model call started.`);
  return undefined;
}

/**
 * The gate of a run's model calls (stillRunning), made once per chunk and shared by its rows: it
 * throws, or answers a promise that rejects, once the run has ended; where the store holds the
 * status in memory it answers at once, without a promise.
 */
export const runGate =
  (status: RunStatusReads, batchId: string): BatchGate =>
  () =>
    stillRunning(status, batchId);

type Retarget = NonNullable<RunOptions['retarget']>;

/**
 * RunOptions.retarget of a live run's rows: each model is swapped for its batch view
 * (ResilientJudgeModel.forBatch), whose calls wait behind interactive calls and pass `gate` before
 * they start. Made once per chunk: each target is retargeted once and the same copy handed to
 * every row (a model that is not a ResilientJudgeModel makes no call of its own and is kept).
 */
export function liveRetarget(gate: BatchGate): Retarget {
  const views = new Map<JudgeModel, JudgeModel>();
  const done = new Map<object, object>();
  return <T extends Parameters<Retarget>[0]>(target: T): T => {
    let swapped = done.get(target) as T | undefined;
    if (swapped) return swapped;
    const model = target.model;
    if (!(model instanceof ResilientJudgeModel)) return target;
    let view = views.get(model);
    if (!view) views.set(model, (view = model.forBatch(gate)));
    swapped = { ...target, model: view };
    done.set(target, swapped);
    return swapped;
  };
}

/** Scores one row and records it; answers whether this call recorded it. Store failures are thrown (the chunk is retried). */
export async function runRow(
  env: BatchEnv,
  caller: Caller,
  batch: BatchExecutionRecord,
  target: Target,
  position: number,
  row: ChunkRow,
  retarget: Retarget, // the row's models: their batch views (liveRetarget), or a provider_batch row's (batch/provider-mode.ts)
  prepared?: PreparedRun, // the target's versions and models, loaded once per run (prepared-runs.ts)
  fresh = false, // the chunk's first attempt: the row cannot have a log yet (ChunkRunner.runChunk)
): Promise<boolean> {
  const logId = rowLogId(batch.id, position);
  const existing = fresh ? null : await env.store.getExecutionLog(logId);
  if (existing) return env.store.recordBatchRow(batch.id, fromLog(position, row, existing, null));
  const input = {
    ...row.item,
    tags: [...new Set([...batch.tags, ...(row.item.tags ?? [])])],
    ...(batch.use_cache ? { use_cache: true } : {}),
  } as ExecutionInput;
  delete (input as { metadata?: unknown }).metadata;
  delete (input as { expected_scores?: unknown }).expected_scores;
  const ctx: RequestContext = { ...env.ctx, caller };
  // Budgets: an uncapped run's spend comes back in `spend`, to be counted with the row (one statement).
  const spend: SpendHolder = {};
  const options = { batch_execution_id: batch.id, log_id: logId, spend, retarget, ...(prepared ? { prepared } : {}) };
  let record: BatchRowRecord;
  try {
    const result = await ('judge' in target ? env.engine.runJudge(ctx, target.judge, input, options) : env.engine.runEvaluator(ctx, target.evaluator, input, options));
    record = fromLog(position, row, { id: result.execution_log_id, score: result.score, evaluator_results: result.evaluator_results, cost_usd: result.cost_usd }, null);
    // Every evaluator failed: the row is recorded as failed, with its log and each evaluator's error.
    if (result.failed) record = { ...record, score: null, error: result.failed.message, cost_usd: costOf(result.evaluator_results) };
  } catch (err) {
    if (err instanceof StoreConflictError && err.reason.kind === 'id_taken') {
      // Another worker wrote this row's log meanwhile: its result stands.
      const log = await env.store.getExecutionLog(logId);
      if (!log) throw err;
      return env.store.recordBatchRow(batch.id, fromLog(position, row, log, null));
    }
    // Budgets (room h-cost): a cap that is spent stops the run; this row is not recorded (never scored).
    if (err instanceof TribunalError && err.code === 'budget_exceeded') return stopAtBudget(env.store, batch.id, err);
    // A row refused before any model call (a missing input, ...) is recorded as failed, without a log.
    if (!(err instanceof TribunalError) || (err.status >= 500 && err.code !== 'model_unavailable')) throw err;
    record = { position, item_id: row.item_id, index: row.index, execution_log_id: null, score: null, evaluator_results: [], error: err.message, cost_usd: 0 };
  }
  return env.store.recordBatchRow(batch.id, record, spend.counted);
}

/**
 * Ends a run whose rows are all recorded: completed, with its summary. Safe to call from any instance,
 * any number of times. Answers whether the run has ended (now or before). `read`: the run as just
 * read by the caller (after its rows settled), not read again.
 */
export async function maybeFinish(store: Store, batchId: string, read?: BatchExecutionRecord | null): Promise<boolean> {
  const batch = read ?? (await store.getBatchExecution(batchId));
  if (!batch || isTerminal(batch.status)) return true;
  if (!batch.planned_all || batch.done + batch.failed < batch.total) return false;
  const summary = await batchSummary(store, batch);
  await store.updateBatchExecution(batchId, { status: 'completed', finished_at: new Date().toISOString(), summary, if_status: ['queued', 'running'] });
  return true;
}

/** Ends a run as failed with a reason; the rows recorded stay. */
export async function failBatch(store: Store, batchId: string, error: string): Promise<void> {
  const failed = await store.updateBatchExecution(batchId, { status: 'failed', error, finished_at: new Date().toISOString(), if_status: ['queued', 'running'] });
  if (failed) await store.updateBatchExecution(batchId, { summary: await batchSummary(store, failed) });
}

/** Refreshes the summary of a run that ended while rows were still in flight. */
export async function resummarize(store: Store, batchId: string): Promise<void> {
  const batch = await store.getBatchExecution(batchId);
  if (batch && isTerminal(batch.status)) await store.updateBatchExecution(batchId, { summary: await batchSummary(store, batch) });
}

/**
 * Budgets (room h-cost): ends a run whose budget (its own, an evaluator's or the org's) is spent, as
 * failed with why. Rows recorded stay; rows in flight finish and are recorded (the summary follows);
 * every other row is not scored: total = done + failed + not scored.
 */
export async function stopAtBudget(store: Store, batchId: string, err: TribunalError): Promise<false> {
  const now = await store.getBatchExecution(batchId);
  const left = now ? now.total - now.done - now.failed : 0;
  await failBatch(
    store,
    batchId,
    `budget_exceeded: ${err.message.replace(/ Nothing was run\.$/, '')} The run stopped: rows recorded are kept; about ${left} row(s) not recorded were not scored.`,
  );
  return false;
}
