// REST-only operations on batch runs (SPEC section 7): start a run of a judge over a dataset or
// given items (202, it runs in the background), list runs, read one, page its rows in item order,
// cancel. Never registered with MCP. The runs themselves: src/batch/.
import { runnableItems } from '../datasets/item-shape.ts';
import { z } from 'zod';
import { withLiveSummary } from '../batch/summary.ts';
import { cancelBatch, batchToWire, getVisibleBatch, listBatches, listBatchResults, MAX_INLINE_ITEMS, startBatch } from '../batch/batches.ts';
import { getOwnDataset } from '../datasets/datasets.ts';
import { assertRunnable, loadJudgeEvaluators, resolveJudge } from '../domain/judges.ts';
import { instant } from '../domain/logs.ts';
import { filterIdsForNames } from '../domain/names.ts';
import { validationError } from '../errors.ts';
import { looksLikeId } from '../ids.ts';
import { PageParams, page } from '../schemas.ts';
import { BATCH_STATUSES, BatchExecution, BatchRow } from '../schemas/batches.ts';
import { defineTool } from '../tool.ts';
import { READ, WRITE } from './annotations.ts';
import { estimateRun } from '../budgets/dry-run.ts';
import { withProviderBatches } from '../batch/provider-mode.ts';

const batchId = z.string().min(1).describe('id of the batch execution');

export const batchExecuteOperation = defineTool({
  name: 'batch_execute',
  title: 'Run a judge over a dataset or a list of items, in the background',
  description:
    'Starts a batch run: every item is scored by the judge as an ordinary run (each row an execution log carrying batch_execution_id). ' +
    'Give dataset_id (a dataset of your organization) or items (1..1000). Answers 202 at once with the run id and its status URL; poll it, then page the results.',
  input: z.object({
    judge_id: z.string().min(1).describe('id or exact name of the judge to run'),
    dataset_id: z.string().min(1).optional().describe('id or exact name of the dataset to run over (give this or items)'),
    items: runnableItems(MAX_INLINE_ITEMS).optional().describe(`the items to run over, 1..${MAX_INLINE_ITEMS} (give this or dataset_id)`),
    tags: z.array(z.string()).optional().describe('labels added to every row log'),
    use_cache: z.boolean().optional().describe('rows may reuse a cached result for the same inputs (default false)'),
    // Cost (room h-cost, docs/COST.md)
    dry_run: z.boolean().optional().describe('true: answer 200 with the estimated calls, tokens and cost (live, cached, provider batch) without running or calling a model'),
    budget_usd: z.number().finite().min(0).optional().describe("the run's total cost cap in USD: the run stops (failed, budget_exceeded) once its rows have spent it"),
    mode: z
      .enum(['live', 'provider_batch'])
      .optional()
      .describe("live (default), or provider_batch: the model calls go through the provider's batch API at half price (results within 24 h); refused when a model has none"),
  }),
  output: z.object({
    batch_execution_id: z.string().describe('id of the run'),
    status_url: z.string().describe('where to read the run (GET)'),
    status: z.literal('queued').describe('a new run is queued'),
  }),
  annotations: WRITE,
  async handler({ judge_id, dataset_id, items, tags, use_cache, dry_run, budget_usd, mode }, ctx) {
    if ((dataset_id === undefined) === (items === undefined)) {
      const both = dataset_id !== undefined;
      throw validationError(both ? 'Give dataset_id or items, not both.' : 'Give dataset_id (a dataset to run over) or items (1..1000 items to run over).', [
        { field: both ? 'items' : 'dataset_id', message: both ? 'give only one of dataset_id and items' : 'dataset_id or items is required' },
      ]);
    }
    const judge = await resolveJudge(ctx, looksLikeId(judge_id) ? { id: judge_id } : { name: judge_id });
    assertRunnable(judge);
    // No model to score with is refused now (503, as a single run is), not found out row by row;
    // after the input's own errors (an unknown dataset is a 404 first).
    const dataset = dataset_id !== undefined ? await getOwnDataset(ctx, dataset_id) : undefined;
    const evaluators = await loadJudgeEvaluators(ctx, judge);
    // dry_run (room h-cost): the estimate, answered 200 (rest.ts), nothing stored or called.
    if (dry_run) return (await estimateRun(ctx, evaluators, dataset_id !== undefined ? { dataset_id } : { items: items! })) as never;
    await ctx.engine.assertCanScore(ctx, evaluators);
    const batch = await startBatch(ctx, { judge }, dataset ? { dataset } : { items: items! }, {
      tags,
      use_cache,
      ...(budget_usd !== undefined ? { budget_usd } : {}),
      ...(mode ? { mode } : {}),
    });
    return { batch_execution_id: batch.id, status_url: `/v1/judges/batch-executions/${batch.id}/`, status: 'queued' as const };
  },
});

export const listBatchExecutionsOperation = defineTool({
  name: 'list_batch_executions',
  title: "List your organization's batch runs, newest first",
  description: 'Batch runs, newest first, filtered by judge, dataset, status and date of start.',
  input: z.object({
    judge_id: z.string().optional().describe('only runs of this judge (id or exact name)'),
    dataset_id: z.string().optional().describe('only runs over this dataset'),
    status: z.enum(BATCH_STATUSES).optional().describe('only runs in this status'),
    date_from: z.string().optional().describe('only runs created at or after this date or date-time'),
    date_to: z.string().optional().describe('only runs created at or before this date (whole day) or date-time'),
    ...PageParams,
  }),
  output: page(BatchExecution),
  annotations: READ,
  async handler(input, ctx) {
    const q = await filterIdsForNames(ctx, input);
    const dateFrom = q.date_from ? instant('date_from', q.date_from, false) : undefined;
    const dateTo = q.date_to ? instant('date_to', q.date_to, true) : undefined;
    // As for logs and annotations: an empty page would hide the caller's mistake.
    if (dateFrom && dateTo && dateFrom > dateTo) throw validationError('date_from is after date_to.', [{ field: 'date_from', message: 'after date_to' }]);
    const page = await listBatches(ctx, { ...q, date_from: dateFrom, date_to: dateTo }, ctx.config.limits.pageSize);
    return { ...page, results: await Promise.all(page.results.map((b) => withLiveSummary(ctx.store, b))) }; // issue 26: running runs agree with their rows
  },
});

export const getBatchExecutionOperation = defineTool({
  name: 'get_batch_execution',
  title: 'Read a batch run: status, progress, cost and per-evaluator summary',
  description: 'One batch run: status (queued, running, completed, failed, cancelled), rows done and failed of total, cost so far, summary per evaluator.',
  input: z.object({ batch_execution_id: batchId }),
  output: BatchExecution,
  annotations: READ,
  handler: async ({ batch_execution_id }, ctx) => withProviderBatches(ctx.store, batchToWire(await withLiveSummary(ctx.store, await getVisibleBatch(ctx, batch_execution_id)))),
});

export const listBatchResultsOperation = defineTool({
  name: 'list_batch_results',
  title: 'A page of the rows of a batch run, in item order',
  description: 'Finished rows of a batch run in item order (not newest first): item_id or index, execution_log_id, score, evaluator_results, error.',
  input: z.object({ batch_execution_id: batchId, ...PageParams }),
  output: z.object({
    results: z.array(BatchRow).describe('rows, in item order'),
    next_cursor: z.string().nullable().describe('pass as `cursor` for the next page; null on the last page'),
  }),
  annotations: READ,
  handler: ({ batch_execution_id, ...q }, ctx) => listBatchResults(ctx, batch_execution_id, q, ctx.config.limits.pageSize),
});

export const cancelBatchExecutionOperation = defineTool({
  name: 'cancel_batch_execution',
  title: 'Cancel a batch run',
  description:
    'Stops a batch run: rows not started are never scored; rows in flight finish and are kept. A run that has ended (completed, failed, cancelled) answers 409 conflict.',
  input: z.object({ batch_execution_id: batchId }),
  output: BatchExecution,
  annotations: WRITE,
  handler: ({ batch_execution_id }, ctx) => cancelBatch(ctx, batch_execution_id),
});
