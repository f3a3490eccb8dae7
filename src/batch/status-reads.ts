// A run's status as read before each row and before each of its model calls (the cancel check,
// work.ts). The promise kept (issue 25): once a cancel has been answered, no call of the run starts.
// A store that holds its runs in memory (the JSON store: Store.peekBatchStatus) answers at once,
// without a promise: the status as it is now, which a cancel answered before the ask has set.
//
// A store read by statements (PostgreSQL, any number of instances) is kept by two rules together
// (issue 33; before, every ask waited for a read that started after it: about 2.2 statements a row):
// - an ask is answered by a read that started less than FRESH_MS before the answer (a read still
//   under way is shared, and answered only if it ends in time; else another is made);
// - a cancel is answered only CANCEL_SETTLE_MS after its write was committed (cancelBatch, via
//   cancelSettleMs), so every read started after that commit; any call that starts after the
//   answer was let through by a read started after the commit, which saw the run cancelled.
// The margin between the two (FRESH_MS against CANCEL_SETTLE_MS) covers the time between an answer
// and its call's request leaving the process. A run's status is read at most once every FRESH_MS
// while its rows and calls start, whatever their number.
import { performance } from 'node:perf_hooks';
import type { BatchStatus } from '../schemas/batches.ts';
import type { Store } from '../store/types.ts';

/** How old (from its start) a status read may be when it lets a row or a call start. */
export const FRESH_MS = 50;
/** How long after its write a cancel waits before it is answered, on a store read by statements. */
export const CANCEL_SETTLE_MS = 2 * FRESH_MS;
/** Runs whose last read is kept, at most (a process runs a few at once). */
const KEPT_RUNS = 256;

type Read = Promise<BatchStatus | null>;

interface RunReads {
  /** When the last read answered started (performance.now()), and what it said. */
  at: number;
  status: BatchStatus | null;
  /** The read under way, shared by the asks that come meanwhile. */
  reading: Read | null;
}

/** How long a cancel on `store` waits after its write before it is answered (see above). */
export const cancelSettleMs = (store: Pick<Store, 'peekBatchStatus'>) => (store.peekBatchStatus ? 0 : CANCEL_SETTLE_MS);

export class RunStatusReads {
  private readonly runs = new Map<string, RunReads>();

  constructor(private readonly store: Pick<Store, 'getBatchStatus' | 'peekBatchStatus'>) {}

  /** The run's status as stored at some moment less than FRESH_MS before it is answered (null when deleted); at once where the store holds it in memory. */
  read(id: string): Read | BatchStatus | null {
    if (this.store.peekBatchStatus) return this.store.peekBatchStatus(id);
    let run = this.runs.get(id);
    if (!run) {
      run = { at: -Infinity, status: null, reading: null };
      this.runs.set(id, run);
      if (this.runs.size > KEPT_RUNS) this.runs.delete(this.runs.keys().next().value as string);
    }
    if (performance.now() - run.at < FRESH_MS) return run.status;
    return (run.reading ??= this.fresh(id, run));
  }

  private async fresh(id: string, run: RunReads): Read {
    try {
      for (;;) {
        const at = performance.now();
        const status = await this.store.getBatchStatus(id);
        if (at > run.at) {
          run.at = at;
          run.status = status;
        }
        // Answered only while the read is still fresh; a slow one is made again.
        if (performance.now() - at < FRESH_MS) return status;
      }
    } finally {
      run.reading = null;
    }
  }
}
