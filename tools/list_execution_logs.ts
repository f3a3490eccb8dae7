import { listLogs, LogQuery } from '../src/domain/logs.ts';
import { filterIdsForNames } from '../src/domain/names.ts';
import { ExecutionLog, page } from '../src/schemas.ts';
import { defineTool } from '../src/tool.ts';

export default defineTool({
  name: 'list_execution_logs',
  title: 'List execution logs',
  description:
    "Audit past runs of your organization, newest first: each log holds the inputs, every evaluator's score and justification, cost and latency. " +
    'Filter by judge, evaluator, project, score range, cost range, tags (all must match), session, end user and date range. Returns {results, next_cursor}.',
  input: LogQuery,
  output: page(ExecutionLog),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async handler(input, ctx) {
    return listLogs(ctx, await filterIdsForNames(ctx, input));
  },
});
