// Confidence of an evaluator result (SPEC section 16, partly): how sure the scoring was, 0..1, or null
// when nothing measures it. Pure; applied once to every result (scoring.ts).
// - logprobs scoring: the probability the model put on its most likely grade (grade_probabilities);
// - a jury: agreement, 1 - spread (the highest minus the lowest juror score), with two or more jurors scoring;
// - otherwise (one model writing its score): null. A confidence the model states itself is not asked
//   for yet; it would be a weak signal until calibrated anyway.
import type { EvaluatorResult } from '../schemas.ts';

const round = (x: number) => Math.round(x * 1000) / 1000;

export function confidenceOf(result: EvaluatorResult): number | null {
  if (result.score === null || result.score === undefined || result.error || result.not_applicable) return null;
  const grades = result.grade_probabilities ? Object.values(result.grade_probabilities) : [];
  if (grades.length) return round(Math.min(1, Math.max(0, Math.max(...grades))));
  const scoredJurors = result.jurors?.filter((j) => j.score !== null).length ?? 0;
  if (scoredJurors >= 2 && typeof result.spread === 'number') return round(Math.min(1, Math.max(0, 1 - result.spread)));
  return null;
}

/** The result with its confidence (a cached result keeps the one it was stored with). */
export const withConfidence = (result: EvaluatorResult): EvaluatorResult => ('confidence' in result ? result : { ...result, confidence: confidenceOf(result) });
