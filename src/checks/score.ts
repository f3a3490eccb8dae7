// The scoring kinds without a model (SPEC section 15): a check or code evaluator's result, shaped
// like every other result (no model, no tokens, cost 0), or an error result; never a throw.
import { performance } from 'node:perf_hooks';
import type { Config } from '../config.ts';
import type { RunInput } from '../conversation/validate.ts';
import type { EvaluatorResult, Turn } from '../schemas.ts';
import type { EvaluatorRecord } from '../store/types.ts';
import { runCode, type CodeInput } from './code.ts';
import type { CheckInput } from './compile.ts';
import { runChecks } from './run-checks.ts';
import { sandboxFor } from './sandbox.ts';
import { resultBase, roundMs } from './result-base.ts';

/** An evaluator scored without a model: kind check or code. */
export const scoresWithoutModel = (e: Pick<EvaluatorRecord, 'kind'>): boolean => e.kind === 'check' || e.kind === 'code';

/** The conversation up to the judged turn (what tool_call checks and code see). */
function turnsUpToJudged(input: RunInput): Turn[] | null {
  if (!input.turns) return null;
  return input.judged_turn === undefined ? input.turns : input.turns.slice(0, input.judged_turn + 1);
}
/** With turns, the request is the last user turn before the judged one. */
function requestOf(input: RunInput): string | null {
  if (input.request !== undefined) return input.request;
  const turns = turnsUpToJudged(input) ?? [];
  for (let i = turns.length - 2; i >= 0; i--) if (turns[i].role === 'user') return turns[i].content;
  return null;
}

export function checkInputOf(input: RunInput): CheckInput {
  return { request: requestOf(input), response: input.response, expected_output: input.expected_output ?? null, turns: turnsUpToJudged(input) };
}
export function codeInputOf(input: RunInput): CodeInput {
  const metadata = (input as { metadata?: unknown }).metadata;
  return {
    request: requestOf(input),
    response: input.response,
    contexts: input.contexts ?? [],
    expected_output: input.expected_output ?? null,
    turns: turnsUpToJudged(input),
    metadata: metadata && typeof metadata === 'object' && !Array.isArray(metadata) ? (metadata as Record<string, unknown>) : {},
  };
}

/**
 * Scores a check or code evaluator. `orgId` is the organization running it: code runtimes are kept
 * per organization and evaluator version, so one organization's runs never see another's state.
 */
export async function scoreWithoutModel(config: Pick<Config, 'code'>, orgId: string, evaluator: EvaluatorRecord, input: RunInput): Promise<EvaluatorResult> {
  const started = performance.now();
  let score: number | null = null;
  let justification: string | null = null;
  let error: string | undefined;
  try {
    if (evaluator.kind === 'code') {
      const outcome = await runCode(sandboxFor(config.code), `${orgId}:${evaluator.id}@${evaluator.version}`, evaluator.code ?? '', codeInputOf(input));
      if (outcome.ok) ({ score, justification } = outcome);
      else error = outcome.error;
    } else {
      ({ score, justification } = runChecks(evaluator, checkInputOf(input)));
    }
  } catch (e) {
    // A check saved before a rule tightened (or a stored record edited by hand) that no longer compiles.
    error = `the evaluator could not run: ${(e as Error).message}`;
  }
  return {
    ...resultBase(evaluator, score, justification),
    model: null,
    input_tokens: 0,
    output_tokens: 0,
    cost_usd: 0,
    latency_ms: roundMs(performance.now() - started),
    ...(error ? { error } : {}),
  };
}
