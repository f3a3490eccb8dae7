import { z } from 'zod';
import { assertRunnable, resolveJudge } from '../src/domain/judges.ts';
import { looksLikeId } from '../src/ids.ts';
import { ExecutionInputShape, ExecutionResult } from '../src/schemas.ts';
import { answerOf } from '../src/engine/outcome.ts';
import { defineTool, type ToolContext } from '../src/tool.ts';

const input = z.object({
  judge_id: z.string().optional().describe('id of the judge to run (give this or judge_name)'),
  judge_name: z.string().optional().describe('exact name of the judge to run (give this or judge_id)'),
  ...ExecutionInputShape,
});

/** The run behind the tool, as a value (src/engine/outcome.ts): the handler answers it, the online evaluation worker reads it. */
export async function runJudgeOutcome({ judge_id, judge_name, ...inputs }: z.infer<typeof input>, ctx: ToolContext) {
  // An exact name where an id is expected (e.g. POST /v1/judges/Support%20replies/execute/) is looked up by name.
  const ref = judge_id && !looksLikeId(judge_id) ? { name: judge_id } : { id: judge_id, name: judge_name };
  const judge = await resolveJudge(ctx, ref);
  // A generation draft waits for answers: a 409 that says how to complete it, before any model call.
  assertRunnable(judge);
  return ctx.engine.runJudge(ctx, judge, inputs);
}

export default defineTool({
  name: 'run_judge',
  title: 'Run a judge',
  description:
    'Score a request/response pair with every evaluator of a judge, chosen by judge_id or exact judge_name. Evaluators run concurrently on the judge model. ' +
    'Returns one result per evaluator (score 0..1, higher is better, with a justification; null with not_applicable true when it does not apply), ' +
    'the run score (mean of the applicable scores, at most the lowest score of a critical evaluator), the cost, and the execution_log_id of the stored run. ' +
    'For a conversation or agent trace, pass turns (with system_prompt) instead of request/response: the last assistant turn is judged in the context of the earlier turns, tool calls and results included. ' +
    'If an evaluator requires a request, turns, contexts or an expected output, pass them (get_judge shows what is required); otherwise the call is refused before any model call. ' +
    'A draft from generate_judge (generation.status "draft") cannot run until generate_judge completes it.',
  input,
  output: ExecutionResult,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  handler: async (args, ctx) => answerOf(await runJudgeOutcome(args, ctx)),
});
