// The quick check of a dataset row of `tribunal eval`: a plain row (response, request and the other
// text fields; no turns) whose every field is plainly valid passes here with a few typeof tests,
// without the row schema (row-check.ts), whose zod and schemas cost the command 30-45 ms of its start
// before the first request could leave (issue 33). It never refuses: a row it cannot pass (turns,
// a wrong type, a limit crossed, no response) goes to the row schema, which decides and words the
// reason. So it must pass only what the row schema passes, and give the same input; its test holds
// it to the schema field by field (the same fields, the same limits) and row by row.
import type { RunInput } from './row-check.ts';

/** The text fields of a plain row, in the row schema's order (zod's output keeps it; the request body is the same bytes). */
export const QUICK_TEXT_FIELDS = ['response', 'request', 'system_prompt', 'contexts', 'expected_output', 'tags', 'user_id', 'session_id'] as const;
type QuickField = (typeof QUICK_TEXT_FIELDS)[number];

/** What each field must be: a string or a list of strings, and a string's length limits (UTF-16 units, as zod counts). */
export const QUICK_RULES: Record<QuickField, { list?: true; min?: number; max?: number }> = {
  response: { min: 1 },
  request: {},
  system_prompt: {},
  contexts: { list: true },
  expected_output: {},
  tags: { list: true },
  user_id: { max: 200 },
  session_id: { min: 1, max: 200 },
};

const present = (v: unknown) => v !== undefined && v !== null;

const stringList = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === 'string');

/** The row's run input (and id) when the row is plainly valid; undefined when the row schema must decide. */
export function quickRunInput(raw: Record<string, unknown>): { input: RunInput; id?: string } | undefined {
  if (present(raw.turns) || !present(raw.response)) return undefined;
  const input: Record<string, unknown> = {};
  for (const field of QUICK_TEXT_FIELDS) {
    const value = raw[field];
    if (!present(value)) continue; // an empty CSV cell or a JSON null is an absent field
    const rule = QUICK_RULES[field];
    if (rule.list) {
      if (!stringList(value)) return undefined;
      input[field] = [...value]; // a copy, as zod gives
      continue;
    }
    if (typeof value !== 'string') return undefined;
    if ((rule.min !== undefined && value.length < rule.min) || (rule.max !== undefined && value.length > rule.max)) return undefined;
    input[field] = value;
  }
  return { input: input as RunInput, id: present(raw.id) ? String(raw.id) : undefined };
}
