// Pairwise comparison's input and answer (SPEC section 9); the comparison log's record is in core.ts.
import { z } from 'zod';
import { ComparisonEvaluatorResult, ExecutionInputShape, Tally, Turn } from './core.ts';

export const ComparisonInputShape = {
  request: ExecutionInputShape.request.describe('the input both responses answer (recommended; required by evaluators with requires_request)'),
  response_a: z
    .string()
    .min(1, 'response_a is empty: pass the first response to compare')
    .optional()
    .describe('the first response to compare (not empty); give response_a and response_b, or turns_a and turns_b'),
  response_b: z.string().min(1, 'response_b is empty: pass the second response to compare').optional().describe('the second response to compare (not empty)'),
  turns_a: z
    .array(Turn)
    .optional()
    .describe('instead of request/response_a: a conversation ending with the first assistant turn to compare; turns_b must share every turn before it'),
  turns_b: z.array(Turn).optional().describe('the same conversation ending with the second assistant turn to compare'),
  system_prompt: z.string().optional().describe('with turns_a/turns_b: the system prompt of the evaluated application, shared by both'),
  contexts: ExecutionInputShape.contexts,
  expected_output: ExecutionInputShape.expected_output,
  user_id: ExecutionInputShape.user_id,
  session_id: ExecutionInputShape.session_id,
  tags: ExecutionInputShape.tags,
  attachments: ExecutionInputShape.attachments,
};
export const ComparisonInput = z.object(ComparisonInputShape);
export type ComparisonInput = z.infer<typeof ComparisonInput>;

export const ComparisonResult = z.object({
  execution_log_id: z.string().describe('id of the execution log (type comparison) that records this comparison'),
  evaluator_results: z.array(ComparisonEvaluatorResult).describe('one entry per evaluator, in the judge order'),
  ...Tally,
  cost_usd: z.number().nullable().describe('total cost in USD; null when any evaluator cost is unknown'),
  latency_ms: z.number().describe('wall time of the comparison'),
});
export type ComparisonResult = z.infer<typeof ComparisonResult>;
