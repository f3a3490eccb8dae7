// Juries (SPEC section 11): an evaluator with `models` is scored by every model at once, and the
// jurors' scores become one by the evaluator's `aggregation`. docs/MODELS.md states the rules:
//
// - Jurors run concurrently (each through its own model's limiter), so a jury takes about as long
//   as its slowest juror (bench/jury.bench.ts).
// - A failed juror is left out and noted (its `error`); the result still scores from the others.
//   Every juror failing fails the result like a single model failing (model_unavailable when every
//   evaluator of the run failed).
// - A juror that finds the evaluator not applicable is left out of the score; the result is not
//   applicable when more than half of the jurors that answered say so.
// - mean: the arithmetic mean. median: the middle score (the mean of the two middle ones for an
//   even count). majority: each juror votes pass (score >= 0.5) or fail (< 0.5); the score is the
//   mean of the scores on the winning side, so it stays on the verdict's side of 0.5; a tie is the
//   mean of all.
// - spread: the highest minus the lowest juror score (0 = unanimous), the disagreement shown in
//   results, logs and the log page. Null when no juror scored.
// - Tokens and cost are summed over every juror, failed ones too (they spent); the cost is null
//   when any juror's is unknown, as for a run.
import { performance } from 'node:perf_hooks';
import type { EvaluatorResult, JurorResult, JuryAggregation } from '../schemas.ts';
import type { EvaluatorRecord } from '../store/types.ts';
import { sumCosts } from './providers/cost.ts';
import type { ModelErrorKind } from './providers/model-errors.ts';

/** One scored evaluator (or juror): the result, and why it failed when it did. */
export interface JurorOutcome {
  result: EvaluatorResult;
  failure?: ModelErrorKind;
}

/** The pass mark of a majority vote. */
export const MAJORITY_THRESHOLD = 0.5;

const round4 = (x: number) => Math.round(x * 10_000) / 10_000;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** The jury's score from its jurors' scores (at least one), by the aggregation (module comment). */
export function aggregateScores(scores: number[], aggregation: JuryAggregation): number {
  if (!scores.length) throw new Error('aggregateScores needs at least one score');
  if (aggregation === 'median') {
    const sorted = [...scores].sort((a, b) => a - b);
    const mid = sorted.length >> 1;
    return round4(sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2);
  }
  if (aggregation === 'majority') {
    const pass = scores.filter((s) => s >= MAJORITY_THRESHOLD);
    const fail = scores.filter((s) => s < MAJORITY_THRESHOLD);
    if (pass.length === fail.length) return round4(mean(scores));
    return round4(mean(pass.length > fail.length ? pass : fail));
  }
  return round4(mean(scores));
}

/** Highest minus lowest; null with no score. */
export function spreadOf(scores: number[]): number | null {
  return scores.length ? round4(Math.max(...scores) - Math.min(...scores)) : null;
}

function sumOptional(field: 'cache_read_tokens' | 'cache_write_tokens', outcomes: JurorOutcome[]): Partial<EvaluatorResult> {
  const values = outcomes.flatMap((o) => (o.result[field] === undefined ? [] : [o.result[field]!]));
  return values.length ? { [field]: values.reduce((a, b) => a + b, 0) } : {};
}

const jurorOf = (model: string, { result }: JurorOutcome): JurorResult => ({
  model,
  score: result.score,
  justification: result.justification,
  ...(result.not_applicable ? { not_applicable: true } : {}),
  input_tokens: result.input_tokens,
  output_tokens: result.output_tokens,
  cost_usd: result.cost_usd,
  latency_ms: result.latency_ms,
  ...(result.error !== undefined ? { error: result.error } : {}),
});

/**
 * Scores the evaluator with every juror of `evaluator.models` at once (`scoreJuror` scores one
 * model and never throws) and folds the verdicts into one result. Never throws.
 */
export async function scoreJury(evaluator: EvaluatorRecord, scoreJuror: (model: string) => Promise<JurorOutcome>): Promise<JurorOutcome> {
  const started = performance.now();
  const models = evaluator.models ?? [];
  const aggregation = evaluator.aggregation ?? 'mean';
  const outcomes = await Promise.all(models.map((m) => scoreJuror(m)));
  const latency_ms = Math.round((performance.now() - started) * 10) / 10;
  const jurors = outcomes.map((o, i) => jurorOf(models[i], o));
  const first = outcomes[0].result;
  const base: EvaluatorResult = {
    evaluator_id: first.evaluator_id,
    evaluator_name: first.evaluator_name,
    evaluator_version: first.evaluator_version,
    score: null,
    justification: null,
    not_applicable: false,
    degenerate: false,
    critical: first.critical,
    model: `jury: ${models.join(', ')}`,
    input_tokens: jurors.reduce((a, j) => a + j.input_tokens, 0),
    output_tokens: jurors.reduce((a, j) => a + j.output_tokens, 0),
    // Prompt-cache tokens are parts of input_tokens: summed the same way, present when any juror reported them.
    ...sumOptional('cache_read_tokens', outcomes),
    ...sumOptional('cache_write_tokens', outcomes),
    cost_usd: sumCosts(jurors.map((j) => j.cost_usd)),
    latency_ms,
    jurors,
    spread: null,
  };
  const failed = jurors.filter((j) => j.error !== undefined);
  if (failed.length === jurors.length) {
    const kinds = outcomes.map((o) => o.failure ?? 'server_error');
    return {
      result: { ...base, error: `Every juror failed: ${failed.map((j) => `${j.model}: ${j.error}`).join(' | ')}` },
      failure: kinds.every((k) => k === kinds[0]) ? kinds[0] : 'server_error',
    };
  }
  const answered = jurors.filter((j) => j.error === undefined);
  const failedNote = failed.length ? `; ${failed.length} juror${failed.length > 1 ? 's' : ''} failed and left out: ${failed.map((j) => j.model).join(', ')}` : '';
  const notApplicable = answered.filter((j) => j.not_applicable);
  if (notApplicable.length * 2 > answered.length) {
    const header = `Jury of ${jurors.length}: ${notApplicable.length} of ${answered.length} jurors found the evaluator not applicable${failedNote}.`;
    return { result: { ...base, not_applicable: true, justification: `${header} ${notApplicable[0].model}: ${notApplicable[0].justification ?? ''}`.trim() } };
  }
  const scoring = answered.filter((j): j is JurorResult & { score: number } => j.score !== null);
  const scores = scoring.map((j) => j.score);
  const score = aggregateScores(scores, aggregation);
  const spread = spreadOf(scores);
  // The juror whose score is nearest the verdict speaks for the jury (the first of equals, in the evaluator's order).
  const closest = scoring.reduce((best, j) => (Math.abs(j.score - score) < Math.abs(best.score - score) ? j : best));
  const header = `Jury of ${jurors.length}, ${aggregation} ${score} from ${scores.map((s, i) => `${scoring[i].model} ${s}`).join(', ')} (spread ${spread})${failedNote}.`;
  return {
    result: { ...base, score, spread, justification: `${header} Closest to the verdict, ${closest.model} (${closest.score}): ${closest.justification ?? ''}`.trim() },
  };
}
