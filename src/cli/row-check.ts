// The full check of one dataset row of `tribunal eval`: the row schema, built from the schema the
// server checks an execute call with, so that a row is refused here with the server's rule (and, for
// limits, the server's words). dataset.ts loads this module only for a row the quick check
// (row-quick-check.ts) cannot pass: zod and these schemas are most of what a command's start
// compiles and sets up.
import { z } from 'zod';
import { ExecutionInputShape } from '../schemas/execution-input.ts';

/**
 * The fields a row may give: the execute call's own. Unknown columns are dropped, as the server
 * would. row-quick-check.ts follows this shape (its test holds the two to the same rules).
 */
export const RowInput = z.object({
  turns: ExecutionInputShape.turns,
  response: ExecutionInputShape.response,
  request: ExecutionInputShape.request,
  system_prompt: ExecutionInputShape.system_prompt,
  contexts: ExecutionInputShape.contexts,
  expected_output: ExecutionInputShape.expected_output,
  tags: ExecutionInputShape.tags,
  user_id: ExecutionInputShape.user_id,
  session_id: ExecutionInputShape.session_id,
});
export type RunInput = z.infer<typeof RowInput>;

const present = (v: unknown) => v !== undefined && v !== null;

/** The row's first schema problem in the CLI's words: the field in quotes, and a turn by its number. */
function issueMessage(issue: z.core.$ZodIssue): string {
  const [field, index] = issue.path;
  const name = `"${String(field)}"`;
  if (field === 'turns' && typeof index === 'number') {
    const shape = issue.path.length <= 3 && issue.code === 'invalid_type';
    return shape ? `${name} item ${index + 1} must be an object with a "role" and a "content" string` : `${name} item ${index + 1}: ${issue.message}`;
  }
  if (issue.code !== 'invalid_type') return issue.message; // a limit: the schema's own words name the field
  if (field === 'turns') return `${name} must be a non-empty array of turns`;
  if (field === 'contexts' || field === 'tags') return `${name} must be an array of strings`;
  return `${name} must be a string`;
}

/** Checks one row's fields; answers the run input or the reason it is bad. */
export function toRunInput(raw: Record<string, unknown>): { input?: RunInput; id?: string; error?: string } {
  const id = present(raw.id) ? String(raw.id) : undefined;
  // An empty CSV cell or a JSON null is an absent field, as dataset.ts's comment at the top says.
  const given = Object.fromEntries(Object.entries(raw).filter(([, v]) => present(v)));
  if (present(given.turns) && (present(given.response) || present(given.request))) return { id, error: 'give either "turns" or "request"/"response", not both' };
  if (!present(given.turns) && !present(given.response)) return { id, error: 'missing "response"' };
  const parsed = RowInput.safeParse(given);
  if (!parsed.success) return { id, error: issueMessage(parsed.error.issues[0]) };
  if (parsed.data.turns && !parsed.data.turns.length) return { id, error: '"turns" must be a non-empty array of turns' };
  return { input: parsed.data, id };
}
