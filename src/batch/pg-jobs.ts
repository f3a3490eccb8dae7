// The pg-boss queue's jobs (pg-boss-queue.ts): pg-boss 10 (docs/BATCH.md), in its own schema beside
// the store's, over the store's connection pool.
//
// - `tribunal_batch_plan`: one job per run (its id derived from the run's), which reads the items a
//   page at a time and sends one chunk job per page.
// - `tribunal_batch_chunk`: one job per chunk of rows, its id derived from (run, first position),
//   so a plan job that is run again after a crash sends the same chunks, not new ones.
// pg-boss hands each job to one worker at a time (SKIP LOCKED). A job whose worker died is expired
// after the lease (TRIBUNAL_BATCH_LEASE) and retried by any instance; rows the dead worker recorded
// are skipped by whoever takes the job over.
import { createHash } from 'node:crypto';
import PgBoss from 'pg-boss';
import type pg from 'pg';
import type { Store } from '../store/types.ts';
import type { Chunk } from './work.ts';
import { queueSchemaFor } from '../store/postgres/batch-jobs.ts';
import { log } from '../log.ts';
import { PgBossDb } from './pg-boss-db.ts';

const PLAN = 'tribunal_batch_plan';
const CHUNK = 'tribunal_batch_chunk';

/** A UUID fixed by `key`, for job ids that deduplicate. */
function uuidFor(key: string): string {
  const h = createHash('sha256').update(key).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export interface PgQueueOptions {
  leaseMs: number;
  workers: number;
  /** h-harden: how long finished jobs (which hold item text) are kept, archived then deleted; default 1 h. */
  jobRetentionMs?: number;
  onPlan(batchId: string): Promise<void>;
  /** `fresh`: the job's first attempt (no row of it can have been scored before, see ChunkRunner.runChunk). */
  onChunk(chunk: Chunk, fresh: boolean): Promise<void>;
}

export class PgBatchJobs {
  /** Set by stop(): a job fetched after it is refused at once (failed, so it is taken up again). */
  private stopping = false;

  private constructor(
    private readonly boss: PgBoss,
    private readonly db: PgBossDb,
    private readonly pool: pg.Pool,
    private readonly schema: string,
  ) {}

  static async start(store: Store, opts: PgQueueOptions): Promise<PgBatchJobs> {
    const pool = (store as unknown as { pool: pg.Pool }).pool;
    const { rows } = await pool.query<{ s: string }>('SELECT current_schema() AS s');
    // The store's schema is `public` in most deployments; a named schema (tests, several
    // deployments on one database) gets a queue schema of its own beside it.
    const schema = queueSchemaFor(rows[0].s);
    const lease = Math.max(1, Math.round(opts.leaseMs / 1000));
    const retention = Math.max(1, Math.round((opts.jobRetentionMs ?? 3_600_000) / 1000));
    const db = new PgBossDb(pool);
    const boss = new PgBoss({
      db,
      schema,
      // Expired jobs (a dead worker) are found by the maintenance pass: run it often enough that
      // a lease is not stretched much beyond its length.
      maintenanceIntervalSeconds: Math.max(1, Math.min(60, Math.floor(lease / 2))),
      // h-harden: finished jobs hold the rows' text: archived within minutes and deleted after the
      // retention (pg-boss's own default keeps them about 7 days, past a demo organization's purge).
      archiveCompletedAfterSeconds: Math.max(1, Math.min(300, retention)),
      archiveFailedAfterSeconds: Math.max(1, Math.min(300, retention)),
      deleteAfterSeconds: retention,
    } as PgBoss.ConstructorOptions);
    boss.on('error', (err) => log.error(`batch queue: ${(err as Error).message}`));
    await boss.start();
    const jobs = new PgBatchJobs(boss, db, pool, schema);
    const queue = { retryLimit: 1000, retryDelay: 1, retryBackoff: false, expireInSeconds: lease };
    await boss.createQueue(PLAN, { name: PLAN, ...queue });
    await boss.createQueue(CHUNK, { name: CHUNK, ...queue });
    await boss.work<{ batch_id: string }>(PLAN, { batchSize: 1, pollingIntervalSeconds: 0.5 }, async ([job]) => jobs.handle(() => opts.onPlan(job.data.batch_id)));
    for (let i = 0; i < opts.workers; i++) {
      // pg-boss counts a job fetched again after it was started (failed, or expired with its worker) as a retry.
      await boss.work<Chunk>(CHUNK, { batchSize: 1, pollingIntervalSeconds: 0.5, includeMetadata: true }, async ([job]) =>
        jobs.handle(() => opts.onChunk(job.data, job.retryCount === 0)),
      );
    }
    return jobs;
  }

  /** Runs a job's handler, counted as on its way until it ends (stop waits for it). */
  private handle(run: () => Promise<void>): Promise<void> {
    if (this.stopping) return Promise.reject(new Error('stopping: the job is taken up again'));
    return this.db.hold(run());
  }

  async sendPlan(batchId: string): Promise<void> {
    await this.send(PLAN, { batch_id: batchId }, { id: uuidFor(`plan:${batchId}`) });
  }

  /**
   * h-harden (fairness between organizations): chunk jobs are taken by priority first, so a run's
   * chunks get falling priorities that start below the organization's chunks already waiting
   * (`pendingChunks`). The queue then hands out one chunk of each organization in turn, on every
   * instance, instead of all of a busy organization's chunks before another's first.
   */
  async sendChunk(chunk: Chunk, orgId: string, priority: number): Promise<void> {
    await this.send(CHUNK, { ...chunk, org_id: orgId }, { id: uuidFor(`chunk:${chunk.batch_id}:${chunk.first}`), priority });
  }

  /**
   * A send that ends after stop may not have reached the database (pg-boss-db.ts sends nothing once
   * the queue has closed): it fails, so the plan job records no progress past it. Sent or not, the
   * job is sent again by the plan job's next attempt, under the same id.
   */
  private async send(name: string, data: object, options: PgBoss.SendOptions): Promise<void> {
    const stopped = () => new Error('stopping: the batch queue stopped while a job was being sent; it is sent again');
    try {
      await this.boss.send(name, data, options);
    } catch (err) {
      throw this.db.closed ? stopped() : err;
    }
    if (this.db.closed) throw stopped();
  }

  /** Chunk jobs of `orgId` not yet taken (one scan of the waiting jobs, once per plan job). */
  async pendingChunks(orgId: string): Promise<number> {
    const { rows } = await this.pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${this.schema}.job WHERE name = $1 AND state < 'active' AND data->>'org_id' = $2`, [
      CHUNK,
      orgId,
    ]);
    return Number(rows[0].n);
  }

  /**
   * Stops polling; jobs in flight get `graceMs` to finish, the rest expire and are taken up again.
   * When it answers, nothing of the queue reaches the store's pool any more (pg-boss-db.ts), so the
   * store can close.
   */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    const timeout = Math.max(1000, graceMs);
    const deadline = Date.now() + timeout;
    await this.boss.stop({ graceful: true, wait: true, close: false, timeout }).catch(() => {});
    // A fetch on its way when pg-boss stopped still gets its answer (and a job in it, its refusal).
    const running = await this.db.close(Math.max(deadline, Date.now() + 500));
    // A job cut short was failed by pg-boss's stop (retried at once elsewhere) or stays active until its lease ends.
    if (running) log.warn(`batch queue: ${running} job(s) or statement(s) still on their way at shutdown were cut short; their jobs are taken up again`);
  }
}
