import { z } from 'zod';
import { listLogs } from '../src/domain/logs.ts';
import { filterIdsForNames } from '../src/domain/names.ts';
import { ExecutionLog, page, PageParams } from '../src/schemas.ts';
import { defineTool } from '../src/tool.ts';

export default defineTool({
  name: 'list_execution_logs',
  title: 'List execution logs',
  description:
    "Audit past runs of your organization, newest first: each log holds the inputs, every evaluator's score and justification, cost and latency. " +
    'Filter by judge, evaluator, project, score range, cost range, tags (all must match) and date range. Returns {results, next_cursor}.',
  input: z.object({
    judge_id: z.string().optional().describe('only runs of this judge (its id or exact name)'),
    evaluator_id: z.string().optional().describe('only runs in which this evaluator scored, alone or in a judge (its id or exact name)'),
    project_id: z.string().optional().describe('only runs filed under this project'),
    min_score: z.number().min(0).max(1).optional().describe('only runs whose mean score is at least this'),
    max_score: z.number().min(0).max(1).optional().describe('only runs whose mean score is at most this'),
    min_cost: z.number().min(0).optional().describe('only runs that cost at least this many USD'),
    max_cost: z.number().min(0).optional().describe('only runs that cost at most this many USD'),
    tags: z.array(z.string()).optional().describe('only runs carrying every one of these tags'),
    date_from: z.string().optional().describe('only runs at or after this date (2026-11-21) or ISO-8601 date-time'),
    date_to: z.string().optional().describe('only runs at or before this date (inclusive, whole day) or ISO-8601 date-time'),
    ...PageParams,
  }),
  output: page(ExecutionLog),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async handler(input, ctx) {
    return listLogs(ctx, await filterIdsForNames(ctx, input));
  },
});
