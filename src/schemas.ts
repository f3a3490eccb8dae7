// The wire shapes of every resource (SPEC section 1). These zod schemas are the single source of
// truth: TypeScript types, MCP output schemas and the OpenAPI document are all derived from them.
import { z } from 'zod';

const timestamp = z.string().describe('ISO-8601 UTC timestamp');
const id = (what: string) => z.string().describe(`id of the ${what}`);

export const Visibility = z
  .enum(['private', 'public'])
  .describe('private: seen only by its organization; public: readable and runnable by every caller');

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

export const ModelProvider = z.enum(['anthropic', 'openai']).describe('anthropic: the Messages API; openai: the Chat Completions API (OpenAI, vLLM, Ollama, LM Studio, llama.cpp, LiteLLM)');
export const ModelPrice = z
  .object({ input: z.number().min(0).max(10_000).describe('USD per million input tokens'), output: z.number().min(0).max(10_000).describe('USD per million output tokens') })
  .strict()
  .describe('USD per million input and output tokens');
export const ModelCapabilities = z.object({
  forced_tool: z.boolean().describe('the server honours a forced tool call'),
  json_schema: z.boolean().describe('the server honours a JSON-schema response format'),
  logprobs: z.boolean().describe('the server returns token log-probabilities'),
});
export type ModelCapabilities = z.infer<typeof ModelCapabilities>;

/** A judge model registered by an organization (SPEC section 11). The API key itself is write-only. */
export const Model = z.object({
  id: id('model'),
  name: z.string().describe("what an evaluator's `model` refers to"),
  provider: ModelProvider,
  base_url: z.string().nullable().describe("the provider's endpoint; null = the provider's public API"),
  model: z.string().describe("the provider's own model id"),
  api_key_hint: z.string().nullable().describe('the last 4 characters of the API key; the key itself is never shown'),
  max_concurrency: z.number().int().describe('calls to this model in flight at once, per server instance'),
  price: ModelPrice.nullable().describe('USD per million tokens; null = unknown (costs are then null)'),
  capabilities: ModelCapabilities.nullable().describe('what `verify` found; null until verified'),
  verified_at: timestamp.nullable().describe('when `verify` last succeeded'),
  created_at: timestamp,
  updated_at: timestamp,
});
export type Model = z.infer<typeof Model>;

export const Project = z.object({
  id: id('project'),
  name: z.string().describe('project name'),
  description: z.string().describe('what the project is for'),
  is_default: z.boolean().describe('the organization default project; resources created without project_id land here'),
  created_at: timestamp,
});
export type Project = z.infer<typeof Project>;

/** One call an assistant turn makes to a tool (SPEC section 10). */
export const ToolCall = z.object({
  id: z.string().optional().describe('the call id the tool turn answering it names as tool_call_id'),
  name: z.string().min(1, 'a tool call needs the tool name').describe('name of the tool called'),
  arguments: z
    .union([z.string(), z.record(z.string(), z.unknown())])
    .describe('the arguments passed: a JSON object, or the text the model wrote (e.g. OpenAI\'s JSON string)'),
});
export type ToolCall = z.infer<typeof ToolCall>;

export const TURN_ROLES = ['user', 'assistant', 'tool', 'system'] as const;
/** One turn of a conversation or agent trace (SPEC section 10). */
export const Turn = z.object({
  role: z.enum(TURN_ROLES, { error: 'role must be one of user, assistant, tool, system' }).describe('who produced the turn'),
  content: z.string().describe('the text of the turn (may be empty on an assistant turn that only calls tools)'),
  tool_calls: z.array(ToolCall).optional().describe('tools an assistant turn called, in order'),
  tool_call_id: z.string().optional().describe('on a tool turn: the id of the call it answers'),
  name: z.string().optional().describe('on a tool turn, the tool name; on others, the speaker\'s name'),
});
export type Turn = z.infer<typeof Turn>;

const TURNS_DESCRIPTION =
  'a conversation or agent trace instead of request/response: the last assistant turn is judged, the earlier turns are its context';

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

export const Evaluator = z.object({
  id: id('evaluator'),
  name: z.string().describe('unique-ish human name; evaluators can be run by exact name'),
  intent: z.string().describe('what the evaluator measures, one or two sentences'),
  rubric: z.string().describe('scoring criteria: what earns a high, a middling and a low score'),
  requires_contexts: z.boolean().describe('runs need `contexts` (retrieved snippets)'),
  requires_expected_output: z.boolean().describe('runs need `expected_output` (a reference answer)'),
  requires_request: z.boolean().describe('runs need `request` (the input that prompted the response)'),
  requires_turns: z.boolean().describe('runs need `turns` (a conversation or agent trace): the evaluator judges a turn in its conversation'),
  critical: z.boolean().describe('a gate: the score of a run that applies it is at most this evaluator\'s score'),
  demonstrations: z.array(Demonstration).describe('few-shot examples shown to the judge model'),
  model: z.string().nullable().describe('judge model override; null = the server default'),
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
    status: z
      .enum(['draft', 'complete'])
      .describe('draft: waiting for answers to open_questions, cannot run yet; complete: designed by generation and ready to run'),
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
  score: z
    .number()
    .min(0)
    .max(1)
    .nullable()
    .describe('0..1, higher is better; null when this evaluator failed (see error) or does not apply (not_applicable)'),
  justification: z.string().nullable().describe('the judge model explanation, written before the score (or why the response is degenerate)'),
  not_applicable: z
    .boolean()
    .optional()
    .describe('true when the evaluator does not apply to this response: score is null and the result is left out of the run score'),
  degenerate: z
    .boolean()
    .optional()
    .describe('true when the response is degenerate (no letter or digit, or only an opener such as "Answer:"): scored 0 without a model call'),
  critical: z.boolean().optional().describe('the evaluator is critical: the run score is at most its score'),
  model: z.string().nullable().describe('judge model that produced the score'),
  input_tokens: z.number().int().describe('prompt tokens spent, all attempts'),
  output_tokens: z.number().int().describe('completion tokens spent, all attempts'),
  cost_usd: z.number().nullable().describe('cost of this evaluator in USD from the price table; null when its model has no price (unknown)'),
  latency_ms: z.number().describe('wall time of this evaluator'),
  error: z.string().optional().describe('why this evaluator failed, when score is null'),
});
export type EvaluatorResult = z.infer<typeof EvaluatorResult>;

const RUN_SCORE =
  'mean of the applicable evaluator scores (failed and not-applicable results left out), at most the lowest critical score; 0 for a degenerate response; null when no evaluator gave a score';

export const ExecutionLog = z.object({
  id: id('execution log'),
  type: z.enum(['judge', 'evaluator']).describe('whether a judge or a single evaluator was run'),
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
  tags: z.array(z.string()).describe('labels for filtering'),
  evaluator_results: z.array(EvaluatorResult).describe('one entry per evaluator, in the judge order'),
  score: z.number().nullable().describe(RUN_SCORE),
  cost_usd: z.number().nullable().describe('sum of evaluator costs in USD; null when any of them is unknown'),
  latency_ms: z.number().describe('wall time of the whole run'),
  batch_execution_id: z.string().nullable().optional().describe('the batch run this log is a row of; null or absent for a run of its own'),
  created_at: timestamp,
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

/** The inputs of a run (SPEC section 2, execution request body). */
export const ExecutionInputShape = {
  response: z
    .string()
    .min(1, 'response is empty: pass the LLM output to evaluate')
    .optional()
    .describe('the LLM output to evaluate (not empty); required unless turns are given'),
  request: z.string().optional().describe('the input that prompted the response (recommended)'),
  turns: z
    .array(Turn)
    .optional()
    .describe(`${TURNS_DESCRIPTION}; give either turns or request/response, never both`),
  system_prompt: z.string().optional().describe('the system prompt of the evaluated application: material to judge (role adherence), with turns'),
  contexts: z
    .array(z.string())
    .optional()
    .describe('retrieved snippets the response should be grounded in; required by evaluators with requires_contexts'),
  expected_output: z.string().optional().describe('reference answer; required by evaluators with requires_expected_output'),
  user_id: z.string().max(200, 'user_id is at most 200 characters').optional().describe('end user of the evaluated application, for filtering logs (at most 200 characters)'),
  session_id: z
    .string()
    .min(1, 'session_id is empty: leave it out or pass the session id')
    .max(200, 'session_id is at most 200 characters')
    .optional()
    .describe('conversation or session of the evaluated application, for filtering logs and the session page (at most 200 characters)'),
  tags: z.array(z.string()).optional().describe('labels stored on the execution log, for filtering'),
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

// Datasets (SPEC section 7): stored inputs a judge can later be run over.

const ExpectedScores = z
  .record(z.string().min(1), z.number().min(0).max(1))
  .describe('evaluator id or exact name -> the score 0..1 a person gave (for calibration)');
const ItemMetadata = z.record(z.string(), z.unknown()).describe('free JSON object kept with the item');

/** What a caller gives for one item: the execution inputs, plus labels. */
export const DatasetItemInputShape = {
  // Either response (with request) or turns: checked per item by datasets/item-shape.ts, so a bulk add names each bad index.
  response: ExecutionInputShape.response,
  request: ExecutionInputShape.request,
  turns: ExecutionInputShape.turns,
  system_prompt: ExecutionInputShape.system_prompt,
  contexts: ExecutionInputShape.contexts,
  expected_output: ExecutionInputShape.expected_output,
  tags: z.array(z.string()).optional().describe('labels; a batch run copies them onto each row log'),
  metadata: ItemMetadata.optional(),
  expected_scores: ExpectedScores.optional(),
};
export const DatasetItemInput = z.object(DatasetItemInputShape);
export type DatasetItemInput = z.infer<typeof DatasetItemInput>;

export const DatasetItem = z.object({
  id: id('dataset item'),
  response: z.string().nullable().describe('the LLM output to evaluate; null when the item is a conversation (turns)'),
  request: z.string().nullable().describe('the input that prompted the response'),
  turns: z.array(Turn).nullable().describe('the conversation to judge instead of request/response (its last turn is judged); null otherwise'),
  system_prompt: z.string().nullable().describe('the system prompt of the evaluated application, with turns'),
  contexts: z.array(z.string()).nullable().describe('retrieved snippets'),
  expected_output: z.string().nullable().describe('reference answer'),
  tags: z.array(z.string()).describe('labels'),
  metadata: ItemMetadata,
  expected_scores: ExpectedScores.nullable(),
  created_at: timestamp,
});
export type DatasetItem = z.infer<typeof DatasetItem>;

export const Dataset = z.object({
  id: id('dataset'),
  name: z.string().describe('dataset name, unique in its organization; accepted wherever a dataset id is'),
  description: z.string().describe('what the dataset holds'),
  project_id: z.string().describe('owning project'),
  item_count: z.number().int().describe('items in the dataset'),
  created_at: timestamp,
  updated_at: timestamp.describe('last change to the dataset or its items'),
});
export type Dataset = z.infer<typeof Dataset>;

// Batch runs (SPEC section 7): a judge (or one evaluator) over a dataset or given items, asynchronously.

export const BATCH_STATUSES = ['queued', 'running', 'completed', 'failed', 'cancelled'] as const;
export const BatchStatus = z.enum(BATCH_STATUSES).describe('queued: waiting to start; running; completed: every row scored or failed; failed: stopped (see error); cancelled: stopped by a caller');
export type BatchStatus = z.infer<typeof BatchStatus>;

export const BatchEvaluatorSummary = z.object({
  evaluator_id: z.string().describe('id of the evaluator'),
  evaluator_name: z.string().describe('name of the evaluator'),
  n: z.number().int().describe('rows this evaluator scored'),
  mean: z.number().nullable().describe('mean score over the scored rows; null when none'),
  min: z.number().nullable().describe('lowest score; null when none'),
  max: z.number().nullable().describe('highest score; null when none'),
  errors: z.number().int().describe('rows where this evaluator failed (no score)'),
});
export type BatchEvaluatorSummary = z.infer<typeof BatchEvaluatorSummary>;

export const BatchExecution = z.object({
  id: id('batch execution'),
  judge_id: z.string().nullable().describe('the judge run over the items; null when one evaluator is run'),
  judge_version: z.number().int().nullable().describe('the judge version every row uses'),
  evaluator_id: z.string().nullable().describe('the evaluator run over the items, when no judge is'),
  dataset_id: z.string().nullable().describe('the dataset run over; null when the items were given in the request'),
  status: BatchStatus,
  total: z.number().int().describe('rows in the run'),
  done: z.number().int().describe('rows finished with a score'),
  failed: z.number().int().describe('rows finished without a score (bad input, model failure, item gone)'),
  started_at: timestamp.nullable().describe('when the first row started'),
  finished_at: timestamp.nullable().describe('when the run ended (completed, failed or cancelled)'),
  cost_usd: z.number().nullable().describe('sum of the rows\' costs in USD so far; null when a cost is unknown'),
  summary: z.array(BatchEvaluatorSummary).describe('per evaluator: rows scored, mean, min, max, errors'),
  tags: z.array(z.string()).describe('labels added to every row log'),
  use_cache: z.boolean().describe('rows may reuse a cached result for the same inputs'),
  error: z.string().nullable().describe('why the run failed; null otherwise'),
  created_at: timestamp,
});
export type BatchExecution = z.infer<typeof BatchExecution>;

/** One row of a batch, in item order. */
export const BatchRow = z.object({
  position: z.number().int().describe('0-based place of the row in the run (item order)'),
  item_id: z.string().nullable().describe('the dataset item, for a run over a dataset'),
  index: z.number().int().nullable().describe('index into the given items, for a run over items given in the request'),
  execution_log_id: z.string().nullable().describe('the execution log of the row; null when nothing was run'),
  score: z.number().nullable().describe('the row score; null when it failed'),
  evaluator_results: z.array(EvaluatorResult).describe('one entry per evaluator'),
  error: z.string().nullable().describe('why the row has no score'),
});
export type BatchRow = z.infer<typeof BatchRow>;
export const BatchResult = BatchRow;
export type BatchResult = BatchRow;
