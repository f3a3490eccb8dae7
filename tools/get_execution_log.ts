import { z } from 'zod';
import { getLog } from '../src/domain/logs.ts';
import { ExecutionLog } from '../src/schemas.ts';
import { defineTool } from '../src/tool.ts';

export default defineTool({
  name: 'get_execution_log',
  title: 'Get an execution log',
  description:
    "Read one past run in full: the inputs, each evaluator's score, justification, model, tokens, cost and latency, and the exact evaluator versions used. " +
    'Use the execution_log_id returned by run_judge or run_evaluator, or an id from list_execution_logs.',
  input: z.object({ log_id: z.string().describe('id of the execution log') }),
  output: ExecutionLog,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async handler(input, ctx) {
    return getLog(ctx, input.log_id);
  },
});
