// What every evaluator result says whatever scored it (a model, a check, code): the evaluator, the
// score, the flags; and the one rounding of latencies the results carry.
import type { EvaluatorRecord } from '../store/types.ts';

export const resultBase = (evaluator: EvaluatorRecord, score: number | null, justification: string | null) => ({
  evaluator_id: evaluator.id,
  evaluator_name: evaluator.name,
  evaluator_version: evaluator.version,
  score,
  justification,
  not_applicable: false,
  degenerate: false,
  critical: evaluator.critical === true,
});

/** Milliseconds to one decimal. */
export const roundMs = (ms: number) => Math.round(ms * 10) / 10;
