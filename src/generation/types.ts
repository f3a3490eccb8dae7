// The seam between generate_judge and the judge generator (SPEC section 5). The zod schemas here are
// the tool's input and output; the generator's types are inferred from them.
import { z } from 'zod';
import type { RequestContext } from '../context.ts';

export const GenerateJudgeInput = z.object({
  intent: z.string().min(1).describe('several sentences: the application, its users, the stage to evaluate, the qualities and policies that matter'),
  visibility: z.enum(['private', 'public']).optional().describe('private (default) or public; demo organizations always make public judges'),
  reasoning_effort: z.enum(['off', 'low', 'medium', 'high']).optional().describe('how much the model may think while designing the judge (default medium)'),
  judge_id: z.string().optional().describe('the draft judge returned by a missing_context_from_system_goal answer, to complete it'),
  extra_contexts: z.record(z.string(), z.string()).optional().describe('answers to missing-context questions, keyed by form_field_name'),
  stage: z.string().optional().describe('the stage to evaluate, when the intent describes several (a listed one or a custom name)'),
  enable_context_aware_evaluators: z
    .boolean()
    .optional()
    .describe('for retrieval-augmented applications: add evaluators that catch hallucination and drift from the retrieved contexts'),
  project_id: z.string().optional().describe('project for the judge; default your default project'),
});
export type GenerateJudgeInput = z.infer<typeof GenerateJudgeInput>;

const EvaluatorDetail = z.object({
  id: z.string().describe('evaluator id'),
  name: z.string().describe('evaluator name'),
  intent: z.string().describe('what it measures'),
  is_preset: z.boolean().describe('a shipped preset (true) or written for this judge (false)'),
});
const MissingContextQuestion = z.object({
  form_field_name: z.string().describe('key to use in extra_contexts'),
  form_field_description: z.string().describe('the question to answer'),
});
const ErrorCode = z.enum(['missing_context_from_system_goal', 'multiple_stages']);

/** The tool's output: one object whose fields say which of the three outcomes it is. */
export const GenerateJudgeOutput = z.object({
  judge_id: z.string().optional().describe('the judge (ready on success; a draft on missing_context_from_system_goal)'),
  evaluator_details: z.array(EvaluatorDetail).optional().describe('on success: the evaluators of the judge'),
  error_code: ErrorCode.optional().describe('set when generation needs another call'),
  missing_context_from_system_goal: z.array(MissingContextQuestion).optional().describe('questions to answer through extra_contexts'),
  stages: z.array(z.string()).optional().describe('stages found in the intent; call again with one as `stage`'),
});

/** The three outcomes, each with exactly its own fields (what the generator returns). */
export const GenerateJudgeOutcome = z.union([
  z.object({ judge_id: z.string(), evaluator_details: z.array(EvaluatorDetail) }),
  z.object({
    error_code: z.literal(ErrorCode.enum.missing_context_from_system_goal),
    judge_id: z.string(),
    missing_context_from_system_goal: z.array(MissingContextQuestion),
  }),
  z.object({ error_code: z.literal(ErrorCode.enum.multiple_stages), stages: z.array(z.string()) }),
]);
export type GenerateJudgeOutcome = z.infer<typeof GenerateJudgeOutcome>;

export interface JudgeGenerator {
  generate(ctx: RequestContext, input: GenerateJudgeInput): Promise<GenerateJudgeOutcome>;
}
