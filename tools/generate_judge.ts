import { z } from 'zod';
import { defineTool } from '../src/tool.ts';

const EvaluatorDetail = z.object({
  id: z.string().describe('evaluator id'),
  name: z.string().describe('evaluator name'),
  intent: z.string().describe('what it measures'),
  is_preset: z.boolean().describe('a shipped preset (true) or written for this judge (false)'),
});

export default defineTool({
  name: 'generate_judge',
  title: 'Generate a judge from a description',
  description:
    'Build a judge from a plain-language description of your application and the stage to evaluate, when no existing judge fits. ' +
    'Three outcomes: success ({judge_id, evaluator_details}: run it with run_judge); ' +
    '`multiple_stages` ({error_code, stages}: call again with one `stage`); ' +
    '`missing_context_from_system_goal` ({error_code, judge_id, missing_context_from_system_goal: [{form_field_name, form_field_description}]}: ' +
    'call again with the same intent, that judge_id and extra_contexts keyed by form_field_name).',
  input: z.object({
    intent: z.string().min(1).describe('several sentences: the application, its users, the stage to evaluate, the qualities and policies that matter'),
    visibility: z.enum(['private', 'public']).optional().describe('private (default) or public; demo organizations always make public judges'),
    reasoning_effort: z.enum(['off', 'low', 'medium', 'high']).optional().describe('how much the model may think while designing the judge (default medium)'),
    judge_id: z.string().optional().describe('the draft judge returned by a missing_context_from_system_goal answer, to complete it'),
    extra_contexts: z.record(z.string(), z.string()).optional().describe('answers to missing-context questions, keyed by form_field_name'),
    stage: z.string().optional().describe('the stage to evaluate, when the intent describes several (a listed one or a custom name)'),
    enable_context_aware_evaluators: z.boolean().optional().describe('for retrieval-augmented applications: add evaluators that catch hallucination and drift from the retrieved contexts'),
    project_id: z.string().optional().describe('project for the judge; default your default project'),
  }),
  output: z.object({
    judge_id: z.string().optional().describe('the judge (ready on success; a draft on missing_context_from_system_goal)'),
    evaluator_details: z.array(EvaluatorDetail).optional().describe('on success: the evaluators of the judge'),
    error_code: z.enum(['missing_context_from_system_goal', 'multiple_stages']).optional().describe('set when generation needs another call'),
    missing_context_from_system_goal: z
      .array(z.object({ form_field_name: z.string().describe('key to use in extra_contexts'), form_field_description: z.string().describe('the question to answer') }))
      .optional()
      .describe('questions to answer through extra_contexts'),
    stages: z.array(z.string()).optional().describe('stages found in the intent; call again with one as `stage`'),
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  async handler(input, ctx) {
    return ctx.generator.generate(ctx, input);
  },
});
