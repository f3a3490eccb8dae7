// A run's status as read before each row and before each of its model calls (the cancel check,
// work.ts): with dozens of rows in flight those reads come in bursts (a row's evaluators ask at
// once, rows freed together start together), so the asks of one run share reads. Every ask is
// answered by a read that started after it was made, never by one already under way, so a cancel
// answered before the ask is always seen. A read starts once the event loop's turn in which it was
// first asked for has ended (setImmediate), so the asks of that turn share it; while a read is in
// flight, the asks that come meanwhile wait for it to end and share the next one. Waiting for the
// turn's end costs the first ask well under a millisecond, against a judge-model call of hundreds;
// on PostgreSQL it took the reads from about 3 a row to about 2 (issue 33). Only the
// status is read (Store.getBatchStatus): on PostgreSQL one column, not the row with its `extra`
// decoded. A store that holds its runs in memory (the JSON store: Store.peekBatchStatus) answers at
// once, without a promise: the status as it is now, which a cancel answered before the ask has set.
import type { BatchStatus } from '../schemas/batches.ts';
import type { Store } from '../store/types.ts';

type Read = Promise<BatchStatus | null>;

interface RunReads {
  /** The read under way, if any. */
  current: Read | null;
  /** The read the asks made since `current` started (or in this turn) will share; it starts when the turn is over and `current` has ended. */
  next: Read | null;
}

/** Resolves once the event loop's current turn is over: the asks made in it have all been made. */
const turnEnd = () => new Promise<void>((resolve) => setImmediate(resolve));

export class RunStatusReads {
  private readonly runs = new Map<string, RunReads>();

  constructor(private readonly store: Pick<Store, 'getBatchStatus' | 'peekBatchStatus'>) {}

  /** The run's status as stored at some moment after this call (null when deleted); at once where the store holds it in memory. */
  read(id: string): Read | BatchStatus | null {
    if (this.store.peekBatchStatus) return this.store.peekBatchStatus(id);
    let run = this.runs.get(id);
    if (!run) this.runs.set(id, (run = { current: null, next: null }));
    run.next ??= this.shared(id, run);
    return run.next;
  }

  /** The next read of the run, started after every ask that shares it. */
  private async shared(id: string, run: RunReads): Read {
    await turnEnd();
    // Only the next read starts reads, so `current` is the one under way when this was asked for (or one since ended).
    if (run.current) await run.current.catch(() => {});
    run.next = null;
    const read = this.store.getBatchStatus(id);
    run.current = read;
    const settle = () => {
      if (run.current !== read) return;
      run.current = null;
      if (!run.next && this.runs.get(id) === run) this.runs.delete(id);
    };
    read.then(settle, settle);
    return read;
  }
}
