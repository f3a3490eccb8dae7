// A batch run's counts and per-evaluator summary, added to one row at a time. The summary of a run
// read from its rows (batch/summary.ts) and the JSON store's running tally of a live run (kept as
// rows are recorded, json-batches.ts) are both made here, so the two cannot disagree in their rules.
//
// Rows may be added in any order (a live run's rows finish out of position order); the evaluators
// come out in the order a read of the rows by position meets them first (lowest position, then
// place in that row), so a tally kept as rows finish lists them as a read of the whole run would.
import type { BatchEvaluatorSummary } from '../schemas/batches.ts';
import type { BatchRowScores } from './batch-types.ts';

const round4 = (x: number) => Math.round(x * 10_000) / 10_000;

/** What a tally reads of a row: its position, its score and each evaluator's result. */
export type TallyRow = Pick<BatchRowScores, 'position' | 'score'> & {
  evaluator_results: ReadonlyArray<Pick<BatchRowScores['evaluator_results'][number], 'evaluator_id' | 'evaluator_name' | 'score'> & { not_applicable?: boolean }>;
};

interface EvaluatorTally {
  name: string;
  n: number;
  sum: number;
  min: number;
  max: number;
  errors: number;
  /** Where a read by position meets this evaluator first: the lowest position, then its place in that row. */
  firstPosition: number;
  firstPlace: number;
}

/** The counts of a run's rows, as the store counts them: done (scored) and failed. */
export interface BatchCounts {
  done: number;
  failed: number;
  summary: BatchEvaluatorSummary[];
}

export class BatchTally {
  done = 0;
  failed = 0;
  private readonly evaluators = new Map<string, EvaluatorTally>();

  add(row: TallyRow): void {
    if (row.score !== null) this.done++;
    else this.failed++;
    const results = row.evaluator_results;
    for (let place = 0; place < results.length; place++) {
      const r = results[place];
      let e = this.evaluators.get(r.evaluator_id);
      if (!e) {
        e = { name: r.evaluator_name, n: 0, sum: 0, min: Infinity, max: -Infinity, errors: 0, firstPosition: row.position, firstPlace: place };
        this.evaluators.set(r.evaluator_id, e);
      } else if (row.position < e.firstPosition || (row.position === e.firstPosition && place < e.firstPlace)) {
        // Met earlier by position: the name a read by position would keep is this row's.
        e.name = r.evaluator_name;
        e.firstPosition = row.position;
        e.firstPlace = place;
      }
      if (r.score !== null) {
        e.n++;
        e.sum += r.score;
        if (r.score < e.min) e.min = r.score;
        if (r.score > e.max) e.max = r.score;
      } else if (!r.not_applicable) e.errors++;
    }
  }

  summary(): BatchEvaluatorSummary[] {
    const order = [...this.evaluators].sort(([, a], [, b]) => a.firstPosition - b.firstPosition || a.firstPlace - b.firstPlace);
    return order.map(([evaluator_id, e]) => ({
      evaluator_id,
      evaluator_name: e.name,
      n: e.n,
      mean: e.n ? round4(e.sum / e.n) : null,
      min: e.n ? e.min : null,
      max: e.n ? e.max : null,
      errors: e.errors,
    }));
  }

  /** A tally of the same rows, added to apart from this one (batch/summary.ts keeps a run's first rows). */
  copy(): BatchTally {
    const c = new BatchTally();
    c.done = this.done;
    c.failed = this.failed;
    for (const [id, e] of this.evaluators) c.evaluators.set(id, { ...e });
    return c;
  }

  counts(): BatchCounts {
    return { done: this.done, failed: this.failed, summary: this.summary() };
  }
}
