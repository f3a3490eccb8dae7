// The per-evaluator summary of a batch run, from its rows (read a page at a time).
import type { BatchEvaluatorSummary } from '../schemas/batches.ts';
import { BatchTally, type BatchCounts } from '../store/batch-tally.ts';
import type { BatchExecutionRecord, BatchRowScores, Store } from '../store/types.ts';

export async function batchSummary(store: Store, batch: Pick<BatchExecutionRecord, 'id'>): Promise<BatchEvaluatorSummary[]> {
  return (await summaryAndCounts(store, batch)).summary;
}

/** The summary and the rows done (scored) and failed, from one read of the rows. */
async function summaryAndCounts(store: Store, batch: Pick<BatchExecutionRecord, 'id'>): Promise<BatchCounts> {
  const tally = new BatchTally();
  await tallyRows(store, batch.id, tally);
  return tally.counts();
}

/** Adds to `tally` the run's recorded rows after position `after` (all when undefined), a page at a time; `each` sees every row added. */
async function tallyRows(store: Store, batchId: string, tally: BatchTally, after?: number, each?: (row: BatchRowScores) => void): Promise<void> {
  for (;;) {
    const page = await store.listBatchRowScores(batchId, { limit: 1000, after });
    for (const row of page.items) {
      tally.add(row);
      each?.(row);
    }
    if (page.last === undefined) return;
    after = page.last;
  }
}

// issue 26 item 5: a running run's counters and summary agree with its rows at every read. The
// summary of a run still going is taken from its rows when it is read (the stored one is written at
// the end), and done/failed are counted from that same read, so a page never says "16 finished"
// beside an empty summary. A big run (many rows finished) is recounted at most every LIVE_REUSE_MS.
//
// Issue 33: a recorded row never changes, so a read does not tally every row again. The tally of
// the run's first rows, every position up to `upTo` recorded (no gap), is kept; a read reads only
// the rows after it (about the rows in flight, not the whole run), adds them to a copy, and moves
// `upTo` over the rows it found without a gap. A store that tallies live runs itself (the JSON
// store: Store.peekBatchCounts) answers before any of this.
const LIVE_REUSE_MS = 2000;
const BIG_RUN = 10_000;
type Live = { finished: number; at: number; done: number; failed: number; summary: BatchEvaluatorSummary[]; first: BatchTally; upTo: number };
const live = new WeakMap<Store, Map<string, Live>>();

/** The run as read: unchanged when it has ended; while it goes on, its summary, done and failed from its rows now. */
export async function withLiveSummary<T extends Pick<BatchExecutionRecord, 'id' | 'status' | 'done' | 'failed' | 'summary'>>(store: Store, batch: T): Promise<T> {
  if (batch.status === 'completed' || batch.status === 'failed' || batch.status === 'cancelled') return batch;
  // A store that tallies a live run's rows as they are recorded (the JSON store) answers at once:
  // counts and summary of the same rows, without reading every row again at each status read.
  const kept = store.peekBatchCounts?.(batch.id);
  if (kept) return { ...batch, done: kept.done, failed: kept.failed, summary: kept.summary };
  let runs = live.get(store);
  if (!runs) live.set(store, (runs = new Map()));
  const finished = batch.done + batch.failed;
  const cached = runs.get(batch.id);
  if (cached && (cached.finished === finished || (finished > BIG_RUN && Date.now() - cached.at < LIVE_REUSE_MS))) {
    return { ...batch, done: cached.done, failed: cached.failed, summary: cached.summary };
  }
  // Counted apart from the summary's read, a row could land between the two: both come from one pass.
  // Copies, not the kept tally itself: two reads of one run at once each make their own.
  const tally = cached ? cached.first.copy() : new BatchTally();
  const first = cached ? cached.first.copy() : new BatchTally();
  let upTo = cached ? cached.upTo : -1;
  await tallyRows(store, batch.id, tally, upTo < 0 ? undefined : upTo, (row) => {
    if (row.position !== upTo + 1) return;
    first.add(row);
    upTo++;
  });
  const { summary, done, failed } = tally.counts();
  const entry: Live = { finished, at: Date.now(), done, failed, summary, first, upTo };
  runs.set(batch.id, entry);
  if (runs.size > 256) runs.delete(runs.keys().next().value as string);
  return { ...batch, done, failed, summary };
}
