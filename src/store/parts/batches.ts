// Store parts for batch runs (their rows and inline items) and the provider batches they submit.
import type { DatasetItemInput } from '../../schemas.ts';
import type { BatchStatus } from '../../schemas/batches.ts';
import type { BatchExecutionRecord, BatchFilter, BatchPatch, BatchRowQuery, BatchRowRecord, BatchRowScores } from '../batch-types.ts';
import type { ProviderBatchPatch, ProviderBatchRecord } from '../provider-batch-types.ts';
import type { RowSpend } from '../budget-types.ts';
import type { BatchCounts } from '../batch-tally.ts';
import type { Page, PageQuery } from './page.ts';

export interface BatchStore {
  /** Stores a batch run, with the items given in the request (inline runs) in their order. */
  createBatchExecution(batch: BatchExecutionRecord, items?: DatasetItemInput[]): Promise<void>;
  getBatchExecution(id: string): Promise<BatchExecutionRecord | null>;
  /** Only the run's status (null when unknown): the cancel check asked before each row and model call, which needs no more. */
  getBatchStatus(id: string): Promise<BatchStatus | null>;
  /**
   * The same, answered at once, by a store that holds its runs in this process's memory (the JSON
   * store); absent where the status is read from a database. The cancel check then costs no promise.
   */
  peekBatchStatus?(id: string): BatchStatus | null;
  /**
   * A running run's done and failed rows and its per-evaluator summary, as of the rows recorded so
   * far, answered at once by a store that tallies them as it records them (the JSON store); null
   * when it keeps no tally of this run (ended, unknown), absent where there is none. Read at each
   * status read of a live run instead of reading all its rows (batch/summary.ts).
   */
  peekBatchCounts?(id: string): BatchCounts | null;
  /** Newest first. */
  listBatchExecutions(filter: BatchFilter, page: PageQuery): Promise<Page<BatchExecutionRecord>>;
  /** Every run still queued or running, in any organization (resumed at start-up). */
  listUnfinishedBatchExecutions(): Promise<BatchExecutionRecord[]>;
  /** Sets the fields given; null when the run is unknown or `if_status` did not hold. */
  updateBatchExecution(id: string, patch: BatchPatch): Promise<BatchExecutionRecord | null>;
  /**
   * Records one finished row and counts it (done when it has a score, failed otherwise; its cost
   * is added), atomically. False, changing nothing, when the row at this position exists already.
   * `spend`: the run's spend on a budget counter, added when (and only when) the row is recorded
   * (budgets/engine.ts: a batch row's uncapped spend is counted with its row, not on its own).
   */
  recordBatchRow(batchId: string, row: BatchRowRecord, spend?: RowSpend): Promise<boolean>;
  listBatchRows(batchId: string, query: BatchRowQuery): Promise<{ items: BatchRowRecord[]; last?: number }>;
  /** The same pages, each row cut to its scores (`rowScores`): what comparisons, summaries and the runner read. */
  listBatchRowScores(batchId: string, query: BatchRowQuery): Promise<{ items: BatchRowScores[]; last?: number }>;
  /** Items given in the request of an inline run: `count` from position `from`. */
  getBatchItems(batchId: string, from: number, count: number): Promise<DatasetItemInput[]>;
}

/** Provider batches of runs in mode provider_batch (issue 32, src/batch/provider-*.ts); durable before answered. */
export interface ProviderBatchStore {
  createProviderBatch(record: ProviderBatchRecord): Promise<void>;
  updateProviderBatch(id: string, patch: ProviderBatchPatch): Promise<ProviderBatchRecord | null>;
  /** A run's provider batches, oldest first. */
  listProviderBatches(batchId: string): Promise<ProviderBatchRecord[]>;
}
