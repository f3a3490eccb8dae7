// A run's status as read before each row and before each of its model calls (the cancel check,
// work.ts): with dozens of rows in flight those reads come in bursts (a row's evaluators ask at
// once), so the asks of one run share reads. Every ask is answered by a read that started after it
// was made, never by one already under way, so a cancel answered before the ask is always seen: a
// read is in flight, the asks that come meanwhile wait for it to end and share the next one. Only the
// status is read (Store.getBatchStatus): on PostgreSQL one column, not the row with its `extra`
// decoded. A store that holds its runs in memory (the JSON store: Store.peekBatchStatus) answers at
// once, without a promise: the status as it is now, which a cancel answered before the ask has set.
import type { BatchStatus } from '../schemas/batches.ts';
import type { Store } from '../store/types.ts';

type Read = Promise<BatchStatus | null>;

interface RunReads {
  /** The read under way. */
  current: Read;
  /** The read the asks made since `current` started will share; it starts when `current` ends. */
  next: Read | null;
}

export class RunStatusReads {
  private readonly runs = new Map<string, RunReads>();

  constructor(private readonly store: Pick<Store, 'getBatchStatus' | 'peekBatchStatus'>) {}

  /** The run's status as stored at some moment after this call (null when deleted); at once where the store holds it in memory. */
  read(id: string): Read | BatchStatus | null {
    if (this.store.peekBatchStatus) return this.store.peekBatchStatus(id);
    const run = this.runs.get(id);
    if (!run) {
      const fresh: RunReads = { current: Promise.resolve(null), next: null };
      this.runs.set(id, fresh);
      return this.issue(id, fresh);
    }
    run.next ??= run.current
      .catch(() => {})
      .then(() => {
        run.next = null;
        return this.issue(id, run);
      });
    return run.next;
  }

  private issue(id: string, run: RunReads): Read {
    const read = this.store.getBatchStatus(id);
    run.current = read;
    const settle = () => {
      if (run.current === read && !run.next && this.runs.get(id) === run) this.runs.delete(id);
    };
    read.then(settle, settle);
    return read;
  }
}
