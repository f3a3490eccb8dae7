import { GenerateJudgeInput, GenerateJudgeOutput } from '../src/generation/types.ts';
import { defineTool } from '../src/tool.ts';
import { ClaimTokenField, withClaimToken } from '../src/surface/claim-field.ts';

export default defineTool({
  name: 'generate_judge',
  title: 'Generate a judge from a description',
  description:
    'Build a judge from a plain-language description of your application and the stage to evaluate, when no existing judge fits. ' +
    'Three outcomes: success ({judge_id, evaluator_details}: run it with run_judge); ' +
    '`multiple_stages` ({error_code, stages}: call again with one `stage`); ' +
    '`missing_context_from_system_goal` ({error_code, judge_id, missing_context_from_system_goal: [{form_field_name, form_field_description}]}: ' +
    'call again with the same intent, that judge_id and extra_contexts keyed by form_field_name).',
  input: GenerateJudgeInput,
  output: GenerateJudgeOutput.extend(ClaimTokenField),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  async handler(input, ctx) {
    const outcome = await ctx.generator.generate(ctx, input);
    // Only a ready judge can be claimed (a draft still waits for answers).
    return 'error_code' in outcome ? outcome : withClaimToken(ctx, outcome.judge_id, outcome);
  },
});
