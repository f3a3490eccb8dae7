import { z } from 'zod';
import { evaluatorCalibration } from '../src/calibration/summary.ts';
import { evaluatorToWire, resolveEvaluator } from '../src/domain/evaluators.ts';
import { Evaluator } from '../src/schemas.ts';
import { CalibrationSummary, Fitness } from '../src/schemas/calibration.ts';
import { defineTool } from '../src/tool.ts';

export default defineTool({
  name: 'get_evaluator',
  title: 'Get an evaluator',
  description:
    'Read one evaluator in full: its intent, its rubric (what earns a high, middling and low score), its demonstrations and the inputs it requires ' +
    '(`requires_request`, `requires_turns`, `requires_contexts`, `requires_expected_output`). Choose it by evaluator_id or by exact evaluator_name; pass version for an earlier version. ' +
    '`calibration` tells how far this version is from human labels (null = uncalibrated). ' +
    '`fitness`: gating (may gate a release), monitoring (trends only), exploration (a hint only) or uncalibrated.',
  input: z.object({
    evaluator_id: z.string().optional().describe('id of the evaluator (give this or evaluator_name)'),
    evaluator_name: z.string().optional().describe('exact name of the evaluator (give this or evaluator_id)'),
    version: z.number().int().min(1).max(2_147_483_647).optional().describe('an earlier version to read; default the latest'),
  }),
  output: Evaluator.extend({ calibration: CalibrationSummary, fitness: Fitness }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async handler(input, ctx) {
    const evaluator = await resolveEvaluator(ctx, { id: input.evaluator_id, name: input.evaluator_name }, input.version);
    const calibration = await evaluatorCalibration(ctx, evaluator.id, evaluator.version);
    return { ...evaluatorToWire(evaluator), calibration, fitness: calibration?.fitness ?? 'uncalibrated' };
  },
});
