import { z } from 'zod';
import { judgeToWire, updateJudge } from '../src/domain/judges.ts';
import { Judge } from '../src/schemas.ts';
import { Guardrail } from '../src/schemas/proxy.ts';
import { defineTool } from '../src/tool.ts';

export default defineTool({
  name: 'update_judge',
  title: 'Update a judge',
  description:
    'Edit one of your judges: rename it, change its intent, stage, visibility or project, or replace its evaluator list. ' +
    'Only the fields you pass change; any change makes a new version (earlier versions stay readable and past logs keep pointing at them). Returns the judge.',
  input: z.object({
    judge_id: z.string().describe('id of your judge to edit'),
    name: z.string().min(1).max(200).optional().describe('new name, unique in your organization'),
    intent: z.string().min(1).optional().describe('new intent: what the judge evaluates (the application and the stage)'),
    evaluator_ids: z.array(z.string().min(1)).min(1).optional().describe('the new full evaluator list, in order: ids or exact names'),
    stage: z.string().nullable().optional().describe('new stage, or null to clear it'),
    visibility: z.enum(['private', 'public']).optional().describe('private or public'),
    project_id: z.string().optional().describe('move the judge to this project of yours'),
    pin_versions: z.boolean().optional().describe('true: pin every evaluator at its current version; false: follow latest versions'),
    guardrail: Guardrail.nullable().optional().describe("the judge proxy's guardrail {threshold, action: flag | block, message?}, or null to clear it"), // h-proxy
  }),
  output: Judge,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async handler({ judge_id, ...patch }, ctx) {
    return judgeToWire(await updateJudge(ctx, judge_id, patch));
  },
});
