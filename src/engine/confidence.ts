// Confidence of an evaluator result (SPEC section 16): how sure the scoring was, 0..1, or null when
// nothing measures it. Pure; applied once to every result (runs/execute.ts). The first that applies wins:
// - logprobs scoring: the probability the model put on its most likely grade (grade_probabilities);
// - a jury: agreement, 1 - spread (the highest minus the lowest juror score), with two or more jurors scoring;
// - one model writing its score: the confidence it stated in the same structured answer (answer.ts),
//   null when it gave none. A stated confidence is a weak signal until a calibration run's ECE and
//   reliability bins (calibration/reliability.ts) show it tracks agreement with people.
// Which one a result carries shows in the result itself: grade_probabilities, jurors, or neither (stated).
import type { EvaluatorResult } from '../schemas.ts';

const round = (x: number) => Math.round(x * 1000) / 1000;

export function confidenceOf(result: EvaluatorResult, stated: number | null = null): number | null {
  if (result.score === null || result.score === undefined || result.error || result.not_applicable) return null;
  const grades = result.grade_probabilities ? Object.values(result.grade_probabilities) : [];
  if (grades.length) return round(Math.min(1, Math.max(0, Math.max(...grades))));
  const scoredJurors = result.jurors?.filter((j) => j.score !== null).length ?? 0;
  if (scoredJurors >= 2 && typeof result.spread === 'number') return round(Math.min(1, Math.max(0, 1 - result.spread)));
  if (result.jurors) return null; // a jury with one juror scoring measures no agreement, and states nothing for the jury
  return stated;
}

/** The result with its confidence (a single model's result already has its own; a cached result keeps the one it was stored with). */
export const withConfidence = (result: EvaluatorResult): EvaluatorResult => ('confidence' in result ? result : { ...result, confidence: confidenceOf(result) });
