// A batch run's evaluator versions and scoring targets (runs/types.ts PreparedRun), loaded once per
// run in this process rather than once per chunk (issue 25 item 5). On PostgreSQL each instance that
// takes a chunk of the run loads them once. The run then scores the versions it loaded first, even
// when an evaluator the judge does not pin is edited while the run goes on. A run's entry is dropped
// when the run ends (completed, cancelled, failed); at most `max` runs are kept, the least recently
// used dropped first (it is loaded again if it comes back).
import type { PreparedRun } from '../runs/types.ts';

/** Runs kept at most: far more than run at once in one process (each is a few records). */
const MAX_RUNS = 64;

export class PreparedRuns {
  private readonly runs = new Map<string, Promise<PreparedRun | null>>();

  constructor(private readonly max = MAX_RUNS) {}

  /**
   * The run's prepared versions: `load`ed the first time it is asked for, the same promise for every
   * chunk after (chunks of one run asked at once share one load). A failed load (null) is not kept:
   * its rows load for themselves and fail as they always have, and the next chunk tries again.
   */
  of(batchId: string, load: () => Promise<PreparedRun | null>): Promise<PreparedRun | null> {
    const kept = this.runs.get(batchId);
    if (kept) {
      this.runs.delete(batchId);
      this.runs.set(batchId, kept); // most recently used last
      return kept;
    }
    const loading = load();
    this.runs.set(batchId, loading);
    const forget = () => {
      if (this.runs.get(batchId) === loading) this.runs.delete(batchId);
    };
    loading.then((prepared) => prepared ?? forget(), forget);
    for (const oldest of this.runs.keys()) {
      if (this.runs.size <= this.max) break;
      this.runs.delete(oldest);
    }
    return loading;
  }

  /** The run has ended (or is no longer this process's): its versions are let go. */
  drop(batchId: string): void {
    this.runs.delete(batchId);
  }

  /** Runs held now. */
  get size(): number {
    return this.runs.size;
  }
}
