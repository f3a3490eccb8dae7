import { z } from 'zod';
import { resolveEvaluator } from '../src/domain/evaluators.ts';
import { looksLikeId } from '../src/ids.ts';
import { ExecutionInputShape, ExecutionResult } from '../src/schemas.ts';
import { answerOf } from '../src/engine/outcome.ts';
import { defineTool, type ToolContext } from '../src/tool.ts';

const input = z.object({
  evaluator_id: z.string().optional().describe('id of the evaluator to run (give this or evaluator_name)'),
  evaluator_name: z.string().optional().describe('exact name of the evaluator to run (give this or evaluator_id)'),
  project_id: z.string().optional().describe('project the execution log is filed under; default your default project'),
  ...ExecutionInputShape,
});

/** The run behind the tool, as a value (src/engine/outcome.ts): the handler answers it, the online evaluation worker reads it. */
export async function runEvaluatorOutcome({ evaluator_id, evaluator_name, ...inputs }: z.infer<typeof input>, ctx: ToolContext) {
  // An exact name where an id is expected (e.g. POST /v1/evaluators/Clarity/execute/) is looked up by name.
  const ref = evaluator_id && !looksLikeId(evaluator_id) ? { name: evaluator_id } : { id: evaluator_id, name: evaluator_name };
  const evaluator = await resolveEvaluator(ctx, ref);
  return ctx.engine.runEvaluator(ctx, evaluator, inputs);
}

export default defineTool({
  name: 'run_evaluator',
  title: 'Run one evaluator',
  description:
    'Score a request/response pair against a single evaluator (a preset or your own), chosen by evaluator_id or exact evaluator_name. ' +
    'Returns the score (0..1, higher is better) with its justification and the execution_log_id of the stored run. ' +
    'For a conversation or agent trace, pass turns (with system_prompt) instead of request/response: the last assistant turn is judged in the context of the earlier turns. ' +
    'Pass request, turns, contexts or expected_output when the evaluator requires them (get_evaluator shows this).',
  input,
  output: ExecutionResult,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  handler: async (args, ctx) => answerOf(await runEvaluatorOutcome(args, ctx)),
});
