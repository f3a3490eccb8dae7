// REST-only operations on execution logs: the known session ids and user ids of the caller's
// organization (SPEC section 10), for pickers and autocompletion. Never registered with MCP.
import { z } from 'zod';
import { listLogValues, LogValuesQuery } from '../domain/logs.ts';
import type { LogValueField } from '../store/types.ts';
import { defineTool } from '../tool.ts';
import { READ } from './annotations.ts';

function valuesOperation(field: LogValueField, what: string) {
  return defineTool({
    name: `list_${field}s`,
    title: `Known ${what}s of your execution logs`,
    description: `Every distinct ${field} of your organization's execution logs, in bytewise ascending order; starts_with narrows them to a prefix. Returns {results, next_cursor}.`,
    input: LogValuesQuery,
    output: z.object({
      results: z.array(z.string()).describe(`${field} values, ascending`),
      next_cursor: z.string().nullable().describe('pass as `cursor` for the next page; null on the last page'),
    }),
    annotations: READ,
    handler: (input, ctx) => listLogValues(ctx, field, input),
  });
}

export const listSessionIds = valuesOperation('session_id', 'session id');
export const listUserIds = valuesOperation('user_id', 'user id');
