// Pairwise comparison with a check or code evaluator (SPEC section 15): no model and no position
// to be biased by; each response is scored on its own and the higher score is preferred.
import { performance } from 'node:perf_hooks';
import type { Config } from '../config.ts';
import type { RunInput } from '../conversation/validate.ts';
import type { ComparisonEvaluatorResult, Preference } from '../schemas.ts';
import type { EvaluatorRecord } from '../store/types.ts';
import { scoreWithoutModel } from './score.ts';
import { roundMs } from './result-base.ts';

export async function compareWithoutModel(
  config: Pick<Config, 'code'>,
  orgId: string,
  evaluator: EvaluatorRecord,
  a: RunInput,
  b: RunInput,
): Promise<{ result: ComparisonEvaluatorResult }> {
  const started = performance.now();
  const [ra, rb] = await Promise.all([scoreWithoutModel(config, orgId, evaluator, a), scoreWithoutModel(config, orgId, evaluator, b)]);
  const base = {
    evaluator_id: evaluator.id,
    evaluator_name: evaluator.name,
    evaluator_version: evaluator.version,
    orders: [],
    model: null,
    input_tokens: 0,
    output_tokens: 0,
    cost_usd: 0,
  };
  if (ra.score === null || rb.score === null) {
    const error = [ra, rb].flatMap((r, i) => (r.error ? [`response ${i ? 'b' : 'a'}: ${r.error}`] : [])).join('; ');
    return { result: { ...base, preference: null, consistent: false, justification: null, error, latency_ms: roundMs(performance.now() - started) } };
  }
  const preference: Preference = ra.score > rb.score ? 'a' : rb.score > ra.score ? 'b' : 'tie';
  const justification = `Compared by score, no model: response a scored ${ra.score} (${ra.justification}); response b scored ${rb.score} (${rb.justification}).`;
  return { result: { ...base, preference, consistent: true, justification, latency_ms: roundMs(performance.now() - started) } };
}
