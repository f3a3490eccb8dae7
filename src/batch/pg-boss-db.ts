// The database pg-boss is given (pg-jobs.ts): the store's pool, until the batch queue stops.
//
// pg-boss's own stop does not wait for all of its work: a worker whose fetch is on its way when
// stop is called still takes the job it fetched and runs its handler, and a handler's `complete`
// or `fail` is sent without being awaited. Either can reach the pool after the store has closed it,
// where it fails as an unhandled rejection ("Cannot use a pool after calling end on the pool").
// So the queue's stop waits here for every statement and handler still on its way, then closes:
// a statement after that is not sent. A job whose completion was not sent is taken up again: pg-boss's
// stop failed it (still running at its timeout), or it stays active until its lease ends, as when a
// worker dies.
import type pg from 'pg';

type QueryPool = Pick<pg.Pool, 'query'>;

/**
 * What a statement answers once the queue has stopped: nothing was sent. It has no `rows`, which
 * pg-boss reads as nothing found where it may still ask (a fetch: no job; a complete or fail sent
 * without being awaited: no job affected); an empty list would fail its complete on `rows[0]`.
 * A send, which reads `rows` at once, fails, and its caller hears of it (PgBatchJobs.send).
 */
const NOT_SENT = Object.freeze({ rowCount: 0 });

const settledQuietly = (p: Promise<unknown>): Promise<void> =>
  p.then(
    () => {},
    () => {},
  );

export class PgBossDb {
  private shut = false;
  /** Statements and job handlers on their way, each as a promise that settles without failing. */
  private readonly busy = new Set<Promise<void>>();

  constructor(private readonly pool: QueryPool) {}

  /** True once close() has answered: no statement reaches the pool any more. */
  get closed(): boolean {
    return this.shut;
  }

  /** pg-boss's `db.executeSql`. */
  readonly executeSql = (text: string, values?: unknown[]): Promise<unknown> => {
    if (this.closed) return Promise.resolve(NOT_SENT);
    return this.hold(this.pool.query(text, values));
  };

  /** Counts `work` as on its way until it settles (close waits for it); answers `work` itself. */
  hold<T>(work: Promise<T>): Promise<T> {
    const done = settledQuietly(work);
    this.busy.add(done);
    void done.then(() => this.busy.delete(done));
    return work;
  }

  /**
   * Waits until nothing is on its way, or until `deadline` (ms since the epoch), then closes. What
   * one piece of work starts when it ends (a fetched job's handler, a handler's `fail`) is waited
   * for too: after each wait, one turn of the event loop lets it begin. Answers how many were still
   * on their way when it closed (0: everything was sent and answered).
   */
  async close(deadline: number): Promise<number> {
    while (this.busy.size && Date.now() < deadline) {
      // A timer that holds the process open: a shutdown waiting here must not end with the event loop.
      let timer: NodeJS.Timeout | undefined;
      const timeUp = new Promise((resolve) => {
        timer = setTimeout(resolve, deadline - Date.now());
      });
      await Promise.race([Promise.all(this.busy), timeUp]);
      clearTimeout(timer);
      await new Promise((resolve) => setImmediate(resolve));
    }
    this.shut = true;
    return this.busy.size;
  }
}
