// The batch records a store keeps (batch runs, their rows, filters and patches); src/store/types.ts
// re-exports them with the rest of the Store's types.
import type { BatchExecution, BatchRow, BatchStatus } from '../schemas/batches.ts';

/**
 * A batch run as stored: the wire record plus who started it (the runner acts as that key's caller,
 * also after a restart) and how far the planner got through the items.
 */
export type BatchExecutionRecord = BatchExecution & {
  org_id: string;
  /** The key that started the run: rows run as its caller. */
  key_id: string;
  /** Rows handed out so far (positions 0..planned-1). */
  planned: number;
  /** True once every row is handed out (total is then final). */
  planned_all: boolean;
  /** The dataset cursor (ItemPage.last) after the last planned page; null at the start. */
  plan_cursor: number | null;
};
/** A row as stored: the wire row plus its cost (summed into the run's cost_usd). */
export type BatchRowRecord = BatchRow & { cost_usd: number | null };

/**
 * A row cut to its scores: no justifications, tokens, models or costs. A few hundred bytes against
 * a row's kilobyte or more, so reading every row of a run (an experiment, a summary) stays cheap.
 */
export type BatchRowScores = Pick<BatchRow, 'position' | 'item_id' | 'index' | 'execution_log_id' | 'score' | 'error'> & {
  /** confidence: present when the result had one (calibration's ECE reads it). */
  evaluator_results: Array<{ evaluator_id: string; evaluator_name: string; score: number | null; not_applicable?: true; confidence?: number }>;
};

export function rowScores(row: BatchRow): BatchRowScores {
  return {
    position: row.position,
    item_id: row.item_id,
    index: row.index,
    execution_log_id: row.execution_log_id,
    score: row.score,
    error: row.error,
    evaluator_results: row.evaluator_results.map((r) => {
      // Fields set in place, not spread from a temporary object per result: every row of a run is cut.
      const scores: BatchRowScores['evaluator_results'][number] = { evaluator_id: r.evaluator_id, evaluator_name: r.evaluator_name, score: r.score };
      if (r.not_applicable === true) scores.not_applicable = true;
      if (typeof r.confidence === 'number') scores.confidence = r.confidence;
      return scores;
    }),
  };
}

export interface BatchFilter {
  org_id: string;
  judge_id?: string;
  dataset_id?: string;
  status?: BatchStatus;
  date_from?: string;
  date_to?: string;
}

/** Fields a batch update may set; `if_status` makes the update conditional on the current status. */
export interface BatchPatch {
  status?: BatchStatus;
  started_at?: string | null;
  finished_at?: string | null;
  error?: string | null;
  summary?: BatchExecution['summary'];
  cost_usd?: number | null;
  total?: number;
  planned?: number;
  planned_all?: boolean;
  plan_cursor?: number | null;
  /** Apply only while the run's status is one of these (else answer null, change nothing). */
  if_status?: BatchStatus[];
}

/** Rows in position order; `after` is the position of the previous page's last row. */
export interface BatchRowQuery {
  limit: number;
  after?: number;
}
