// Pairwise comparison (SPEC section 9, docs/SCORING.md "Pairwise comparison"): each evaluator is
// asked which of two responses better meets its rubric, in both orders, concurrently, through the
// one structured-call loop (so malformed answers are asked again and registered models' JSON
// strategies apply as for scoring). Labels belong to positions: the response shown first is "A".
// When the two orders disagree, the evaluator's preference is "tie" and `consistent` is false:
// position bias is shown, never hidden.
// Order of a comparison: check the inputs (two responses, or two conversations that share every turn
// before the compared assistant turn) and each evaluator's declared inputs (no model call) -> rules that need no model: identical responses tie, a degenerate response loses to a
// non-degenerate one, two degenerate responses tie -> refuse when no model is configured -> ask
// every evaluator in both orders, all at once -> write one log of type "comparison" -> answer, or
// model_unavailable when every evaluator failed.
import { performance } from 'node:perf_hooks';
import type { RequestContext } from '../context.ts';
import { loadJudgeEvaluators } from '../domain/judges.ts';
import { resolveProjectId } from '../domain/projects.ts';
import { TribunalError, validationError, type FieldError } from '../errors.ts';
import { prepareRunInput, type RunInput } from '../conversation/validate.ts';
import { newId } from '../ids.ts';
import type { ComparisonEvaluatorResult, ComparisonInput, ComparisonOrder, ComparisonResult, EvaluatorResult, Preference, Turn } from '../schemas.ts';
import type { EvaluatorRecord, ExecutionLogRecord, JudgeRecord } from '../store/types.ts';
import { costUsd, sumCosts } from './providers/cost.ts';
import { degenerateReason } from './degenerate.ts';
import type { ModelErrorKind } from './providers/model-errors.ts';
import { buildPairwisePrompt, PAIRWISE_TOOL, parsePairwiseAnswer, type PairwiseItem, type PositionPreference } from './pairwise-prompt.ts';
import { checkRequiredInputs, Engine, MALFORMED_RETRIES, requireModel, type ScoringTarget } from './scoring.ts';
import { callStructured, failureStatus, gaveUp } from './structured-call.ts';
import type { ScoringEngine } from './types.ts';
import type { Outcome } from './outcome.ts';
import { scoresWithoutModel } from '../checks/score.ts'; // h-checks
import { compareWithoutModel } from '../checks/pairwise.ts';
import { roundMs } from '../checks/result-base.ts';
import { attachmentNote, checkAttachmentTargets, loadAttachments } from './attachments.ts';
import type { ModelAttachment } from './providers/model.ts';

type Side = 'a' | 'b';
type LogHeader = Pick<ExecutionLogRecord, 'judge_id' | 'judge_name' | 'judge_version' | 'evaluator_id' | 'evaluator_name' | 'evaluator_version' | 'project_id'>;

interface Compared {
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
export function ruleVerdict(a: string | Turn, b: string | Turn): { preference: Preference; degenerate: boolean; justification: string } | null {
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

const textOf = (x: string | Turn) => (typeof x === 'string' ? x : x.content);

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

const resultBase = (evaluator: EvaluatorRecord) => ({ evaluator_id: evaluator.id, evaluator_name: evaluator.name, evaluator_version: evaluator.version });

/** The ScoringEngine the server uses: scoring (Engine) plus comparison. */
export class ComparingEngine extends Engine implements ScoringEngine {
  /** Asks one evaluator in one order; never throws. */
  private async ask(
    ctx: Pick<RequestContext, 'config'>,
    evaluator: EvaluatorRecord,
    pair: PreparedPair,
    shownFirst: Side,
    target: ScoringTarget | undefined,
    requested: string,
  ): Promise<AskedOrder> {
    const item: PairwiseItem = { ...pair.shared, first: shownFirst === 'a' ? pair.a : pair.b, second: shownFirst === 'a' ? pair.b : pair.a };
    const outcome = await callStructured(target?.model ?? this.model, {
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
  async compareEvaluatorPair(ctx: Pick<RequestContext, 'config'>, evaluator: EvaluatorRecord, pair: PreparedPair, target?: ScoringTarget): Promise<Compared> {
    const started = performance.now();
    const requested = target?.modelName ?? evaluator.model ?? ctx.config.model.name;
    const [ab, ba] = await Promise.all([this.ask(ctx, evaluator, pair, 'a', target, requested), this.ask(ctx, evaluator, pair, 'b', target, requested)]);
    const usage = { input_tokens: ab.input_tokens + ba.input_tokens, output_tokens: ab.output_tokens + ba.output_tokens };
    const base = {
      ...resultBase(evaluator),
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

  private async compare(
    ctx: RequestContext,
    evaluators: EvaluatorRecord[],
    input: ComparisonInput,
    pair: PreparedPair,
    header: LogHeader,
    what: string,
  ): Promise<Outcome<ComparisonResult>> {
    const id = newId('log');
    const created_at = new Date().toISOString();
    const started = performance.now();
    pair = { ...pair, attached: await loadAttachments(ctx, input.attachments) }; // a 404 before anything runs
    const rule = ruleVerdict(pair.a, pair.b);
    let compared: Compared[];
    if (rule) {
      compared = evaluators.map((e) => ({
        result: {
          ...resultBase(e),
          preference: rule.preference,
          consistent: true,
          justification: rule.justification,
          ...(rule.degenerate ? { degenerate: true } : {}),
          orders: [],
          model: null,
          input_tokens: 0,
          output_tokens: 0,
          cost_usd: 0,
          latency_ms: 0,
        },
      }));
    } else {
      const targets = await this.targets(ctx, evaluators);
      if ([...targets.values()].some((t) => t.model === this.model)) requireModel(this.model);
      checkAttachmentTargets(evaluators, targets, pair.attached);
      // A jury evaluator compares with its first juror's model: a pairwise jury is not built (docs/SCORING.md).
      // h-checks: a check or code evaluator compares each side's score, without a model.
      const runB: RunInput = { ...pair.run, response: textOf(pair.b), ...(pair.turns_b ? { turns: pair.turns_b } : {}) };
      compared = await Promise.all(
        evaluators.map((e) =>
          scoresWithoutModel(e)
            ? compareWithoutModel(ctx.config, ctx.caller.org.id, e, pair.run, runB)
            : this.compareEvaluatorPair(ctx, e, pair, targets.get(e.models?.length ? e.models[0] : (e.model ?? ''))),
        ),
      );
    }
    const results = compared.map((c) => c.result);
    const totals = tally(results.map((r) => r.preference));
    const cost = sumCosts(results.map((r) => r.cost_usd));
    const latency = roundMs(performance.now() - started);
    const scoredShape: EvaluatorResult[] = results.map((r) => ({
      ...resultBase(evaluators.find((e) => e.id === r.evaluator_id)!),
      score: null,
      justification: r.justification,
      ...(r.degenerate ? { degenerate: true } : {}),
      model: r.model,
      input_tokens: r.input_tokens,
      output_tokens: r.output_tokens,
      cost_usd: r.cost_usd,
      latency_ms: r.latency_ms,
      ...(r.error ? { error: r.error } : {}),
    }));
    const record: ExecutionLogRecord = {
      id,
      org_id: ctx.caller.org.id,
      type: 'comparison',
      ...header,
      request: input.request ?? null,
      response: textOf(pair.a),
      turns: input.turns_a ?? null,
      system_prompt: input.system_prompt ?? null,
      contexts: input.contexts ?? null,
      expected_output: input.expected_output ?? null,
      user_id: input.user_id ?? null,
      session_id: input.session_id ?? null,
      tags: input.tags ?? [],
      ...(input.attachments?.length ? { attachments: input.attachments } : {}),
      evaluator_results: scoredShape,
      score: null,
      cost_usd: cost,
      latency_ms: latency,
      created_at,
      comparison: {
        response_b: textOf(pair.b),
        ...(pair.turns_b ? { turns_b: pair.turns_b } : {}),
        ...totals,
        evaluators: results.map((r) => ({
          evaluator_id: r.evaluator_id,
          preference: r.preference,
          consistent: r.consistent,
          ...(r.degenerate ? { degenerate: true } : {}),
          orders: r.orders,
        })),
      },
    };
    const write = () => ctx.store.appendExecutionLog(record);
    await (ctx.spans ? ctx.spans.inSpan('store appendExecutionLog', { 'tribunal.execution_log_id': id }, write) : write());

    const result = { execution_log_id: id, evaluator_results: results, ...totals, cost_usd: cost, latency_ms: latency };
    const failures = compared.filter((c) => c.failure);
    if (!results.length || failures.length < results.length) return result;
    // Every evaluator failed: logged, answered as a value that says so (outcome.ts).
    const reasons = results.map((r) => `${r.evaluator_name}: ${r.error}`).join(' | ');
    const message = `The judge model failed for every evaluator of ${what}, so there is no preference (the comparison is logged as ${id}). ${reasons}`;
    return { ...result, failed: { status: failureStatus(failures.map((f) => f.failure!)), message } };
  }

  async compareJudge(ctx: RequestContext, judge: JudgeRecord, input: ComparisonInput): Promise<Outcome<ComparisonResult>> {
    const evaluators = await loadJudgeEvaluators(ctx, judge);
    const pair = preparePair(input, evaluators, ctx.config.limits);
    // What the evaluators declare must be there; the two responses share request (or earlier turns), contexts and expected output.
    checkRequiredInputs(evaluators, pair.run);
    const projectId = judge.org_id === ctx.caller.org.id ? judge.project_id : await resolveProjectId(ctx, undefined);
    const header = {
      judge_id: judge.id,
      judge_name: judge.name,
      judge_version: judge.version,
      evaluator_id: null,
      evaluator_name: null,
      evaluator_version: null,
      project_id: projectId,
    };
    return this.compare(ctx, evaluators, input, pair, header, `judge ${judge.name}`);
  }

  async compareEvaluator(ctx: RequestContext, evaluator: EvaluatorRecord, given: ComparisonInput & { project_id?: string }): Promise<Outcome<ComparisonResult>> {
    const { project_id, ...input } = given;
    const pair = preparePair(input, [evaluator], ctx.config.limits);
    checkRequiredInputs([evaluator], pair.run);
    const projectId = await resolveProjectId(ctx, project_id);
    const header = {
      judge_id: null,
      judge_name: null,
      judge_version: null,
      evaluator_id: evaluator.id,
      evaluator_name: evaluator.name,
      evaluator_version: evaluator.version,
      project_id: projectId,
    };
    return this.compare(ctx, [evaluator], input, pair, header, `evaluator ${evaluator.name}`);
  }
}
