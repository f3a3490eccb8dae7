// The inputs of a run (SPEC section 2, execution request body) and the conversation turns they may
// carry (SPEC section 10). Kept apart from core.ts, which re-exports them, so that a caller that only
// checks execution inputs (`tribunal eval` checking a dataset's rows) builds these schemas alone and
// not every resource's (issue 33: about 10 ms of the command's start-up).
import { z } from 'zod';
import { Attachments } from './files.ts'; // h-attach

/** One call an assistant turn makes to a tool (SPEC section 10). */
export const ToolCall = z.object({
  id: z.string().optional().describe('the call id the tool turn answering it names as tool_call_id'),
  name: z.string().min(1, 'a tool call needs the tool name').describe('name of the tool called'),
  arguments: z.union([z.string(), z.record(z.string(), z.unknown())]).describe("the arguments passed: a JSON object, or the text the model wrote (e.g. OpenAI's JSON string)"),
});
export type ToolCall = z.infer<typeof ToolCall>;

export const TURN_ROLES = ['user', 'assistant', 'tool', 'system'] as const;
/** One turn of a conversation or agent trace (SPEC section 10). */
export const Turn = z.object({
  role: z.enum(TURN_ROLES, { error: 'role must be one of user, assistant, tool, system' }).describe('who produced the turn'),
  content: z.string().describe('the text of the turn (may be empty on an assistant turn that only calls tools)'),
  tool_calls: z.array(ToolCall).optional().describe('tools an assistant turn called, in order'),
  tool_call_id: z.string().optional().describe('on a tool turn: the id of the call it answers'),
  name: z.string().optional().describe("on a tool turn, the tool name; on others, the speaker's name"),
});
export type Turn = z.infer<typeof Turn>;

export const TURNS_DESCRIPTION = 'a conversation or agent trace instead of request/response: the last assistant turn is judged, the earlier turns are its context';

/** The inputs of a run (SPEC section 2, execution request body). */
export const ExecutionInputShape = {
  response: z.string().min(1, 'response is empty: pass the LLM output to evaluate').optional().describe('the LLM output to evaluate (not empty); required unless turns are given'),
  request: z.string().optional().describe('the input that prompted the response (recommended)'),
  turns: z.array(Turn).optional().describe(`${TURNS_DESCRIPTION}; give either turns or request/response, never both`),
  system_prompt: z.string().optional().describe('the system prompt of the evaluated application: material to judge (role adherence), with turns'),
  contexts: z.array(z.string()).optional().describe('retrieved snippets the response should be grounded in; required by evaluators with requires_contexts'),
  expected_output: z.string().optional().describe('reference answer; required by evaluators with requires_expected_output'),
  user_id: z.string().max(200, 'user_id is at most 200 characters').optional().describe('end user of the evaluated application, for filtering logs (at most 200 characters)'),
  session_id: z
    .string()
    .min(1, 'session_id is empty: leave it out or pass the session id')
    .max(200, 'session_id is at most 200 characters')
    .optional()
    .describe('conversation or session of the evaluated application, for filtering logs and the session page (at most 200 characters)'),
  tags: z.array(z.string()).optional().describe('labels stored on the execution log, for filtering'),
  trace_id: z
    .string()
    .regex(/^[0-9a-f]{32}$/, 'trace_id is 32 lowercase hex digits (an OpenTelemetry trace id)')
    .optional()
    .describe('the OpenTelemetry trace this run judges (32 lowercase hex digits): stored on the log, for filtering and the trace page'),
  span_id: z
    .string()
    .regex(/^[0-9a-f]{16}$/, 'span_id is 16 lowercase hex digits (an OpenTelemetry span id)')
    .optional()
    .describe('the span within trace_id this run judges (16 lowercase hex digits); only with trace_id'),
  attachments: Attachments.optional(),
  use_cache: z
    .boolean()
    .optional()
    .describe('reuse an identical earlier result (same evaluator version, inputs, model and settings) without a model call, marked cached with cost 0; default false'),
};
