// The pg-boss batch queue (queue.ts), for any number of instances on one PostgreSQL database: the
// work is held in pg-boss (pg-jobs.ts). One plan job per run turns it into chunk jobs; every
// instance's workers take chunk jobs, so instances share a run. A plan job records its progress
// after each chunk it sends, so a retried plan job goes on where it stopped.
import type { BatchExecutionRecord } from '../store/types.ts';
import { isTerminal } from './batches.ts';
import { batchLog, ChunkRunner } from './chunk-runner.ts';
import { PgBatchJobs } from './pg-jobs.ts';
import type { BatchQueue, BatchQueueServices } from './queue.ts';
import { DatasetGone, failBatch, maybeFinish, planNext, type PlanState } from './work.ts';

export class PgBossBatchQueue implements BatchQueue {
  private readonly rows: ChunkRunner;
  private jobs?: PgBatchJobs;
  private jobsStart?: Promise<PgBatchJobs>;
  private watch?: NodeJS.Timeout;
  /** Unfinished runs whose plan job this instance has sent. */
  private readonly seen = new Set<string>();
  private looking = false;

  constructor(private readonly services: BatchQueueServices) {
    this.rows = new ChunkRunner(services);
  }

  private get store() {
    return this.rows.store;
  }

  async start(): Promise<void> {
    const unfinished = await this.rows.begin(this);
    if (!unfinished) return;
    // pg-boss starts with the first run this instance sees (started here, or by another instance:
    // looked for every few seconds), so an instance that never runs a batch keeps no queue.
    this.watch = setInterval(() => void this.lookForWork(), 2000);
    this.watch.unref();
    for (const b of unfinished) await this.dispatch(b);
  }

  async dispatch(batch: BatchExecutionRecord): Promise<void> {
    if (this.rows.stopping) return;
    await (await this.ensureJobs()).sendPlan(batch.id);
    this.seen.add(batch.id);
  }

  /**
   * Every 2 s, the unfinished runs. A run this instance has not seen yet gets its plan job sent (its
   * id makes a repeat harmless), so a run stored by an instance that sends no jobs
   * (TRIBUNAL_BATCH_WORKER=false, or a crash between storing the run and sending its job) starts
   * on its own; pg-boss starts with the first such run.
   */
  private async lookForWork(): Promise<void> {
    if (this.rows.stopping || this.looking) return;
    this.looking = true;
    try {
      const unfinished = await this.store.listUnfinishedBatchExecutions();
      const ids = new Set(unfinished.map((b) => b.id));
      for (const id of this.seen) if (!ids.has(id)) this.seen.delete(id);
      for (const b of unfinished) if (!this.seen.has(b.id)) await this.dispatch(b);
    } catch (err) {
      batchLog(`looking for batch work failed: ${(err as Error).message}`);
    } finally {
      this.looking = false;
    }
  }

  private ensureJobs(): Promise<PgBatchJobs> {
    const { batch } = this.services.config;
    this.jobsStart ??= PgBatchJobs.start(this.store, {
      leaseMs: batch.leaseMs,
      jobRetentionMs: batch.jobRetentionMs, // h-harden
      workers: Math.ceil(batch.concurrency / batch.chunk) + 1,
      onPlan: (id) => this.planAll(id),
      // Every row of the chunk settles before the job ends: a job failed while rows still run would
      // be taken up again at once and those rows asked of the model twice.
      onChunk: async (chunk, fresh) => {
        const settled = await Promise.allSettled(await this.rows.runChunk(chunk, undefined, fresh));
        const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
        if (failed) throw failed.reason;
        await this.rows.afterChunk(chunk.batch_id);
      },
    }).then((jobs) => (this.jobs = jobs));
    // A failed start (the database away) is tried again by the next look.
    this.jobsStart.catch(() => (this.jobsStart = undefined));
    return this.jobsStart;
  }

  /** The plan job: sends every chunk as a job, recording progress after each. */
  private async planAll(id: string): Promise<void> {
    // A plan job may be taken before PgBatchJobs.start has answered: its jobs are awaited, not assumed.
    const jobs = await this.ensureJobs();
    let batch = await this.store.getBatchExecution(id);
    if (!batch || isTerminal(batch.status)) return;
    let state: PlanState = { planned: batch.planned, cursor: batch.plan_cursor };
    // h-harden: this run's chunks queue behind its organization's chunks already waiting (fairness).
    let priority = batch.planned_all ? 0 : -(await jobs.pendingChunks(batch.org_id));
    while (!batch.planned_all && !this.rows.stopping) {
      let next;
      try {
        next = await planNext(this.store, batch, state, this.rows.chunkOf(batch));
      } catch (err) {
        if (err instanceof DatasetGone) return failBatch(this.store, id, err.message);
        throw err;
      }
      if (next.chunk) await jobs.sendChunk(next.chunk, batch.org_id, priority--);
      state = next.state;
      const updated = await this.store.updateBatchExecution(id, {
        planned: state.planned,
        plan_cursor: state.cursor,
        ...(next.end ? { planned_all: true, total: state.planned } : {}),
      });
      if (!updated || isTerminal(updated.status)) return;
      batch = updated;
    }
    if (this.rows.stopping) throw new Error('stopping: the plan job is taken up again');
    await maybeFinish(this.store, id);
  }

  async stop(graceMs = 10_000): Promise<void> {
    clearInterval(this.watch);
    const left = await this.rows.drain(graceMs);
    if (left === null) return;
    // h-harden: the queue gets what is left of the grace, not a second one.
    await (this.jobs ?? (await this.jobsStart?.catch(() => undefined)))?.stop(left);
  }
}
