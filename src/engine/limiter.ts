// A counting semaphore with a FIFO queue: the server-wide cap on judge-model calls in flight
// (TRIBUNAL_MODEL_CONCURRENCY). Calls beyond the cap wait their turn instead of failing.

export class Limiter {
  private active = 0;
  private peak = 0;
  private readonly waiting: Array<{ grant: () => void }> = [];

  constructor(readonly max: number) {
    if (!Number.isInteger(max) || max < 1) throw new Error(`Limiter max must be a positive integer, got ${max}`);
  }

  /** Calls in flight now. */
  get inFlight(): number {
    return this.active;
  }
  /** Calls waiting for a slot now. */
  get queued(): number {
    return this.waiting.length;
  }
  /** Most calls in flight at once since start. */
  get peakInFlight(): number {
    return this.peak;
  }

  /** Waits for a slot; resolves to the function that gives it back (call it exactly once). */
  acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const entry = {
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          this.active++;
          this.peak = Math.max(this.peak, this.active);
          let released = false;
          resolve(() => {
            if (released) return;
            released = true;
            this.active--;
            this.next();
          });
        },
      };
      const onAbort = () => {
        const i = this.waiting.indexOf(entry);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(entry);
      this.next();
    });
  }

  private next(): void {
    while (this.active < this.max && this.waiting.length) this.waiting.shift()!.grant();
  }
}
