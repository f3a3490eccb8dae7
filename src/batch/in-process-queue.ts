// The in-process batch queue (queue.ts), for one process (the JSON store): each unfinished run has
// a planner that reads its items a page (a chunk) at a time, only when a row slot is free, so memory
// holds a few chunks, never a whole dataset. Runs take turns chunk by chunk. A run resumed after a
// restart is planned again from its first row; rows recorded are skipped (work.ts).
import type { BatchExecutionRecord } from '../store/types.ts';
import { isTerminal } from './batches.ts';
import { batchLog, ChunkRunner, type RowSet } from './chunk-runner.ts';
import type { BatchQueue, BatchQueueServices } from './queue.ts';
import { DatasetGone, failBatch, planNext, resummarize, type PlanState } from './work.ts';

/** How long a run whose work failed on a store error waits before it is worked again. */
const RETRY_MS = 1000;

/** A run this process is planning: where its planner is, its rows in flight, rows that failed to record. */
interface LocalRun extends RowSet {
  state: PlanState;
  /** Its planner loop is going (drive()). */
  driving?: boolean;
}

export class InProcessBatchQueue implements BatchQueue {
  private readonly rows: ChunkRunner;
  /** The runs this process is planning, with where each planner is. */
  private readonly local = new Map<string, LocalRun>();

  constructor(services: BatchQueueServices) {
    this.rows = new ChunkRunner(services);
  }

  private get store() {
    return this.rows.store;
  }

  async start(): Promise<void> {
    const unfinished = await this.rows.begin(this);
    for (const b of unfinished ?? []) await this.dispatch(b);
  }

  async dispatch(batch: BatchExecutionRecord): Promise<void> {
    if (this.rows.stopping) return;
    if (!this.local.has(batch.id)) this.local.set(batch.id, { state: { planned: 0, cursor: null }, rows: new Set(), errors: 0 });
    this.pump();
  }

  /**
   * Every local run gets its own planner loop, each waiting for row slots on its own, so the fair
   * slots (fair-slots.ts) choose between organizations' waiting rows; one run waiting for a slot
   * never holds up another run's planning (h-harden, issue 24 item 5).
   */
  private pump(): void {
    for (const [id, run] of this.local) {
      if (run.driving) continue;
      run.driving = true;
      void this.drive(id, run).finally(() => (run.driving = false));
    }
  }

  private async drive(id: string, run: LocalRun): Promise<void> {
    while (!this.rows.stopping && this.local.get(id) === run) {
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
      this.rows.prepared.drop(id);
      // Rows in flight when it was cancelled are recorded; the summary takes them in.
      if (batch) this.rows.track(Promise.all([...run.rows]).then(() => resummarize(this.store, id)));
      return;
    }
    let next;
    try {
      next = await planNext(this.store, batch, run.state, this.rows.chunkOf(batch));
    } catch (err) {
      if (!(err instanceof DatasetGone)) throw err;
      this.local.delete(id);
      this.rows.prepared.drop(id);
      await failBatch(this.store, id, err.message);
      return;
    }
    run.state = next.state;
    if (next.chunk) await this.rows.runChunk(next.chunk, run);
    if (next.end) {
      this.local.delete(id);
      await this.store.updateBatchExecution(id, { planned: next.state.planned, planned_all: true, total: next.state.planned, plan_cursor: next.state.cursor });
      this.rows.track(
        Promise.allSettled([...run.rows]).then(async () => {
          await this.rows.afterChunk(id);
          // A row that failed on a store error was not recorded: the run is worked again.
          if (run.errors) this.retryLater(id, run, new Error(`${run.errors} row(s) not recorded`));
        }),
      );
    }
  }

  /** Plans a run again from its first row after a delay (rows recorded are skipped). */
  private retryLater(id: string, run: LocalRun, err: unknown): void {
    batchLog(`run ${id}: ${(err as Error).message}; worked again in ${RETRY_MS} ms`);
    const timer = setTimeout(() => {
      if (this.rows.stopping || this.local.has(id)) return;
      void Promise.all([...run.rows])
        .then(() => this.store.getBatchExecution(id))
        .then((batch) => (batch && !isTerminal(batch.status) ? this.dispatch(batch) : undefined))
        .catch((e) => this.retryLater(id, run, e));
    }, RETRY_MS);
    timer.unref();
  }

  async stop(graceMs = 10_000): Promise<void> {
    await this.rows.drain(graceMs);
  }
}
