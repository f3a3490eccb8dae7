// What makes one dataset item runnable: either a response (with an optional request) or a
// conversation (`turns`, with an optional system_prompt), never both (SPEC sections 7 and 10).
// Checked here rather than in the zod schema so that a bulk add can name every bad index at once
// and the streamed import can report a bad line by number, with the same words.
import { z } from 'zod';
import type { FieldError } from '../errors.ts';
import { DatasetItemInput } from '../schemas.ts';

interface ItemMaterial {
  response?: string | null;
  request?: string | null;
  turns?: unknown[] | null;
  system_prompt?: string | null;
}

const present = (v: unknown) => v !== undefined && v !== null;

/** Why the item cannot be run, or null when it can. `prefix` names the item in the field path (`items.3.`). */
export function itemShapeProblem(item: ItemMaterial, prefix = ''): FieldError | null {
  if (present(item.turns)) {
    const both = [present(item.response) && 'response', present(item.request) && 'request'].filter(Boolean);
    if (both.length) return { field: `${prefix}turns`, message: `give either turns or request/response, not both (this item also has ${both.join(' and ')})` };
    if (!item.turns!.length) return { field: `${prefix}turns`, message: 'turns is empty: give the conversation, ending with the assistant turn to judge' };
    return null;
  }
  if (present(item.system_prompt)) return { field: `${prefix}system_prompt`, message: 'system_prompt goes with turns: give the conversation as turns too' };
  if (!present(item.response)) return { field: `${prefix}response`, message: 'missing: give the LLM output to evaluate as response, or a conversation as turns' };
  return null;
}

/**
 * 1..max items, each checked with the schema and then for its shape, so that one answer names every
 * bad index: type errors and shape errors alike (bulk add, inline batch items).
 */
export const runnableItems = (max: number) =>
  z
    .array(DatasetItemInput)
    .min(1)
    .max(max)
    .superRefine((items, check) => {
      items.forEach((item, i) => {
        const problem = itemShapeProblem(item);
        if (problem) check.addIssue({ code: 'custom', path: [i, problem.field], message: problem.message });
      });
    });
