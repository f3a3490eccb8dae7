// The batch queue (docs/BATCH.md): where a server's batch runs wait and are worked, behind one
// interface with two adapters, chosen where the services are built (src/app.ts):
//
// - in-process (in-process-queue.ts): one process; a planner per run reads its items a chunk at a
//   time, only when a row slot is free. The JSON store's queue.
// - pg-boss (pg-boss-queue.ts): any number of instances on one PostgreSQL database share a run's
//   chunk jobs.
//
// Both run a chunk's rows the same way (chunk-runner.ts). A cancel needs no call of its own: the
// run's status is read before each row and before each of its model calls (work.ts), so no model
// call starts once the cancel is answered, whichever queue holds the run.
import type { Config } from '../config.ts';
import type { SpanRunner } from '../context.ts';
import type { ScoringEngine } from '../runs/types.ts';
import type { BatchExecutionRecord, Store } from '../store/types.ts';
import type { BatchDispatcher } from './batches.ts';

export interface BatchQueueServices {
  store: Store;
  config: Config;
  engine: ScoringEngine;
  spans?: SpanRunner;
}

export interface BatchQueue extends BatchDispatcher {
  /** Takes work (when TRIBUNAL_BATCH_WORKER is on): resumes every unfinished run, then runs new ones as they are started. */
  start(): Promise<void>;
  /** Starts (or resumes) a run; a run already held is not started twice. */
  dispatch(batch: BatchExecutionRecord): Promise<void>;
  /** Stops taking rows; rows in flight may finish within `graceMs`, the rest resume at the next start (here or on another instance). */
  stop(graceMs?: number): Promise<void>;
}
