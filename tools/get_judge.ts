import { z } from 'zod';
import { judgeCalibration } from '../src/calibration/summary.ts';
import { judgeInFull, resolveJudge } from '../src/domain/judges.ts';
import { JudgeFull } from '../src/schemas.ts';
import { CalibrationSummary, Fitness } from '../src/schemas/calibration.ts';
import { defineTool } from '../src/tool.ts';

export default defineTool({
  name: 'get_judge',
  title: 'Get a judge',
  description:
    'Inspect one judge before running it: returns the judge with every evaluator it applies in full (intent, rubric, required inputs). ' +
    'Check `requires_request`, `requires_turns`, `requires_contexts` and `requires_expected_output` on its evaluators to know what run_judge will need. Choose the judge by judge_id or by exact judge_name. ' +
    '`calibration` tells how far this version is from human labels (null = uncalibrated: say so when you rely on it). ' +
    '`fitness` says what its scores may be used for: gating (may gate a release), monitoring (watch trends, do not block on one score), exploration (a hint only), uncalibrated (unchecked).',
  input: z.object({
    judge_id: z.string().optional().describe('id of the judge (give this or judge_name)'),
    judge_name: z.string().optional().describe('exact name of the judge (give this or judge_id)'),
    version: z.number().int().min(1).max(2_147_483_647).optional().describe('an earlier version to read; default the latest'),
  }),
  output: JudgeFull.extend({ calibration: CalibrationSummary, fitness: Fitness }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async handler(input, ctx) {
    const judge = await resolveJudge(ctx, { id: input.judge_id, name: input.judge_name }, input.version);
    const full = await judgeInFull(ctx, judge);
    const calibration = await judgeCalibration(ctx, judge.id, full.evaluators);
    return { ...full, calibration, fitness: calibration?.fitness ?? 'uncalibrated' };
  },
});
