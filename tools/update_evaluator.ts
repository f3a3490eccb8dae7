import { z } from 'zod';
import { evaluatorToWire, updateEvaluator } from '../src/domain/evaluators.ts';
import { Evaluator } from '../src/schemas.ts';
import { defineTool } from '../src/tool.ts';
import { EvaluatorContentShape } from './create_evaluator.ts';

export default defineTool({
  name: 'update_evaluator',
  title: 'Update an evaluator',
  description:
    'Edit one of your evaluators (presets are read-only): its name, intent, rubric, required inputs, demonstrations, model or visibility. ' +
    'Only the fields you pass change; any change makes a new version, and judges that do not pin a version use it from their next run. Returns the evaluator.',
  input: z.object({
    evaluator_id: z.string().describe('id of your evaluator to edit'),
    name: z.string().min(1).max(200).optional().describe('new name, unique in your organization'),
    ...Object.fromEntries(Object.entries(EvaluatorContentShape).map(([k, v]) => [k, v.optional()])),
  } as { evaluator_id: z.ZodString; name: z.ZodOptional<z.ZodString> } & { [K in keyof typeof EvaluatorContentShape]: z.ZodOptional<(typeof EvaluatorContentShape)[K]> }),
  output: Evaluator,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async handler({ evaluator_id, ...patch }, ctx) {
    return evaluatorToWire(await updateEvaluator(ctx, evaluator_id, patch));
  },
});
