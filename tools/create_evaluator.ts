import { z } from 'zod';
import { createEvaluator, evaluatorToWire } from '../src/domain/evaluators.ts';
import { Demonstration, Evaluator, EvaluatorScoring, JuryAggregation } from '../src/schemas.ts';
import { defineTool } from '../src/tool.ts';
import { EvaluatorKindFields } from '../src/schemas/checks.ts';

export const EvaluatorContentShape = {
  intent: z.string().min(1).describe('what the evaluator measures, one or two sentences'),
  rubric: z
    .string()
    .min(1)
    .optional()
    .describe('scoring criteria for the judge model: what earns a high, a middling and a low score (required for kind llm; checks and code describe themselves)'),
  requires_contexts: z.boolean().optional().describe('runs must pass `contexts` (retrieved snippets); default false'),
  requires_expected_output: z.boolean().optional().describe('runs must pass `expected_output` (a reference answer); default false'),
  requires_request: z.boolean().optional().describe('runs must pass `request` (the input that prompted the response): the evaluator cannot judge without it; default false'),
  requires_turns: z.boolean().optional().describe('runs must pass `turns` (a conversation or agent trace), for evaluators that judge a turn in its conversation; default false'),
  critical: z.boolean().optional().describe("a gate (safety, policy): a judge run scores at most this evaluator's score; default false"),
  demonstrations: z.array(Demonstration).max(20).optional().describe('few-shot examples with the score each deserves (at most 20)'),
  model: z.string().min(1).nullable().optional().describe('judge model to use instead of the server default'),
  models: z
    .array(z.string().min(1))
    .min(2, 'a jury has at least 2 models')
    .max(5, 'a jury has at most 5 models')
    .nullable()
    .optional()
    .describe('a jury instead of model: 2 to 5 distinct model names (registered or allowed), scored concurrently and aggregated; null removes the jury'),
  aggregation: JuryAggregation.nullable().optional().describe("how the jury's scores become one: mean (default), median, or majority (pass/fail vote at 0.5)"),
  scoring: EvaluatorScoring.optional().describe('direct (default), or logprobs: G-Eval, the probability-weighted mean of a 1-5 grade, on models that return log-probabilities'),
  visibility: z.enum(['private', 'public']).optional().describe('private (default) or public; demo organizations always make public evaluators'),
  project_id: z.string().optional().describe('project for the evaluator; default your default project'),
  // h-checks: evaluators without a model (SPEC section 15)
  ...EvaluatorKindFields,
};

export default defineTool({
  name: 'create_evaluator',
  title: 'Create an evaluator',
  description:
    'Write a new evaluator for a quality no preset covers: a name, an intent, and a rubric that tells the judge model what earns a high, middling and low score. ' +
    'Add demonstrations (scored examples) to calibrate it. A rule that needs no model (valid JSON, a regex, a length, a tool was called) is a kind "check" evaluator with `checks`; ' +
    'anything else computable is kind "code": the body of a JavaScript score(input) run in a sandbox. Returns the evaluator (version 1); add it to a judge with create_judge or update_judge, or run it with run_evaluator.',
  input: z.object({
    name: z.string().min(1).max(200).describe('evaluator name, unique in your organization'),
    ...EvaluatorContentShape,
  }),
  output: Evaluator,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async handler(input, ctx) {
    return evaluatorToWire(await createEvaluator(ctx, input));
  },
});
