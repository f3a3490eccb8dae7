// The wire shapes of the core resources (SPEC section 1): organizations, keys, projects,
// evaluators, judges, results, execution logs and execution input. src/schemas.ts gathers this
// file and its siblings into the one module every caller imports.
import { z } from 'zod';
import { Guardrail, ProxyLogInfo } from './proxy.ts'; // h-proxy: inline judging
import { EvaluatorKindFields } from './checks.ts'; // h-checks
import { ExecutionInputShape, TURNS_DESCRIPTION, Turn } from './execution-input.ts';

// The execution input and its turns live in their own module (the CLI checks dataset rows with them
// without building every other resource's schema); they are part of this module's surface as before.
export { ExecutionInputShape, TURN_ROLES, ToolCall, Turn } from './execution-input.ts';

export const timestamp = z.string().describe('ISO-8601 UTC timestamp');
export const id = (what: string) => z.string().describe(`id of the ${what}`);

export const Visibility = z.enum(['private', 'public']).describe('private: seen only by its organization; public: readable and runnable by every caller');

export const Organization = z.object({
  id: id('organization'),
  name: z.string().describe('organization name'),
  is_demo: z.boolean().describe('true for a temporary demo organization'),
  created_at: timestamp,
});
export type Organization = z.infer<typeof Organization>;

export const ApiKey = z.object({
  id: id('API key'),
  name: z.string().describe('label given at creation'),
  prefix: z.string().describe('first characters of the key, for recognising it; never the secret'),
  created_at: timestamp,
  expires_at: timestamp.nullable().describe('when the key stops working; null = never'),
  last_used_at: timestamp.nullable().describe('last time the key authenticated a request (updated at most once a minute)'),
  revoked_at: timestamp.nullable().describe('when the key was revoked; null = active'),
});
export type ApiKey = z.infer<typeof ApiKey>;

export const Project = z.object({
  id: id('project'),
  name: z.string().describe('project name'),
  description: z.string().describe('what the project is for'),
  is_default: z.boolean().describe('the organization default project; resources created without project_id land here'),
  created_at: timestamp,
});
export type Project = z.infer<typeof Project>;

export const Demonstration = z.object({
  request: z.string().optional().describe('the input that prompted the example response'),
  response: z.string().optional().describe('the example response (give this or turns)'),
  turns: z.array(Turn).optional().describe(`the example as a conversation (give this or response): ${TURNS_DESCRIPTION}`),
  system_prompt: z.string().optional().describe('the system prompt of the example conversation'),
  contexts: z.array(z.string()).optional().describe('retrieved snippets for the example'),
  expected_output: z.string().optional().describe('reference answer for the example'),
  score: z.number().min(0).max(1).describe('the score this example deserves, 0..1'),
  justification: z.string().optional().describe('why it deserves that score'),
});
export type Demonstration = z.infer<typeof Demonstration>;

export const JuryAggregation = z
  .enum(['mean', 'median', 'majority'])
  .describe("mean or median of the jurors' scores; majority: pass/fail vote at 0.5, the score is the mean of the majority side (a tie: the mean of all)");
export type JuryAggregation = z.infer<typeof JuryAggregation>;
export const EvaluatorScoring = z
  .enum(['direct', 'logprobs'])
  .describe(
    'direct: the model writes the score; logprobs: the model grades 1-5 and the score is the probability-weighted mean grade mapped to 0..1 (needs a provider that returns log-probabilities)',
  );
export type EvaluatorScoring = z.infer<typeof EvaluatorScoring>;

/** One juror of a jury result: its own score and justification, or why it failed. */
export const JurorResult = z.object({
  model: z.string().describe('the juror: the model name as the evaluator lists it'),
  score: z.number().min(0).max(1).nullable().describe("the juror's score; null when it failed or found the evaluator not applicable"),
  justification: z.string().nullable().describe("the juror's justification"),
  not_applicable: z.boolean().optional().describe('true when this juror found the evaluator not applicable'),
  input_tokens: z.number().int().describe('prompt tokens this juror spent'),
  output_tokens: z.number().int().describe('completion tokens this juror spent'),
  cost_usd: z.number().nullable().describe("this juror's cost in USD; null when unknown"),
  latency_ms: z.number().describe("this juror's wall time"),
  error: z.string().optional().describe('why this juror failed; a failed juror is left out of the score'),
});
export type JurorResult = z.infer<typeof JurorResult>;

export const Evaluator = z.object({
  id: id('evaluator'),
  name: z.string().describe('unique-ish human name; evaluators can be run by exact name'),
  intent: z.string().describe('what the evaluator measures, one or two sentences'),
  rubric: z.string().describe('scoring criteria: what earns a high, a middling and a low score'),
  requires_contexts: z.boolean().describe('runs need `contexts` (retrieved snippets)'),
  requires_expected_output: z.boolean().describe('runs need `expected_output` (a reference answer)'),
  requires_request: z.boolean().describe('runs need `request` (the input that prompted the response)'),
  requires_turns: z.boolean().describe('runs need `turns` (a conversation or agent trace): the evaluator judges a turn in its conversation'),
  critical: z.boolean().describe("a gate: the score of a run that applies it is at most this evaluator's score"),
  demonstrations: z.array(Demonstration).describe('few-shot examples shown to the judge model'),
  model: z.string().nullable().describe('judge model override; null = the server default'),
  models: z
    .array(z.string())
    .nullable()
    .optional()
    .describe('a jury instead of one model: 2 to 5 model names (registered or allowed), scored concurrently; absent or null = no jury (docs/MODELS.md)'),
  aggregation: JuryAggregation.nullable().optional().describe("how a jury's scores become one (with models): mean, median or majority at 0.5"),
  scoring: EvaluatorScoring.optional().describe('direct (default): the model writes a 0..1 score; logprobs: G-Eval, the probability-weighted mean of a 1-5 grade'),
  // h-checks: kind, checks, combine, code (SPEC section 15; src/schemas/checks.ts)
  ...EvaluatorKindFields,
  visibility: Visibility,
  is_preset: z.boolean().describe('shipped with the server; public and read-only'),
  project_id: z.string().nullable().describe('owning project; null for presets'),
  version: z.number().int().describe('content version, +1 on every content change'),
  created_at: timestamp,
  updated_at: timestamp,
});
export type Evaluator = z.infer<typeof Evaluator>;

export const EvaluatorRef = z.object({
  id: id('evaluator'),
  name: z.string().describe('evaluator name'),
  version: z.number().int().nullable().describe('pinned version, or null to run the latest version'),
});
export type EvaluatorRef = z.infer<typeof EvaluatorRef>;

export const GenerationQuestion = z.object({
  form_field_name: z.string().describe('the key to answer it under in extra_contexts (lower snake case)'),
  form_field_description: z.string().describe('the question to answer'),
});
export type GenerationQuestion = z.infer<typeof GenerationQuestion>;

/** What generate_judge recorded about a judge it made. Set only by generation, never by create/update input. */
export const JudgeGeneration = z
  .object({
    status: z.enum(['draft', 'complete']).describe('draft: waiting for answers to open_questions, cannot run yet; complete: designed by generation and ready to run'),
    context_aware: z.boolean().describe('enable_context_aware_evaluators as given to generation; a follow-up keeps it unless given again'),
    answers: z
      .record(z.string(), z.string().describe('the answer to the question of that form_field_name'))
      .describe('answers given so far to generation questions (extra_contexts), keyed by form_field_name'),
    open_questions: z
      .array(GenerationQuestion)
      .describe('questions still unanswered (a draft has at least one); answer them with generate_judge, this judge_id and extra_contexts keyed by form_field_name'),
  })
  .describe('the state of generation for a judge made by generate_judge');
export type JudgeGeneration = z.infer<typeof JudgeGeneration>;

export const Judge = z.object({
  id: id('judge'),
  name: z.string().describe('judge name; judges can be run by exact name'),
  intent: z.string().describe('what the judge evaluates'),
  stage: z.string().nullable().describe('the application stage the judge evaluates, if any'),
  visibility: Visibility,
  project_id: z.string().describe('owning project'),
  evaluators: z.array(EvaluatorRef).describe('the evaluators the judge applies, in order'),
  generation: JudgeGeneration.nullable().describe(
    'null for a judge made by hand (create_judge); for a judge made by generate_judge, its generation state: a draft (status draft) cannot run until its open questions are answered',
  ),
  guardrail: Guardrail.nullable().optional().describe("the judge proxy's guardrail (flag or block below a threshold); null or absent: none"), // h-proxy
  version: z.number().int().describe('content version, +1 on every change'),
  created_at: timestamp,
  updated_at: timestamp,
});
export type Judge = z.infer<typeof Judge>;

export const JudgeFull = Judge.extend({
  evaluators: z
    .array(Evaluator.extend({ pinned_version: z.number().int().nullable().describe('version the judge pins, or null') }))
    .describe('every evaluator the judge applies, in full, in order'),
});
export type JudgeFull = z.infer<typeof JudgeFull>;

export const EvaluatorResult = z.object({
  evaluator_id: z.string().describe('id of the evaluator'),
  evaluator_name: z.string().describe('name of the evaluator'),
  evaluator_version: z.number().int().describe('exact evaluator version used'),
  score: z.number().min(0).max(1).nullable().describe('0..1, higher is better; null when this evaluator failed (see error) or does not apply (not_applicable)'),
  justification: z.string().nullable().describe('the judge model explanation, written before the score (or why the response is degenerate)'),
  not_applicable: z.boolean().optional().describe('true when the evaluator does not apply to this response: score is null and the result is left out of the run score'),
  degenerate: z.boolean().optional().describe('true when the response is degenerate (no letter or digit, or only an opener such as "Answer:"): scored 0 without a model call'),
  critical: z.boolean().optional().describe('the evaluator is critical: the run score is at most its score'),
  model: z.string().nullable().describe('judge model that produced the score'),
  input_tokens: z.number().int().describe('prompt tokens spent, all attempts'),
  output_tokens: z.number().int().describe('completion tokens spent, all attempts'),
  cost_usd: z.number().nullable().describe('cost of this evaluator in USD from the price table; null when its model has no price (unknown)'),
  latency_ms: z.number().describe('wall time of this evaluator'),
  error: z.string().optional().describe('why this evaluator failed, when score is null'),
  jurors: z.array(JurorResult).optional().describe("a jury's jurors, in the evaluator's order: each one's score, justification, tokens and cost, or its error"),
  spread: z.number().nullable().optional().describe("a jury's disagreement: the highest minus the lowest juror score (0 = unanimous); null when no juror scored"),
  grade_probabilities: z
    .record(z.string(), z.number())
    .optional()
    .describe('logprobs scoring: the probability of each grade 1-5 the score was computed from (normalised over the grades)'),
  confidence: z
    .number()
    .min(0)
    .max(1)
    .nullable()
    .optional()
    .describe(
      "how sure the scoring was, 0..1, from the first that applies: the probability of the most likely grade (logprobs scoring, with grade_probabilities), 1 - spread (a jury of two or more scoring jurors), else the confidence the judge model stated in its answer (a weak signal until a calibration run's ece shows it tracks people); null when none is available",
    ),
  cached: z.boolean().optional().describe('true when this result was reused from the result cache (use_cache): no model call, no cost, no tokens'),
  cache_read_tokens: z.number().int().optional().describe("prompt tokens read from the provider's prompt cache (part of input_tokens, billed at the cache-read rate)"),
  cache_write_tokens: z.number().int().optional().describe("prompt tokens written to the provider's prompt cache (part of input_tokens, billed at the cache-write rate)"),
  settings: z
    .object({
      temperature: z.number().nullable().describe("sampling temperature sent; null = none sent, the provider's default (models that refuse one)"),
      max_tokens: z.number().int().describe('output token limit of each call'),
      strategy: z.enum(['tool', 'json_schema', 'json']).describe('how the structured answer was asked for'),
    })
    .optional()
    .describe('the model settings the score was produced with'),
});
export type EvaluatorResult = z.infer<typeof EvaluatorResult>;

// Pairwise comparison (SPEC section 9): two responses to the same request, each evaluator asked in both orders.

export const Preference = z.enum(['a', 'b', 'tie']).describe('a: response_a better meets the rubric; b: response_b does; tie: neither, or the two orders disagreed');
export type Preference = z.infer<typeof Preference>;

export const ComparisonOrder = z.object({
  shown_first: z.enum(['a', 'b']).describe('which response was shown first (labelled "A" for the model); the other was "B"'),
  preference: Preference.nullable().describe('the preference this order gave, mapped back to response_a/response_b; null when it failed'),
  justification: z.string().nullable().describe('the judge model explanation in this order'),
  error: z.string().optional().describe('why this order failed'),
});
export type ComparisonOrder = z.infer<typeof ComparisonOrder>;

export const ComparisonEvaluatorResult = z.object({
  evaluator_id: z.string().describe('id of the evaluator'),
  evaluator_name: z.string().describe('name of the evaluator'),
  evaluator_version: z.number().int().describe('exact evaluator version used'),
  preference: Preference.nullable().describe('tie when the two orders disagreed; null when this evaluator failed (see error)'),
  consistent: z.boolean().describe('true when both orders gave the same preference (or no model call was needed); false when they disagreed or one failed'),
  justification: z.string().nullable().describe('why: the explanation of the first order when both agree, else what disagreed (or why no model was asked)'),
  degenerate: z.boolean().optional().describe('true when a response is degenerate: it loses without a model call (both degenerate: tie)'),
  orders: z.array(ComparisonOrder).describe('the two orders asked, response_a first then response_b first; empty when no model was asked'),
  model: z.string().nullable().describe('judge model that answered'),
  input_tokens: z.number().int().describe('prompt tokens spent, both orders, all attempts'),
  output_tokens: z.number().int().describe('completion tokens spent, both orders, all attempts'),
  cost_usd: z.number().nullable().describe('cost of this evaluator in USD; null when its model has no price'),
  latency_ms: z.number().describe('wall time of this evaluator (both orders run concurrently)'),
  error: z.string().optional().describe('why this evaluator failed, when preference is null'),
});
export type ComparisonEvaluatorResult = z.infer<typeof ComparisonEvaluatorResult>;

/** The counts of a comparison (a log's record and a comparison's answer share them). */
export const Tally = {
  preference: Preference.describe('a or b when more evaluators prefer it than the other; tie otherwise'),
  wins_a: z.number().int().describe('evaluators preferring response_a'),
  wins_b: z.number().int().describe('evaluators preferring response_b'),
  ties: z.number().int().describe('evaluators answering tie (inconsistent orders included); failed evaluators are not counted'),
};

/** What a comparison log keeps beside the usual fields (in PostgreSQL: the log's extra json column). */
export const ComparisonRecord = z.object({
  response_b: z.string().describe("the second response (the log's response is response_a); with turns, the content of turns_b's last assistant turn"),
  turns_b: z.array(Turn).nullable().optional().describe("the second conversation, when turns were compared (the log's turns are turns_a)"),
  ...Tally,
  evaluators: z
    .array(ComparisonEvaluatorResult.pick({ evaluator_id: true, preference: true, consistent: true, degenerate: true, orders: true }))
    .describe("each evaluator's preference, consistency and orders, in the judge order"),
});
export type ComparisonRecord = z.infer<typeof ComparisonRecord>;

const RUN_SCORE =
  'mean of the applicable evaluator scores (failed and not-applicable results left out), at most the lowest critical score; 0 for a degenerate response; null when no evaluator gave a score';

export const ExecutionLog = z.object({
  id: id('execution log'),
  type: z
    .enum(['judge', 'evaluator', 'comparison', 'proxy'])
    .describe('whether a judge or a single evaluator was run, two responses were compared (see comparison), or a judge proxy exchange was judged (see proxy)'),
  judge_id: z.string().nullable().describe('judge run, for type judge'),
  judge_name: z.string().nullable().describe('name of the judge at run time'),
  judge_version: z.number().int().nullable().describe('judge version used'),
  evaluator_id: z.string().nullable().describe('evaluator run, for type evaluator'),
  evaluator_name: z.string().nullable().describe('name of the evaluator at run time'),
  evaluator_version: z.number().int().nullable().describe('evaluator version used'),
  project_id: z.string().describe('project the run belongs to'),
  request: z.string().nullable().describe('the input that prompted the response'),
  response: z.string().describe('the evaluated response (with turns: the content of the judged assistant turn)'),
  turns: z.array(Turn).nullable().optional().describe('the conversation given instead of request/response; null or absent otherwise'),
  system_prompt: z.string().nullable().optional().describe('the system prompt of the evaluated application, when given'),
  session_id: z.string().nullable().optional().describe('conversation or session of the evaluated application, for grouping runs'),
  contexts: z.array(z.string()).nullable().describe('retrieved snippets given'),
  expected_output: z.string().nullable().describe('reference answer given'),
  user_id: z.string().nullable().describe('end user of the evaluated application'),
  attachments: z.array(z.string()).optional().describe('ids of the files given to the judge model (h-attach); absent when none'),
  tags: z.array(z.string()).describe('labels for filtering'),
  trace_id: z.string().nullable().optional().describe('the OpenTelemetry trace of the judged span (online evaluation, or given at run time); absent otherwise'),
  span_id: z.string().nullable().optional().describe('the judged span within trace_id; absent otherwise'),
  evaluator_results: z.array(EvaluatorResult).describe('one entry per evaluator, in the judge order'),
  score: z.number().nullable().describe(RUN_SCORE),
  cost_usd: z.number().nullable().describe('sum of evaluator costs in USD; null when any of them is unknown'),
  latency_ms: z.number().describe('wall time of the whole run'),
  batch_execution_id: z.string().nullable().optional().describe('the batch run this log is a row of; null or absent for a run of its own'),
  created_at: timestamp,
  comparison: ComparisonRecord.nullable()
    .optional()
    .describe("for type comparison: the second response and each evaluator's preference (response is the first, response_a); absent otherwise"), // h-proxy: the upstream call of a judge proxy exchange (SPEC section 13)
  proxy: ProxyLogInfo.nullable().optional().describe('for type proxy: the upstream call of the judge proxy (model, tokens, cost, outcome, guardrail marks); absent otherwise'),
});
export type ExecutionLog = z.infer<typeof ExecutionLog>;

/** The list envelope every list answers with (SPEC section 2). */
export const page = <T extends z.ZodType>(item: T) =>
  z.object({
    results: z.array(item).describe('items, newest first'),
    next_cursor: z.string().nullable().describe('pass as `cursor` for the next page; null on the last page'),
  });

export const PageParams = {
  // The documented maximum is the default of TRIBUNAL_MAX_PAGE_SIZE; the server checks the configured one.
  limit: z.number().int().min(1).meta({ maximum: 200 }).optional().describe('page size, default 50, at most 200 (TRIBUNAL_MAX_PAGE_SIZE)'),
  cursor: z.string().optional().describe('opaque cursor from a previous page `next_cursor`'),
};

export const ExecutionInput = z.object(ExecutionInputShape);
export type ExecutionInput = z.infer<typeof ExecutionInput>;

export const ExecutionResult = z.object({
  execution_log_id: z.string().describe('id of the execution log that records this run'),
  evaluator_results: z.array(EvaluatorResult).describe('one entry per evaluator, in the judge order'),
  score: z.number().nullable().describe(RUN_SCORE),
  cost_usd: z.number().nullable().describe('total cost of the run in USD; null when any evaluator cost is unknown (a model without a price)'),
  latency_ms: z.number().describe('wall time of the run'),
});
export type ExecutionResult = z.infer<typeof ExecutionResult>;
