// REST-only operations: compare two responses with a judge or one evaluator, in both orders
// (SPEC section 9; the use case is src/runs/compare.ts). Never registered with MCP (14 tools).
import { z } from 'zod';
import { resolveEvaluator } from '../domain/evaluators.ts';
import { assertRunnable, resolveJudge } from '../domain/judges.ts';
import { looksLikeId } from '../ids.ts';
import { ComparisonInputShape, ComparisonResult } from '../schemas.ts';
import { answerOf } from '../engine/outcome.ts';
import { defineTool } from '../tool.ts';

const RUNS = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true } as const;

const HOW =
  'Each evaluator is asked which response better meets its rubric twice, with the two swapped (the response shown first is always "A"), both at once. ' +
  'When the two orders disagree the evaluator answers tie with consistent false. A degenerate response loses to a non-degenerate one without a model call; identical or both degenerate responses tie. ' +
  'Returns each evaluator\'s preference ("a", "b" or "tie"), consistency and justification, the overall preference with wins_a, wins_b and ties, and the execution_log_id of the comparison log.';

export const compareWithJudgeOperation = defineTool({
  name: 'compare_with_judge',
  title: 'Compare two responses with a judge',
  description: `Compare response_a and response_b to the same request with every evaluator of a judge. ${HOW}`,
  input: z.object({
    judge_id: z.string().describe('id (or exact name) of the judge'),
    ...ComparisonInputShape,
  }),
  output: ComparisonResult,
  annotations: RUNS,
  async handler({ judge_id, ...input }, ctx) {
    const judge = await resolveJudge(ctx, looksLikeId(judge_id) ? { id: judge_id } : { name: judge_id });
    assertRunnable(judge);
    return answerOf(await ctx.engine.compareJudge(ctx, judge, input));
  },
});

export const compareWithEvaluatorOperation = defineTool({
  name: 'compare_with_evaluator',
  title: 'Compare two responses with one evaluator',
  description: `Compare response_a and response_b to the same request with one evaluator (a preset or your own). ${HOW}`,
  input: z.object({
    evaluator_id: z.string().describe('id (or exact name) of the evaluator'),
    project_id: z.string().optional().describe('project the comparison log is filed under; default your default project'),
    ...ComparisonInputShape,
  }),
  output: ComparisonResult,
  annotations: RUNS,
  async handler({ evaluator_id, ...input }, ctx) {
    const evaluator = await resolveEvaluator(ctx, looksLikeId(evaluator_id) ? { id: evaluator_id } : { name: evaluator_id });
    return answerOf(await ctx.engine.compareEvaluator(ctx, evaluator, input));
  },
});
