// REST-only operation (h-proxy, SPEC section 13): POST /v1/judges/{judge_id}/refine/ rewrites a
// response with the judge's justifications as feedback until it passes (src/refine/). `stream: true`
// is served by the proxy door's SSE route (src/proxy/refine-stream.ts) with the same input schema.
import { z } from 'zod';
import { assertRunnable, resolveJudge } from '../domain/judges.ts';
import { looksLikeId } from '../ids.ts';
import { refineResponse, REFINE_DEFAULTS } from '../refine/refine.ts';
import { EvaluatorResult, ExecutionInputShape } from '../schemas.ts';
import { defineTool, type ToolContext } from '../tool.ts';

export const RefineInput = z.object({
  judge_id: z.string().describe('id (or exact name) of the judge'),
  ...ExecutionInputShape,
  max_iterations: z.number().int().min(1).max(10).optional().describe('rewrites at most (default 3)'),
  patience: z.number().int().min(1).max(10).optional().describe('stop after this many rewrites in a row without an improvement of min_improvement (default 1)'),
  min_improvement: z.number().min(0).max(1).optional().describe('the score gain that counts as an improvement (default 0.05)'),
  threshold: z.number().min(0).max(1).optional().describe('stop once the score reaches this (default 0.8)'),
  model: z.string().optional().describe("a registered model (or one the server allows) to rewrite with; default the server's judge model"),
  stream: z.boolean().optional().describe('true: answer as server-sent events, one `iteration` event per version and a last `result` event (default false)'),
});

export const RefineIteration = z.object({
  iteration: z.number().int().describe('0 is the original response'),
  response: z.string().describe('this version of the response'),
  score: z.number().nullable().describe('its run score (0 for a rejected rewrite)'),
  execution_log_id: z.string().nullable().describe('the log of its judging; null when it was rejected unjudged'),
  rejected: z.string().optional().describe('why a rewrite was not judged (degenerate or empty); it never wins'),
});

export const RefineResult = z.object({
  improved_response: z.string().describe('the best version (the original when no rewrite beat it)'),
  original_response: z.string().describe('the response as given'),
  score: z.number().nullable().describe("the best version's run score"),
  original_score: z.number().nullable().describe("the original's run score"),
  evaluator_results: z.array(EvaluatorResult).describe("the best version's evaluator results"),
  original_evaluator_results: z.array(EvaluatorResult).describe("the original's evaluator results"),
  iterations: z.array(RefineIteration).describe('every version with its score, the original first'),
  execution_log_id: z.string().describe("the log of the best version's judging"),
  stopped: z.enum(['threshold', 'patience', 'max_iterations', 'rewrite_failed']).describe('why the loop ended'),
  rewrite_error: z.string().optional().describe('what the rewriting model answered when a rewrite failed'),
});

export const refineOperation = defineTool({
  name: 'refine_response',
  title: 'Refine a response with a judge',
  description:
    "Judge a response, then have a model rewrite it with the evaluators' justifications as feedback and judge it again, until the score reaches threshold, " +
    "stops improving (patience, min_improvement) or max_iterations runs out. Returns the best version, the original, and every iteration's score.",
  input: RefineInput,
  output: RefineResult,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  handler: (input, ctx) => runRefine(ctx, input),
});

/** The handler's work, with a callback per iteration (the SSE form calls it with one). */
export async function runRefine(ctx: ToolContext, input: z.infer<typeof RefineInput>, onIteration?: (it: z.infer<typeof RefineIteration>) => void) {
  const { judge_id, max_iterations, patience, min_improvement, threshold, model, stream: _stream, ...given } = input;
  const judge = await resolveJudge(ctx, looksLikeId(judge_id) ? { id: judge_id } : { name: judge_id });
  assertRunnable(judge);
  const settings = {
    max_iterations: max_iterations ?? REFINE_DEFAULTS.max_iterations,
    patience: patience ?? REFINE_DEFAULTS.patience,
    min_improvement: min_improvement ?? REFINE_DEFAULTS.min_improvement,
    threshold: threshold ?? REFINE_DEFAULTS.threshold,
    ...(model ? { model } : {}),
  };
  return refineResponse(ctx, judge, given, settings, onIteration);
}
