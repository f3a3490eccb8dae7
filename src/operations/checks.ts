// REST-only: try a check or code evaluator's content on one input before saving it (docs/CHECKS.md,
// "Try it"). Never registered with MCP (14 tools); nothing is stored or logged.
import { z } from 'zod';
import { tryEvaluator } from '../checks/try.ts';
import { ExecutionInputShape } from '../schemas.ts';
import { EvaluatorKindFields } from '../schemas/checks.ts';
import { defineTool } from '../tool.ts';

const { response, request, turns, system_prompt, contexts, expected_output } = ExecutionInputShape;

export const tryEvaluatorOperation = defineTool({
  name: 'try_evaluator',
  title: 'Try a check or code evaluator on one input',
  description:
    'Score one input with a check or code evaluator that is not saved yet (kind, checks, combine or code, as create_evaluator takes them): the content is checked as saving checks it (400 naming the field, or the line of code), then scored. Nothing is stored or logged; no model is called.',
  input: z.object({
    kind: z.enum(['check', 'code']).describe('check or code (an llm evaluator is tried by running it)'),
    checks: EvaluatorKindFields.checks,
    combine: EvaluatorKindFields.combine,
    code: EvaluatorKindFields.code,
    response,
    request,
    turns,
    system_prompt,
    contexts,
    expected_output,
  }),
  output: z.object({
    score: z.number().min(0).max(1).nullable().describe('0..1; null when the code failed (see error)'),
    justification: z.string().nullable().describe('which checks failed and what was found, or what the code answered'),
    error: z.string().optional().describe('why the code failed (a throw with its line, a limit, an answer out of range)'),
    latency_ms: z.number().describe('time the scoring took'),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async handler({ kind, checks, combine, code, ...input }, ctx) {
    return tryEvaluator(ctx.config, ctx.caller.org.id, { kind, checks, combine, code }, input);
  },
});
