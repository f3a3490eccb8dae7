// Pairwise comparison (SPEC section 9, docs/SCORING.md "Pairwise comparison"): each evaluator is
// asked which of two responses better meets its rubric, in both orders, concurrently, through the
// one structured-call loop (so malformed answers are asked again and registered models' JSON
// strategies apply as for scoring). Labels belong to positions: the response shown first is "A".
// When the two orders disagree, the evaluator's preference is "tie" and `consistent` is false:
// position bias is shown, never hidden.
// The comparison as a use case (inputs, rules, models, the log) is runs/compare.ts; this file asks
// the model and reads its answers.
import { performance } from 'node:perf_hooks';
import type { RequestContext } from '../context.ts';
import { TribunalError, validationError, type FieldError } from '../errors.ts';
import { prepareRunInput, type RunInput } from '../conversation/validate.ts';
import type { ComparisonEvaluatorResult, ComparisonInput, ComparisonOrder, Preference, Turn } from '../schemas.ts';
import type { EvaluatorRecord } from '../store/types.ts';
import { costUsd } from './providers/cost.ts';
import { degenerateReason } from './degenerate.ts';
import type { JudgeModel, ModelAttachment } from './providers/model.ts';
import type { ModelErrorKind } from './providers/model-errors.ts';
import { buildPairwisePrompt, PAIRWISE_TOOL, parsePairwiseAnswer, type PairwiseItem, type PositionPreference } from './pairwise-prompt.ts';
import { MALFORMED_RETRIES, type ScoringTarget } from './target.ts';
import { callStructured, gaveUp } from './structured-call.ts';
import { roundMs } from '../checks/result-base.ts';
import { attachmentNote } from './attachments.ts';

type Side = 'a' | 'b';

/** One evaluator's comparison: the result, and why it failed when it did. */
export interface Compared {
  result: ComparisonEvaluatorResult;
  failure?: ModelErrorKind;
}

interface AskedOrder {
  order: ComparisonOrder;
  failure?: ModelErrorKind;
  model: string | null;
  input_tokens: number;
  output_tokens: number;
}

const other = (side: Side): Side => (side === 'a' ? 'b' : 'a');

/** The position the model chose, as the response it names: "A" is whichever was shown first. */
export function toResponse(position: PositionPreference, shownFirst: Side): Preference {
  if (position === 'tie') return 'tie';
  return position === 'A' ? shownFirst : other(shownFirst);
}

/** Both orders' preferences as one: the same preference is kept; a disagreement is a tie, not consistent. */
export function combineOrders(first: Preference, second: Preference): { preference: Preference; consistent: boolean } {
  return first === second ? { preference: first, consistent: true } : { preference: 'tie', consistent: false };
}

/** The overall preference: the response more evaluators prefer; failed evaluators are left out. */
export function tally(prefs: Array<Preference | null>): { preference: Preference; wins_a: number; wins_b: number; ties: number } {
  const wins_a = prefs.filter((p) => p === 'a').length;
  const wins_b = prefs.filter((p) => p === 'b').length;
  const ties = prefs.filter((p) => p === 'tie').length;
  return { preference: wins_a > wins_b ? 'a' : wins_b > wins_a ? 'b' : 'tie', wins_a, wins_b, ties };
}

/** Why a compared response is degenerate, or null; an assistant turn that calls tools has something to judge. */
const degenerateOf = (x: string | Turn) => (typeof x === 'string' ? degenerateReason(x) : x.tool_calls?.length ? null : degenerateReason(x.content));

/**
 * The rules that need no model: identical responses tie; a degenerate response (degenerate.ts)
 * loses to a non-degenerate one; two degenerate responses tie. Null when the model must be asked.
 */
export interface RuleVerdict {
  preference: Preference;
  degenerate: boolean;
  justification: string;
}

export function ruleVerdict(a: string | Turn, b: string | Turn): RuleVerdict | null {
  if (JSON.stringify(a) === JSON.stringify(b))
    return { preference: 'tie', degenerate: false, justification: 'The two responses are identical, so they tie. Decided without calling the judge model.' };
  const degA = degenerateOf(a);
  const degB = degenerateOf(b);
  if (degA && degB) return { preference: 'tie', degenerate: true, justification: `Both responses are degenerate, so they tie. Response a: ${degA} Response b: ${degB}` };
  if (degA) return { preference: 'b', degenerate: true, justification: `Response a loses. ${degA}` };
  if (degB) return { preference: 'a', degenerate: true, justification: `Response b loses. ${degB}` };
  return null;
}

/** A comparison's inputs, checked: the shared material, and the two responses (texts or assistant turns). */
export interface PreparedPair {
  shared: Pick<PairwiseItem, 'request' | 'contexts' | 'expected_output' | 'conversation'>;
  a: string | Turn;
  b: string | Turn;
  /** Response a as a run's input, for the declared-input check and the log. */
  run: RunInput;
  turns_b?: Turn[];
  /** The files of `attachments`, loaded: both orders of every evaluator see them (h-attach). */
  attached?: ModelAttachment[];
}

export const textOf = (x: string | Turn) => (typeof x === 'string' ? x : x.content);

/** A problem of one conversation, named by its own field (turns_a or turns_b). */
function renamed(err: unknown, field: 'turns_a' | 'turns_b'): unknown {
  if (!(err instanceof TribunalError)) return err;
  return new TribunalError(err.code, err.status, `${field}: ${err.message.replace(/`?turns`?/g, field)}`, {
    errors: err.errors?.map((e) => ({ ...e, field: e.field.replace(/^turns/, field) })),
  });
}

/** Checks a comparison's inputs and answers them prepared; every problem is a 400 before any model call. */
export function preparePair(input: ComparisonInput, evaluators: EvaluatorRecord[], limits: Parameters<typeof prepareRunInput>[2]): PreparedPair {
  const { turns_a, turns_b, response_a, response_b, request, system_prompt, contexts, expected_output } = input;
  if (turns_a === undefined && turns_b === undefined) {
    const missing = (['response_a', 'response_b'] as const).filter((f) => input[f] === undefined);
    if (missing.length) {
      throw validationError(
        `Nothing to compare: pass both responses as response_a and response_b (with the request they answer), or two conversations as turns_a and turns_b. Missing: ${missing.join(', ')}.`,
        missing.map((field) => ({ field, message: 'required unless turns_a and turns_b are given' })),
      );
    }
    if (system_prompt !== undefined)
      throw validationError('system_prompt goes with turns_a and turns_b; with response_a and response_b, put what the application was asked in request.', [
        { field: 'system_prompt', message: 'only with turns_a and turns_b' },
      ]);
    return { shared: { request, contexts, expected_output }, a: response_a!, b: response_b!, run: { request, response: response_a!, contexts, expected_output } };
  }
  const errors: FieldError[] = [];
  if (turns_a === undefined || turns_b === undefined) errors.push({ field: turns_a === undefined ? 'turns_a' : 'turns_b', message: 'give turns_a and turns_b together' });
  for (const f of ['request', 'response_a', 'response_b'] as const) if (input[f] !== undefined) errors.push({ field: f, message: 'given together with turns_a/turns_b' });
  if (errors.length)
    throw validationError(
      `Compare either two conversations (turns_a and turns_b, both) or two responses (response_a and response_b, with request), not a mix: ${errors.map((e) => `${e.field} ${e.message}`).join('; ')}.`,
      errors,
    );
  const prepared = (['turns_a', 'turns_b'] as const).map((field) => {
    const turns = input[field]!;
    let run: RunInput;
    try {
      run = prepareRunInput({ turns, system_prompt, contexts, expected_output }, evaluators, limits);
    } catch (err) {
      throw renamed(err, field);
    }
    if (run.judged_turn !== turns.length - 1)
      throw validationError(`${field}: the compared assistant turn must be the last turn (turn ${run.judged_turn! + 1} of ${turns.length} is the last assistant turn).`, [
        { field, message: 'must end with the assistant turn to compare' },
      ]);
    return { run, turn: turns[turns.length - 1] };
  });
  const [a, b] = prepared;
  const before = turns_a!.slice(0, -1);
  const beforeB = turns_b!.slice(0, -1);
  for (let i = 0; i < Math.max(before.length, beforeB.length); i++) {
    if (JSON.stringify(before[i]) !== JSON.stringify(beforeB[i])) {
      throw validationError(`turns_a and turns_b must share every turn before the compared assistant turn; they differ at turn ${i + 1}.`, [
        { field: 'turns_b', message: `differs from turns_a at turn ${i + 1}` },
      ]);
    }
  }
  return { shared: { contexts, expected_output, conversation: { before, system_prompt } }, a: a.turn, b: b.turn, run: a.run, turns_b };
}

export const comparisonBase = (evaluator: EvaluatorRecord) => ({ evaluator_id: evaluator.id, evaluator_name: evaluator.name, evaluator_version: evaluator.version });

/** Asks one evaluator in one order; never throws. */
async function ask(
  ctx: Pick<RequestContext, 'config'>,
  fallback: JudgeModel,
  evaluator: EvaluatorRecord,
  pair: PreparedPair,
  shownFirst: Side,
  target: ScoringTarget | undefined,
  requested: string,
): Promise<AskedOrder> {
  const item: PairwiseItem = { ...pair.shared, first: shownFirst === 'a' ? pair.a : pair.b, second: shownFirst === 'a' ? pair.b : pair.a };
  const outcome = await callStructured(target?.model ?? fallback, {
    attempts: MALFORMED_RETRIES + 1,
    // A fresh nonce per attempt, as in scoring.
    request: () => {
      const { system, prompt, nonce } = buildPairwisePrompt(evaluator, item);
      return {
        model: requested,
        system,
        prompt: prompt + attachmentNote(pair.attached, nonce),
        tool: PAIRWISE_TOOL,
        maxTokens: ctx.config.model.maxTokens,
        strategy: target?.strategy,
        temperature: target?.temperature,
        ...(pair.attached ? { attachments: pair.attached } : {}),
      };
    },
    check: parsePairwiseAnswer,
  });
  const spent = { model: outcome.model, input_tokens: outcome.usage.input_tokens, output_tokens: outcome.usage.output_tokens };
  if (outcome.ok) {
    return { ...spent, order: { shown_first: shownFirst, preference: toResponse(outcome.value.preference, shownFirst), justification: outcome.value.justification } };
  }
  const { failure } = outcome;
  const error =
    failure.kind === 'malformed'
      ? `No valid answer from the judge model in ${MALFORMED_RETRIES + 1} attempts; the last: ${failure.message}`
      : `${failure.message}${gaveUp(failure)}`;
  return { ...spent, failure: failure.kind, order: { shown_first: shownFirst, preference: null, justification: null, error } };
}

/** Compares with one evaluator in both orders at once; never throws. */
export async function compareEvaluatorPair(
  ctx: Pick<RequestContext, 'config'>,
  fallback: JudgeModel,
  evaluator: EvaluatorRecord,
  pair: PreparedPair,
  target?: ScoringTarget,
): Promise<Compared> {
  const started = performance.now();
  const requested = target?.modelName ?? evaluator.model ?? ctx.config.model.name;
  const [ab, ba] = await Promise.all([ask(ctx, fallback, evaluator, pair, 'a', target, requested), ask(ctx, fallback, evaluator, pair, 'b', target, requested)]);
  const usage = { input_tokens: ab.input_tokens + ba.input_tokens, output_tokens: ab.output_tokens + ba.output_tokens };
  const base = {
    ...comparisonBase(evaluator),
    orders: [ab.order, ba.order],
    model: ba.model ?? ab.model ?? requested,
    ...usage,
    cost_usd: costUsd(requested, usage, target?.prices ?? ctx.config.model.prices),
    latency_ms: roundMs(performance.now() - started),
  };
  if (ab.order.preference === null || ba.order.preference === null) {
    const failed = [ab, ba].filter((o) => o.failure);
    const error = failed.map((o) => `with response ${o.order.shown_first} shown first: ${o.order.error}`).join('; ');
    return { result: { ...base, preference: null, consistent: false, justification: null, error }, failure: failed[0].failure };
  }
  const { preference, consistent } = combineOrders(ab.order.preference, ba.order.preference);
  const justification = consistent
    ? ab.order.justification
    : `The two orders disagreed (with response a shown first the judge preferred ${ab.order.preference}; with response b shown first, ${ba.order.preference}), so this is a tie: the verdict followed the position, not the responses. Each order's reasoning is in orders.`;
  return { result: { ...base, preference, consistent, justification } };
}
