// Scoring one evaluator with a judge model, and the run's score. The kinds (kinds/) choose how an
// evaluator is scored; the two that call a model for one answer (kinds/tool.ts, kinds/logprobs.ts)
// share this call: build the prompt, ask (a malformed answer is asked again), price, and return the
// result. It never throws: a failure becomes score null with an error. The run's score: runScore
// below (docs/SCORING.md).
import { performance } from 'node:perf_hooks';
import type { RequestContext } from '../context.ts';
import type { RunInput } from '../conversation/validate.ts';
import type { EvaluatorResult } from '../schemas.ts';
import type { EvaluatorRecord } from '../store/types.ts';
import { parseAnswer, type Verdict } from './answer.ts';
import { costUsd } from './providers/cost.ts';
import type { JudgeModel, StructuredCall } from './providers/model.ts';
import { SCORE_TOOL } from './prompt.ts';
import { versionPrompt } from './system-prompts.ts';
import { versionNonce } from '../conversation/fence.ts';
import { gaveUp, type CallOutcome, type StructuredCallSpec } from './structured-call.ts';
import { confidenceOf } from './confidence.ts';
import { resultBase, roundMs } from '../checks/result-base.ts';
import { attachmentNote } from './attachments.ts';
import { degenerateReason } from './degenerate.ts';
import { MALFORMED_RETRIES, requestedSettings, type ScoringTarget } from './target.ts';
import type { Scored } from './kinds/kind.ts';

const round4 = (x: number) => Math.round(x * 10_000) / 10_000;

/**
 * The run's score: the mean of the applicable scores (failed and not-applicable results have score
 * null and are left out), capped at the lowest critical score; null when no evaluator gave a score.
 */
export function runScore(results: Array<Pick<EvaluatorResult, 'score' | 'critical'>>): number | null {
  // One pass, no arrays (flatMap and a spread cost microseconds per run): the same sum in the same order.
  let sum = 0;
  let count = 0;
  let lowestCritical = Number.POSITIVE_INFINITY;
  for (const r of results) {
    if (r.score === null) continue;
    sum += r.score;
    count++;
    if (r.critical) lowestCritical = Math.min(lowestCritical, r.score);
  }
  if (!count) return null;
  return round4(Math.min(sum / count, lowestCritical));
}

/** Degenerate detection looks at the judged text; a judged turn that calls tools has something to judge. */
export function degenerateInput(input: RunInput): string | null {
  if (input.turns && input.judged_turn !== undefined && input.turns[input.judged_turn].tool_calls?.length) return null;
  return degenerateReason(input.response);
}

/** The verdict's fields the result has from the start; confidence is weighed (confidenceOf), not copied. */
const VERDICT_FIELDS = new Set(['justification', 'score', 'not_applicable', 'confidence']);

/** The same call on every attempt (a malformed answer's problems are not fed back); made here, so the function is not named per call. */
const sameEveryAttempt = (request: StructuredCall) => (): StructuredCall => request;

/** How a kind asks the model for one verdict: the structured call, or the log-probabilities call. */
export type VerdictCall = (
  model: JudgeModel,
  spec: StructuredCallSpec<Verdict>,
  target?: ScoringTarget,
) => Promise<CallOutcome<Omit<Verdict, 'confidence'> & { confidence?: number | null }>>;

/** Scores one evaluator with one model through `call`; never throws. */
export async function scoreByModel(
  ctx: Pick<RequestContext, 'config'>,
  fallback: JudgeModel,
  evaluator: EvaluatorRecord,
  input: RunInput,
  target: ScoringTarget | undefined,
  call: VerdictCall,
): Promise<Scored> {
  const started = performance.now();
  const requested = target?.modelName ?? evaluator.model ?? ctx.config.model.name;
  const settings = requestedSettings(ctx, target);
  // The nonce of this evaluator version: the system prompt (the static part) is the same bytes on
  // every call, so the provider's prompt cache applies. The problems of a malformed answer are not fed back.
  const built = versionPrompt(evaluator, input, versionNonce(ctx.config.registry.secretKey, evaluator.id, evaluator.version));
  const { system } = built;
  const prompt = built.prompt + attachmentNote(input.attached, built.nonce); // h-attach
  const request: StructuredCall = {
    model: requested,
    system,
    prompt,
    tool: SCORE_TOOL,
    maxTokens: settings.max_tokens,
    strategy: target?.strategy,
    temperature: settings.temperature ?? undefined,
    cacheSystem: true,
    attachments: input.attached,
  };
  const spec: StructuredCallSpec<Verdict> = { attempts: MALFORMED_RETRIES + 1, request: sameEveryAttempt(request), check: parseAnswer };
  const outcome = await call(target?.model ?? fallback, spec, target);
  const { usage } = outcome;
  const verdict = outcome.ok ? outcome.value : null;
  // The shared fields first (resultBase, one literal), then the rest added in place in the order the
  // answer has always had. Not `{ ...resultBase(), model, ... }`: on Node 20 (V8 11.3) an object made
  // by a spread and then given more fields gets a map of its own every time, which made building a
  // result cost microseconds and every later reader of it (the log's JSON, the answer's)
  // megamorphic; fields added in a fixed order keep one shape per outcome.
  const result = resultBase(evaluator, verdict ? verdict.score : null, verdict ? verdict.justification : null) as EvaluatorResult;
  if (verdict) result.not_applicable = verdict.not_applicable;
  result.model = outcome.model ?? requested;
  result.input_tokens = usage.input_tokens;
  result.output_tokens = usage.output_tokens;
  // Priced by the model asked for: the API may answer with a dated name of the same model.
  result.cost_usd = costUsd(requested, usage, target?.prices ?? ctx.config.model.prices, target?.provider);
  result.latency_ms = 0;
  result.cache_read_tokens = usage.cache_read_tokens;
  result.cache_write_tokens = usage.cache_write_tokens;
  result.settings = { temperature: usage.temperature !== undefined ? usage.temperature : settings.temperature, max_tokens: settings.max_tokens, strategy: settings.strategy };
  if (verdict) {
    // Any other field of the verdict (a log-probabilities call's grade_probabilities) follows settings.
    for (const key in verdict) if (!VERDICT_FIELDS.has(key)) (result as unknown as Record<string, unknown>)[key] = (verdict as unknown as Record<string, unknown>)[key];
    // The stated confidence counts only when nothing better measures it (confidence.ts).
    result.confidence = confidenceOf(result, verdict.confidence ?? null);
  } else if (!outcome.ok && outcome.failure.kind === 'malformed') {
    result.error = `No valid answer from the judge model in ${MALFORMED_RETRIES + 1} attempts; the last: ${outcome.failure.message}`;
  } else if (!outcome.ok) {
    result.error = `${outcome.failure.message}${gaveUp(outcome.failure)}`;
  }
  result.latency_ms = roundMs(performance.now() - started);
  return { result, failure: outcome.ok ? undefined : outcome.failure.kind };
}
