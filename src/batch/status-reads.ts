// A run's status as read before each row and before each of its model calls (the cancel check,
// work.ts). The promise kept (issue 25): once a cancel has been answered, no call of the run starts.
// A store that holds its runs in memory (the JSON store: Store.peekBatchStatus) answers at once,
// without a promise: the status as it is now, which a cancel answered before the ask has set.
//
// A store read by statements (PostgreSQL, any number of instances) keeps it by two rules together
// (issue 33; before, every ask waited for a read that started after it: about 2.2 statements a row):
// - an ask is answered by a read that started after it, or by one that started less than FRESH_MS
//   before the answer (a read under way is shared; one that ends late answers only the asks made
//   before it started, the others share the next read, which starts after them);
// - a cancel is answered only CANCEL_SETTLE_MS after its write was committed (cancelBatch, via
//   cancelSettleMs), so a read started less than FRESH_MS before a call that starts after the answer
//   started after that commit, and saw the run cancelled.
// The margin between the two (FRESH_MS against CANCEL_SETTLE_MS) covers the time between an answer
// and its call's request leaving the process. A run's status is read at most about once every
// FRESH_MS while its rows and calls start, whatever their number.
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

interface Seen {
  status: BatchStatus | null;
  /** When the read started (performance.now()). */
  at: number;
}

interface RunReads {
  /** When the last read answered started, and what it said. */
  at: number;
  status: BatchStatus | null;
  /** The read under way, shared by the asks that come meanwhile; cleared as it ends. */
  reading: Promise<Seen> | null;
}

/** How long a cancel on `store` waits after its write before it is answered (see above). */
export const cancelSettleMs = (store: Pick<Store, 'peekBatchStatus'>) => (store.peekBatchStatus ? 0 : CANCEL_SETTLE_MS);

export class RunStatusReads {
  private readonly runs = new Map<string, RunReads>();

  constructor(private readonly store: Pick<Store, 'getBatchStatus' | 'peekBatchStatus'>) {}

  /** The run's status as stored at some moment after this call or less than FRESH_MS before it is answered (null when deleted); at once where the store holds it in memory. */
  read(id: string): Read | BatchStatus | null {
    if (this.store.peekBatchStatus) return this.store.peekBatchStatus(id);
    const run = this.runs.get(id) ?? this.track(id);
    const asked = performance.now();
    if (asked - run.at < FRESH_MS) return run.status;
    return (run.reading ??= this.issue(id, run)).then((seen) =>
      // A read that started after the ask, or is still fresh, answers; else the next read, started after it ended (so after the ask).
      seen.at >= asked || performance.now() - seen.at < FRESH_MS ? seen.status : (run.reading ??= this.issue(id, run)).then((next) => next.status),
    );
  }

  /** A run's entry, new; the oldest is let go past KEPT_RUNS (its reads under way still answer their asks). */
  private track(id: string): RunReads {
    const run: RunReads = { at: -Infinity, status: null, reading: null };
    this.runs.set(id, run);
    if (this.runs.size > KEPT_RUNS) this.runs.delete(this.runs.keys().next().value as string);
    return run;
  }

  private issue(id: string, run: RunReads): Promise<Seen> {
    const at = performance.now();
    const reading = this.store.getBatchStatus(id).then((status) => {
      if (at > run.at) {
        run.at = at;
        run.status = status;
      }
      return { status, at };
    });
    // Cleared before the asks sharing it are answered (registered first), so a late read's asks start a new one.
    const clear = () => {
      if (run.reading === reading) run.reading = null;
    };
    reading.then(clear, clear);
    return reading;
  }
}
