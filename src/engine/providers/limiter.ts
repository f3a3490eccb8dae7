// A counting semaphore with two FIFO queues: the server-wide cap on judge-model calls in flight
// (TRIBUNAL_MODEL_CONCURRENCY). Calls beyond the cap wait their turn instead of failing.
//
// Priority (docs/BATCH.md): a call of a batch row (acquire(signal, true): a batch row's view of the
// model, ResilientJudgeModel.forBatch) waits in the batch queue; every other call (an interactive
// run, generation) in the interactive queue. A freed slot always goes to the interactive queue
// first, so however many batch rows wait, an interactive call waits at most for one call in flight
// to finish; batch calls take the slots interactive calls leave free.
//
// The batch flag is passed, not found in an AsyncLocalStorage: on Node 20 the first
// AsyncLocalStorage.run turns on promise hooks for the whole process for good, and every promise
// after it (every request's, not only the batch's) costs several times more (observability/http.ts).

interface Waiter {
  grant: () => void;
}

export class Limiter {
  private active = 0;
  private peak = 0;
  private readonly waiting: Waiter[] = [];
  private readonly waitingBatch: Waiter[] = [];

  constructor(readonly max: number) {
    if (!Number.isInteger(max) || max < 1) throw new Error(`Limiter max must be a positive integer, got ${max}`);
  }

  /** Calls in flight now. */
  get inFlight(): number {
    return this.active;
  }
  /** Calls waiting for a slot now (interactive and batch). */
  get queued(): number {
    return this.waiting.length + this.waitingBatch.length;
  }
  /** Batch calls waiting for a slot now. */
  get queuedBatch(): number {
    return this.waitingBatch.length;
  }
  /** Most calls in flight at once since start. */
  get peakInFlight(): number {
    return this.peak;
  }

  /** Waits for a slot (in the batch queue when `batch`); resolves to the function that gives it back (call it exactly once). */
  acquire(signal?: AbortSignal, batch = false): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    // A free slot and nobody waiting: taken at once, as next() would grant it, without a waiter,
    // its closures and an abort listener that is removed again at once.
    if (this.active < this.max && !this.waiting.length && !this.waitingBatch.length) return Promise.resolve(this.take());
    const queue = batch ? this.waitingBatch : this.waiting;
    return new Promise((resolve, reject) => {
      const entry: Waiter = {
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(this.take());
        },
      };
      const onAbort = () => {
        const i = queue.indexOf(entry);
        if (i >= 0) queue.splice(i, 1);
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      queue.push(entry);
      this.next();
    });
  }

  /** Counts a slot taken; answers the function that gives it back (a second call does nothing). */
  private take(): () => void {
    this.active++;
    this.peak = Math.max(this.peak, this.active);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.active--;
      this.next();
    };
  }

  private next(): void {
    while (this.active < this.max && (this.waiting.length || this.waitingBatch.length)) (this.waiting.shift() ?? this.waitingBatch.shift())!.grant();
  }
}
