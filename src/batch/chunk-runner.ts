// What both batch queue adapters (queue.ts) share: running a chunk's rows with bounded concurrency
// (TRIBUNAL_BATCH_CONCURRENCY row slots shared fairly between organizations, fair-slots.ts), the
// checks before a chunk and before each row (run ended, dataset gone, key revoked, target deleted),
// ending a run after its rows, and the start and stop every queue goes through. Every row's model
// calls queue behind interactive calls in the server-wide model limiter (engine/providers/limiter.ts).
import type { BatchExecutionRecord } from '../store/types.ts';
import { isTerminal, registerDispatcher } from './batches.ts';
import { FairSlots } from './fair-slots.ts';
import { KeyLiveness } from './key-liveness.ts';
import { dropHub } from './provider-hub.ts';
import { modeOf, providerRowOptions } from './provider-mode.ts';
import type { BatchQueue, BatchQueueServices } from './queue.ts';
import { PreparedRuns } from './prepared-runs.ts';
import { RunStatusReads } from './status-reads.ts';
import {
  batchCaller,
  batchTarget,
  DatasetGone,
  failBatch,
  liveRetarget,
  maybeFinish,
  prepareRun,
  recordedIn,
  resummarize,
  runGate,
  runRow,
  type BatchEnv,
  type Chunk,
} from './work.ts';
import { log } from '../log.ts';

export const batchLog = (line: string) => log.warn(`batch: ${line}`);

/** Rows of one run started by this process; a row that failed on a store error counts in `errors` (not recorded). */
export interface RowSet {
  rows: Set<Promise<unknown>>;
  errors: number;
}

export class ChunkRunner {
  /** Set by stop(): no row starts after it. */
  stopping = false;
  readonly store: BatchQueueServices['store'];
  /** h-harden: row slots shared fairly between organizations (fair-slots.ts). */
  private readonly slots: FairSlots;
  /** h-harden: runs stop when their key is revoked or expires. */
  private readonly keys: KeyLiveness;
  private readonly env: BatchEnv;
  private readonly inFlight = new Set<Promise<unknown>>();
  /** Issue 25 item 5: each run's evaluator versions and models, loaded once per run, not per chunk. */
  readonly prepared = new PreparedRuns();

  constructor(private readonly services: BatchQueueServices) {
    this.store = services.store;
    this.slots = new FairSlots(services.config.batch.concurrency);
    this.keys = new KeyLiveness(services.store);
    this.env = {
      store: services.store,
      status: new RunStatusReads(services.store),
      engine: services.engine,
      ctx: { store: services.store, config: services.config, ...(services.spans ? { spans: services.spans } : {}) },
    };
  }

  /**
   * A queue's start: null when this process takes no batch work (TRIBUNAL_BATCH_WORKER=false);
   * otherwise `queue` is registered for runs started through the store, and the unfinished runs
   * (queued or running) are answered, for the queue to dispatch again.
   */
  async begin(queue: BatchQueue): Promise<BatchExecutionRecord[] | null> {
    if (!this.services.config.batch.worker) return null;
    registerDispatcher(this.store, queue);
    return this.store.listUnfinishedBatchExecutions();
  }

  /** Rows per unit of work: a provider_batch run submits a unit's calls as one provider batch per model. */
  chunkOf(batch: BatchExecutionRecord): number {
    return modeOf(batch) === 'provider_batch' ? this.services.config.batch.providerRows : this.services.config.batch.chunk;
  }

  /**
   * Starts the rows of a chunk not recorded yet, each when a row slot is free; answers their
   * promises (also kept in `into` as each starts). Rows of a run that has ended (cancelled, failed)
   * are not started. While stopping, the answer ends with a rejected promise for the rows not started.
   * `fresh`: the queue knows this is the chunk's first attempt, so no row of it can have a log yet and
   * the rows skip looking for one (one store read per row on PostgreSQL). Were it wrong, nothing is
   * lost: the store refuses a second log of a row, and the row is recorded from the first (runRow).
   */
  async runChunk(chunk: Chunk, into?: RowSet, fresh = false): Promise<Array<Promise<unknown>>> {
    const batch = await this.store.getBatchExecution(chunk.batch_id);
    if (!batch || isTerminal(batch.status)) return this.ended(chunk.batch_id);
    if (batch.dataset_id && !(await this.store.getDataset(batch.dataset_id))) return this.ended(batch.id, new DatasetGone(batch.dataset_id).message);
    const [caller, target] = await Promise.all([batchCaller(this.store, batch), batchTarget(this.store, batch)]);
    if (!caller) return this.ended(batch.id, 'the organization or API key that started the run no longer exists');
    // h-harden: a run whose key was revoked or expired is cancelled, with the reason.
    if (await this.keys.endIfKeyEnded(batch)) return this.ended(batch.id);
    if (!target) {
      const what = batch.judge_id ? `judge ${batch.judge_id}` : `evaluator ${batch.evaluator_id}`;
      return this.ended(batch.id, `the ${what} was deleted during the run; the rows scored before are kept`);
    }
    // Issue 32: a provider_batch run's rows wait for their provider batch, not for a row slot.
    // Every model call of the chunk's rows passes the run's gate (no call starts after a cancel).
    const gate = runGate(this.env.status, batch.id);
    let provider: Awaited<ReturnType<typeof providerRowOptions>>;
    try {
      provider = await providerRowOptions(this.env.ctx, caller, batch, target, gate);
    } catch (err) {
      return this.ended(batch.id, (err as Error).message);
    }
    if (batch.status === 'queued') await this.store.updateBatchExecution(batch.id, { status: 'running', started_at: new Date().toISOString(), if_status: ['queued'] });
    const done = await recordedIn(this.store, chunk);
    const prepared = done.size < chunk.rows.length ? await this.prepared.of(batch.id, () => prepareRun(this.env, caller, target)) : null;
    const live = provider ? null : liveRetarget(gate);
    const started: Array<Promise<unknown>> = [];
    for (let i = 0; i < chunk.rows.length; i++) {
      const position = chunk.first + i;
      if (done.has(position)) continue;
      const release = provider ? () => {} : await this.slots.acquire(batch.org_id);
      // Checked when the row is about to start: after a cancel, no row starts. The status alone is
      // read; the rest of the record (tags, key, cache) does not change during a run.
      let now = this.stopping ? null : this.env.status.read(batch.id);
      if (now instanceof Promise) now = await now.catch((err) => (release(), Promise.reject(err)));
      if (!now || isTerminal(now) || (await this.keys.endIfKeyEnded(batch).catch((err) => (release(), Promise.reject(err))))) {
        release();
        break;
      }
      const row = runRow(this.env, caller, batch, target, position, chunk.rows[i], live ?? provider!(position), prepared ?? undefined, fresh).finally(release);
      started.push(row);
      this.track(row, into);
    }
    if (this.stopping && started.length < chunk.rows.length - done.size) {
      // Fails the chunk job (pg-boss) so that its rows not started are taken up again. The
      // in-process queue ignores the list (it replans at the next start), so the rejection is marked handled here.
      const stopped = Promise.reject(new Error('stopping: the rest of the chunk is taken up again'));
      stopped.catch(() => {});
      started.push(stopped);
    }
    return started;
  }

  /** A run that has ended (failed first with `failure` when given): its prepared versions are let go and no row of the chunk starts. */
  private async ended(batchId: string, failure?: string): Promise<Array<Promise<unknown>>> {
    if (failure) await failBatch(this.store, batchId, failure);
    this.prepared.drop(batchId);
    return [];
  }

  /** Keeps `p` until it settles (stop() waits for it); a failure is logged and counted in `into`. */
  track(p: Promise<unknown>, into?: RowSet): void {
    const settled = p.catch((err) => {
      if (into) into.errors++;
      batchLog(`row failed: ${(err as Error).message}`);
    });
    into?.rows.add(settled);
    this.inFlight.add(settled);
    void settled.finally(() => {
      into?.rows.delete(settled);
      this.inFlight.delete(settled);
    });
  }

  /** After a chunk's rows: a run that ended meanwhile gets its summary again; one whose rows are all recorded completes. */
  async afterChunk(id: string): Promise<void> {
    const batch = await this.store.getBatchExecution(id);
    if (batch && isTerminal(batch.status)) await resummarize(this.store, id);
    if (!batch || isTerminal(batch.status) || (await maybeFinish(this.store, id, batch))) this.prepared.drop(id);
  }

  /**
   * A queue's stop: no row starts any more, runs started through the store are no longer handed
   * here, and the rows in flight get up to `graceMs` to finish. Answers what is left of the grace
   * (for the queue's own stop), or null when stop had already been called.
   */
  async drain(graceMs: number): Promise<number | null> {
    if (this.stopping) return null;
    this.stopping = true;
    registerDispatcher(this.store, null);
    dropHub(this.store); // provider batches stop being polled; the next start polls them again
    const ends = Date.now() + graceMs;
    const settled = Promise.allSettled([...this.inFlight]);
    await Promise.race([settled, new Promise((r) => setTimeout(r, graceMs).unref())]);
    return Math.max(0, ends - Date.now());
  }
}
