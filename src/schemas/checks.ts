// Checks and code evaluators (SPEC section 15): the evaluator fields of kind "check" and "code".
// Kept beside src/schemas.ts, which adds them to the Evaluator; no import of it (no circle).
import { z } from 'zod';

export const EVALUATOR_KINDS = ['llm', 'check', 'code'] as const;
export const EvaluatorKind = z
  .enum(EVALUATOR_KINDS)
  .describe(
    'llm (default): the judge model scores with the rubric; check: declarative checks (`checks`), no model; code: a sandboxed JavaScript `score(input)` (`code`), no model',
  );
export type EvaluatorKind = z.infer<typeof EvaluatorKind>;

export const CHECK_FIELDS = ['response', 'request', 'expected_output'] as const;
const field = z.enum(CHECK_FIELDS).optional().describe('the text the check reads: response (default), request or expected_output');
const JsonSchemaDoc = z.record(z.string(), z.unknown());

export const Check = z.discriminatedUnion('type', [
  z.object({ type: z.literal('json_valid').describe('the text parses as JSON'), field }),
  z.object({ type: z.literal('json_schema').describe('the text is JSON valid against `schema`'), field, schema: JsonSchemaDoc.describe('a JSON Schema (draft 2020-12 or 07)') }),
  z.object({
    type: z.literal('regex').describe('the text matches `pattern`'),
    field,
    pattern: z.string().min(1).max(2000).describe('a JavaScript regular expression (nested quantifiers such as (a+)+ are refused: catastrophic backtracking)'),
    flags: z
      .string()
      .regex(/^[imsu]*$/, 'flags may only be i, m, s, u')
      .optional()
      .describe('any of i, m, s, u'),
  }),
  z.object({
    type: z.literal('contains').describe('the text contains `value`'),
    field,
    value: z.string().min(1).describe('the text to look for'),
    case_sensitive: z.boolean().optional().describe('default false'),
  }),
  z.object({
    type: z.literal('not_contains').describe('the text does not contain `value`'),
    field,
    value: z.string().min(1).describe('the text that must not appear'),
    case_sensitive: z.boolean().optional().describe('default false'),
  }),
  z.object({
    type: z.literal('equals').describe("the text equals `value` (default: the run's expected_output)"),
    field,
    value: z.string().optional().describe("absent: compare with the run's expected_output (the evaluator then requires it)"),
    trim: z.boolean().optional().describe('trim whitespace on both sides first; default true'),
  }),
  z.object({
    type: z.literal('json_path').describe('the text is JSON and `path` exists in it (or its first match equals `equals`)'),
    field,
    path: z.string().min(1).describe('a JSONPath such as $.answer or $.items[0].id'),
    equals: z.unknown().optional().describe('the JSON value the first match must equal; absent: the path must exist'),
  }),
  z.object({
    type: z.literal('length').describe("the text's length is within min..max"),
    field,
    min: z.number().int().min(0).optional().describe('at least this many (chars or words)'),
    max: z.number().int().min(0).optional().describe('at most this many (chars or words)'),
    unit: z.enum(['chars', 'words']).optional().describe('chars (default, Unicode code points) or words'),
  }),
  z.object({
    type: z.literal('tool_call').describe('an assistant turn of `turns` called tool `name` (read from turns; the evaluator requires turns)'),
    name: z.string().min(1).describe('the tool name'),
    called: z.boolean().optional().describe('true (default): it must be called; false: it must not be'),
    arguments_schema: JsonSchemaDoc.optional().describe("a JSON Schema one call's arguments must satisfy"),
  }),
]);
export type Check = z.infer<typeof Check>;

export const CheckCombine = z
  .enum(['all', 'any', 'fraction'])
  .describe('all (default): 1 when every check passes, else 0; any: 1 when one passes; fraction: the share that passed');
export type CheckCombine = z.infer<typeof CheckCombine>;

/** The limits of a code evaluator's source. */
export const MAX_CODE_CHARS = 20_000;
export const MAX_CHECKS = 50;

/** The fields an evaluator gains (all optional on the wire and in stores: absent reads as kind llm). */
export const EvaluatorKindFields = {
  kind: EvaluatorKind.optional(),
  checks: z.array(Check).max(MAX_CHECKS).nullable().optional().describe('kind check: the declarative checks (SPEC section 15)'),
  combine: CheckCombine.nullable().optional().describe('kind check: all (default), any, or fraction (the share of checks that passed)'),
  code: z
    .string()
    .max(MAX_CODE_CHARS)
    .nullable()
    .optional()
    .describe(
      'kind code: the body of a JavaScript function score(input) (input: request, response, contexts, expected_output, turns, metadata) returning a number 0..1 or {score, justification}; runs in a WebAssembly sandbox without I/O',
    ),
};
