import { z } from 'zod';
import { createJudge, judgeToWire } from '../src/domain/judges.ts';
import { Judge } from '../src/schemas.ts';
import { Guardrail } from '../src/schemas/proxy.ts';
import { defineTool } from '../src/tool.ts';
import { ClaimTokenField, withClaimToken } from '../src/surface/claim-field.ts';

export default defineTool({
  name: 'create_judge',
  title: 'Create a judge',
  description:
    'Create a judge from an explicit list of evaluators (ids or exact names, e.g. presets found with list_evaluators). ' +
    'Use this when you know which qualities to score; use generate_judge to have them chosen from a description. Returns the new judge (version 1).',
  input: z.object({
    name: z.string().min(1).max(200).describe('judge name, unique in your organization; run_judge accepts it as judge_name'),
    intent: z.string().min(1).describe('what the judge evaluates: the application and the stage'),
    evaluator_ids: z.array(z.string().min(1)).min(1).describe('evaluators to apply, in order: ids or exact names'),
    stage: z.string().optional().describe('the application stage the judge evaluates'),
    visibility: z.enum(['private', 'public']).optional().describe('private (default) or public; demo organizations always make public judges'),
    project_id: z.string().optional().describe('project for the judge; default your default project'),
    pin_versions: z.boolean().optional().describe('pin each evaluator at its current version instead of following its latest (default false)'),
    guardrail: Guardrail.optional().describe('for the judge proxy: {threshold, action: flag | block, message?}; an answer scoring below threshold is flagged or replaced'), // h-proxy
  }),
  output: Judge.extend(ClaimTokenField),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async handler(input, ctx) {
    const judge = await createJudge(ctx, input);
    return withClaimToken(ctx, judge.id, judgeToWire(judge));
  },
});
