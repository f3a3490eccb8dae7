// The batch runner each server process starts (docs/BATCH.md). It runs rows with bounded
// concurrency (TRIBUNAL_BATCH_CONCURRENCY); every row's model calls queue behind interactive calls
// in the server-wide model limiter (engine/providers/limiter.ts).
//
// - JSON store (one process): an in-process queue. Each unfinished run has a planner that reads its
//   items a page (a chunk) at a time, only when a row slot is free, so memory holds a few chunks,
//   never a whole dataset. Runs take turns chunk by chunk.
// - PostgreSQL (any number of instances): pg-boss (pg-queue.ts) holds the work. One plan job per run
//   turns it into chunk jobs; every instance's workers take chunk jobs, so instances share a run.
// At start-up every queued or running run is picked up again by itself.
import type { Config } from '../config.ts';
import type { SpanRunner } from '../context.ts';
import type { ScoringEngine } from '../runs/types.ts';
import type { BatchExecutionRecord, Store } from '../store/types.ts';
import { isTerminal, registerDispatcher, type BatchDispatcher } from './batches.ts';
import { PgBatchQueue } from './pg-queue.ts';
import { FairSlots } from './fair-slots.ts';
import { KeyLiveness } from './key-liveness.ts';
import {
  batchCaller,
  batchTarget,
  DatasetGone,
  failBatch,
  maybeFinish,
  planNext,
  prepareChunk,
  recordedIn,
  resummarize,
  runRow,
  type BatchEnv,
  type Chunk,
  type PlanState,
} from './work.ts';
import { log } from '../log.ts';
import { modeOf, providerRowOptions } from './provider-mode.ts';
import { dropHub } from './provider-hub.ts';

export interface BatchRunnerServices {
  store: Store;
  config: Config;
  engine: ScoringEngine;
  spans?: SpanRunner;
}

const batchLog = (line: string) => log.warn(`batch: ${line}`);
/** JSON store: how long a run whose work failed on a store error waits before it is worked again. */
const RETRY_MS = 1000;

/** JSON store: a run this process is planning: where its planner is, its rows in flight, rows that failed to record. */
interface LocalRun {
  state: PlanState;
  rows: Set<Promise<unknown>>;
  errors: number;
  /** Its planner loop is going (drive()). */
  driving?: boolean;
}

export class BatchRunner implements BatchDispatcher {
  /** h-harden: row slots shared fairly between organizations (fair-slots.ts). */
  private readonly slots: FairSlots;
  private readonly env: BatchEnv;
  private readonly inFlight = new Set<Promise<unknown>>();
  /** JSON store: the runs this process is planning, with where each planner is. */
  private readonly local = new Map<string, LocalRun>();
  private stopping = false;
  private pg?: PgBatchQueue;
  private pgStart?: Promise<PgBatchQueue>;
  private watch?: NodeJS.Timeout;
  /** PostgreSQL: unfinished runs whose plan job this instance has sent. */
  private readonly seen = new Set<string>();
  private looking = false;
  /** h-harden: runs stop when their key is revoked or expires. */
  private readonly keys: KeyLiveness;

  constructor(private readonly services: BatchRunnerServices) {
    this.slots = new FairSlots(services.config.batch.concurrency);
    this.keys = new KeyLiveness(services.store);
    this.env = { store: services.store, engine: services.engine, ctx: { store: services.store, config: services.config, ...(services.spans ? { spans: services.spans } : {}) } };
  }

  private get store() {
    return this.services.store;
  }

  /** Rows per unit of work: a provider_batch run submits a unit's calls as one provider batch per model. */
  private chunkOf(batch: BatchExecutionRecord): number {
    return modeOf(batch) === 'provider_batch' ? this.services.config.batch.providerRows : this.services.config.batch.chunk;
  }

  /** Takes work: resumes every unfinished run, then runs new ones as they are started. */
  async start(): Promise<void> {
    const { batch } = this.services.config;
    if (!batch.worker) return;
    registerDispatcher(this.store, this);
    const unfinished = await this.store.listUnfinishedBatchExecutions();
    if (this.store.kind === 'postgres') {
      // pg-boss starts with the first run this instance sees (started here, or by another instance:
      // looked for every few seconds), so an instance that never runs a batch keeps no queue.
      this.watch = setInterval(() => void this.lookForWork(), 2000);
      this.watch.unref();
    }
    for (const b of unfinished) await this.dispatch(b);
  }

  /**
   * PostgreSQL: every 2 s, the unfinished runs. A run this instance has not seen yet gets its plan
   * job sent (its id makes a repeat harmless), so a run stored by an instance that sends no jobs
   * (TRIBUNAL_BATCH_WORKER=false, or a crash between storing the run and sending its job) starts
   * on its own; pg-boss starts with the first such run.
   */
  private async lookForWork(): Promise<void> {
    if (this.stopping || this.looking) return;
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

  private ensurePg(): Promise<PgBatchQueue> {
    const { batch } = this.services.config;
    this.pgStart ??= PgBatchQueue.start(this.store, {
      leaseMs: batch.leaseMs,
      jobRetentionMs: batch.jobRetentionMs, // h-harden
      workers: Math.ceil(batch.concurrency / batch.chunk) + 1,
      onPlan: (id) => this.planAll(id),
      // Every row of the chunk settles before the job ends: a job failed while rows still run would
      // be taken up again at once and those rows asked of the model twice.
      onChunk: async (chunk) => {
        const settled = await Promise.allSettled(await this.runChunk(chunk));
        const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
        if (failed) throw failed.reason;
        await this.afterChunk(chunk.batch_id);
      },
    }).then((pg) => (this.pg = pg));
    // A failed start (the database away) is tried again by the next look.
    this.pgStart.catch(() => (this.pgStart = undefined));
    return this.pgStart;
  }

  async dispatch(batch: BatchExecutionRecord): Promise<void> {
    if (this.stopping) return;
    if (this.store.kind === 'postgres') {
      await (await this.ensurePg()).sendPlan(batch.id);
      this.seen.add(batch.id);
      return;
    }
    // A run resumed after a restart is planned again from its first row; rows recorded are skipped.
    if (!this.local.has(batch.id)) this.local.set(batch.id, { state: { planned: 0, cursor: null }, rows: new Set(), errors: 0 });
    this.pump();
  }

  /**
   * JSON store: every local run gets its own planner loop, each waiting for row slots on its own,
   * so the fair slots (fair-slots.ts) choose between organizations' waiting rows; one run waiting for
   * a slot never holds up another run's planning (h-harden, issue 24 item 5).
   */
  private pump(): void {
    for (const [id, run] of this.local) {
      if (run.driving) continue;
      run.driving = true;
      void this.drive(id, run).finally(() => (run.driving = false));
    }
  }

  private async drive(id: string, run: LocalRun): Promise<void> {
    while (!this.stopping && this.local.get(id) === run) {
      try {
        await this.pumpOne(id, run);
      } catch (err) {
        // A store failure (disk full, say): this run is planned again shortly from its first
        // row, skipping rows recorded; the other runs go on.
        this.local.delete(id);
        this.retryLater(id, run, err);
      }
    }
  }

  private async pumpOne(id: string, run: LocalRun): Promise<void> {
    const batch = await this.store.getBatchExecution(id);
    if (!batch || isTerminal(batch.status)) {
      this.local.delete(id);
      // Rows in flight when it was cancelled are recorded; the summary takes them in.
      if (batch)
        this.track(
          Promise.all([...run.rows]).then(() => resummarize(this.store, id)),
          new Set(),
        );
      return;
    }
    let next;
    try {
      next = await planNext(this.store, batch, run.state, this.chunkOf(batch));
    } catch (err) {
      if (!(err instanceof DatasetGone)) throw err;
      this.local.delete(id);
      await failBatch(this.store, id, err.message);
      return;
    }
    run.state = next.state;
    if (next.chunk) await this.runChunk(next.chunk, run);
    if (next.end) {
      this.local.delete(id);
      await this.store.updateBatchExecution(id, { planned: next.state.planned, planned_all: true, total: next.state.planned, plan_cursor: next.state.cursor });
      this.track(
        Promise.allSettled([...run.rows]).then(async () => {
          await this.afterChunk(id);
          // A row that failed on a store error was not recorded: the run is worked again.
          if (run.errors) this.retryLater(id, run, new Error(`${run.errors} row(s) not recorded`));
        }),
        new Set(),
      );
    }
  }

  /** JSON store: plans a run again from its first row after a delay (rows recorded are skipped). */
  private retryLater(id: string, run: LocalRun, err: unknown): void {
    batchLog(`run ${id}: ${(err as Error).message}; worked again in ${RETRY_MS} ms`);
    const timer = setTimeout(() => {
      if (this.stopping || this.local.has(id)) return;
      void Promise.all([...run.rows])
        .then(() => this.store.getBatchExecution(id))
        .then((batch) => (batch && !isTerminal(batch.status) ? this.dispatch(batch) : undefined))
        .catch((e) => this.retryLater(id, run, e));
    }, RETRY_MS);
    timer.unref();
  }

  private track(p: Promise<unknown>, set: Set<Promise<unknown>>, run?: LocalRun): void {
    const settled = p.catch((err) => {
      if (run) run.errors++;
      batchLog(`row failed: ${(err as Error).message}`);
    });
    set.add(settled);
    this.inFlight.add(settled);
    void settled.finally(() => {
      set.delete(settled);
      this.inFlight.delete(settled);
    });
  }

  private async planFailed(id: string, err: unknown): Promise<void> {
    if (err instanceof DatasetGone) await failBatch(this.store, id, err.message);
    else throw err;
  }

  /** PostgreSQL: the plan job. Sends every chunk as a job, recording progress after each, so a retried plan job goes on where it stopped. */
  private async planAll(id: string): Promise<void> {
    let batch = await this.store.getBatchExecution(id);
    if (!batch || isTerminal(batch.status)) return;
    let state: PlanState = { planned: batch.planned, cursor: batch.plan_cursor };
    // h-harden: this run's chunks queue behind its organization's chunks already waiting (fairness).
    let priority = batch.planned_all ? 0 : -(await this.pg!.pendingChunks(batch.org_id));
    while (!batch.planned_all && !this.stopping) {
      let next;
      try {
        next = await planNext(this.store, batch, state, this.chunkOf(batch));
      } catch (err) {
        return this.planFailed(id, err);
      }
      if (next.chunk) await this.pg!.sendChunk(next.chunk, batch.org_id, priority--);
      state = next.state;
      const updated = await this.store.updateBatchExecution(id, {
        planned: state.planned,
        plan_cursor: state.cursor,
        ...(next.end ? { planned_all: true, total: state.planned } : {}),
      });
      if (!updated || isTerminal(updated.status)) return;
      batch = updated;
    }
    if (this.stopping) throw new Error('stopping: the plan job is taken up again');
    await maybeFinish(this.store, id);
  }

  /**
   * Starts the rows of a chunk not recorded yet, each when a row slot is free; answers their
   * promises (JSON store: also kept in the local run's set as each starts). Rows of a run that has
   * ended (cancelled, failed) are not started.
   */
  private async runChunk(chunk: Chunk, run?: LocalRun): Promise<Array<Promise<unknown>>> {
    const batch = await this.store.getBatchExecution(chunk.batch_id);
    if (!batch || isTerminal(batch.status)) return [];
    if (batch.dataset_id && !(await this.store.getDataset(batch.dataset_id))) {
      await failBatch(this.store, batch.id, new DatasetGone(batch.dataset_id).message);
      return [];
    }
    const [caller, target] = await Promise.all([batchCaller(this.store, batch), batchTarget(this.store, batch)]);
    if (!caller) {
      await failBatch(this.store, batch.id, 'the organization or API key that started the run no longer exists');
      return [];
    }
    // h-harden: a run whose key was revoked or expired is cancelled, with the reason.
    if (await this.keys.endIfKeyEnded(batch)) return [];
    if (!target) {
      await failBatch(
        this.store,
        batch.id,
        `the ${batch.judge_id ? `judge ${batch.judge_id}` : `evaluator ${batch.evaluator_id}`} was deleted during the run; the rows scored before are kept`,
      );
      return [];
    }
    // Issue 32: a provider_batch run's rows wait for their provider batch, not for a row slot.
    let provider: Awaited<ReturnType<typeof providerRowOptions>>;
    try {
      provider = await providerRowOptions(this.env.ctx, caller, batch, target);
    } catch (err) {
      await failBatch(this.store, batch.id, (err as Error).message);
      return [];
    }
    if (batch.status === 'queued') await this.store.updateBatchExecution(batch.id, { status: 'running', started_at: new Date().toISOString(), if_status: ['queued'] });
    const done = await recordedIn(this.store, chunk);
    const prepared = done.size < chunk.rows.length ? await prepareChunk(this.env, caller, target) : null;
    const started: Array<Promise<unknown>> = [];
    for (let i = 0; i < chunk.rows.length; i++) {
      const position = chunk.first + i;
      if (done.has(position)) continue;
      const release = provider ? () => {} : await this.slots.acquire(batch.org_id);
      // Checked when the row is about to start: after a cancel, no row starts.
      const now = this.stopping ? null : await this.store.getBatchExecution(batch.id).catch((err) => (release(), Promise.reject(err)));
      if (!now || isTerminal(now.status) || (await this.keys.endIfKeyEnded(now).catch((err) => (release(), Promise.reject(err))))) {
        release();
        break;
      }
      const row = runRow(this.env, caller, now, target, position, chunk.rows[i], provider?.(position), prepared ?? undefined).finally(release);
      started.push(row);
      this.track(row, run?.rows ?? new Set(), run);
    }
    if (this.stopping && started.length < chunk.rows.length - done.size) {
      // Fails the chunk job (PostgreSQL) so that its rows not started are taken up again. The JSON
      // pump ignores the list (it replans at the next start), so the rejection is marked handled here.
      const stopped = Promise.reject(new Error('stopping: the rest of the chunk is taken up again'));
      stopped.catch(() => {});
      started.push(stopped);
    }
    return started;
  }

  private async afterChunk(id: string): Promise<void> {
    const batch = await this.store.getBatchExecution(id);
    if (!batch) return;
    if (isTerminal(batch.status)) await resummarize(this.store, id);
    else await maybeFinish(this.store, id);
  }

  /** Stops taking rows; rows in flight may finish within `graceMs`, the rest resume at the next start (here or on another instance). */
  async stop(graceMs = 10_000): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    clearInterval(this.watch);
    registerDispatcher(this.store, null);
    dropHub(this.store); // provider batches stop being polled; the next start polls them again
    const ends = Date.now() + graceMs;
    const settled = Promise.allSettled([...this.inFlight]);
    await Promise.race([settled, new Promise((r) => setTimeout(r, graceMs).unref())]);
    // h-harden: the queue gets what is left of the grace, not a second one.
    await (this.pg ?? (await this.pgStart?.catch(() => undefined)))?.stop(Math.max(0, ends - Date.now()));
  }
}
