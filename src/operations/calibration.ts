// REST-only operations on calibration runs (SPEC section 8): start one (202: its batch runs in the
// background), list, read (status follows the batch; metrics once it completed), the items by
// largest disagreement, and turning chosen disagreements into demonstrations. Never registered with MCP.
import { z } from 'zod';
import { demonstrationsFromRun } from '../calibration/improve.ts';
import { getCalibrationRun, listCalibrationRuns, listRunItems, startCalibrationRun } from '../calibration/runs.ts';
import { page, PageParams } from '../schemas.ts';
import { CalibrationRun, CalibrationRunStatus } from '../schemas/calibration.ts';
import { defineTool } from '../tool.ts';
import { estimateCalibration } from '../budgets/operations.ts';
import { READ, WRITE } from './annotations.ts';

const runId = z.string().min(1).describe('id of the calibration run');

export const startCalibrationRunOperation = defineTool({
  name: 'start_calibration_run',
  title: 'Measure a judge (or one evaluator) against human labels',
  description:
    "Runs the judge over a dataset whose items carry expected_scores (a person's score per evaluator id or exact name) as a batch, then compares: " +
    "MAE, RMSE, Pearson, Spearman, Cohen's kappa, accuracy and the majority baseline per evaluator. Answers 202 with the run; poll it until completed.",
  input: z.object({
    judge_id: z.string().min(1).optional().describe('id or exact name of the judge to measure (give this or evaluator_id)'),
    evaluator_id: z.string().min(1).optional().describe('id or exact name of the single evaluator to measure (give this or judge_id)'),
    dataset_id: z.string().min(1).describe('id or exact name of a dataset whose items carry expected_scores'),
    threshold: z.number().min(0).max(1).optional().describe('score >= threshold is a pass, for kappa, accuracy and the confusion matrix (default 0.5)'),
    // Cost (room h-cost, docs/COST.md)
    dry_run: z.boolean().optional().describe('true: answer 200 with the estimated calls, tokens and cost (live, cached, provider batch) without running or calling a model'),
    mode: z
      .enum(['live', 'provider_batch'])
      .optional()
      .describe("live (default), or provider_batch: the batch's model calls go through the provider's batch API at half price; refused when a model has none"),
  }),
  output: CalibrationRun,
  annotations: WRITE,
  handler: async ({ dry_run, ...input }, ctx) => (dry_run ? ((await estimateCalibration(ctx, input)) as never) : startCalibrationRun(ctx, input)),
});

export const listCalibrationRunsOperation = defineTool({
  name: 'list_calibration_runs',
  title: "List your organization's calibration runs, newest first",
  description: 'Calibration runs, newest first; filter by judge, evaluator (runs that measured it), dataset or status.',
  input: z.object({
    ...PageParams,
    judge_id: z.string().optional().describe('only runs of this judge (id or exact name)'),
    evaluator_id: z.string().optional().describe('only runs that measured this evaluator, alone or in a judge (id or exact name)'),
    dataset_id: z.string().optional().describe('only runs over this dataset (id or exact name)'),
    status: CalibrationRunStatus.optional(),
  }),
  output: page(CalibrationRun),
  annotations: READ,
  handler: (input, ctx) => listCalibrationRuns(ctx, input, ctx.config.limits.pageSize),
});

export const getCalibrationRunOperation = defineTool({
  name: 'get_calibration_run',
  title: 'Read a calibration run and its metrics',
  description: "One calibration run: its status follows its batch; metrics appear once it completed, next to the previous run's (previous_metrics).",
  input: z.object({ calibration_run_id: runId }),
  output: CalibrationRun,
  annotations: READ,
  handler: ({ calibration_run_id }, ctx) => getCalibrationRun(ctx, calibration_run_id),
});

export const CalibrationItem = z.object({
  item_id: z.string().describe('the dataset item'),
  evaluator_id: z.string().describe('the evaluator'),
  expected: z.number().describe("the person's score"),
  score: z.number().nullable().describe("the judge's score; null when the evaluator failed on this item"),
  difference: z.number().nullable().describe('score - expected; null when the judge gave no score'),
  justification: z.string().nullable().describe("the judge's justification (or why it failed)"),
  execution_log_id: z.string().nullable().describe('the run of this item (its log page)'),
  note: z.string().nullable().describe("the person's note, when the item carries one (metadata.notes or metadata.note)"),
});

export const listCalibrationItemsOperation = defineTool({
  name: 'list_calibration_items',
  title: 'The items of a calibration run, largest disagreement first',
  description:
    "Per item and evaluator: the person's score, the judge's, the difference and the justification, largest absolute difference first (items the judge did not score last). Empty until the run completed.",
  input: z.object({ calibration_run_id: runId, evaluator_id: z.string().optional().describe('only this evaluator (id or name)'), ...PageParams }),
  output: z.object({
    status: CalibrationRunStatus,
    results: z.array(CalibrationItem).describe('largest absolute difference first'),
    next_cursor: z.string().nullable().describe('pass as `cursor` for the next page; null on the last page'),
  }),
  annotations: READ,
  handler: ({ calibration_run_id, ...q }, ctx) => listRunItems(ctx, calibration_run_id, q, ctx.config.limits.pageSize),
});

export const calibrationDemonstrationsOperation = defineTool({
  name: 'add_calibration_demonstrations',
  title: 'Teach an evaluator from chosen disagreements (a new version)',
  description:
    "Each chosen item becomes a demonstration of its evaluator with the person's score (and note, when the item carries one) — an ordinary edit, so the evaluator gets a new version. " +
    'Run the calibration again on the same dataset to see the change side by side.',
  input: z.object({
    calibration_run_id: runId,
    items: z
      .array(z.object({ item_id: z.string().min(1).describe('a dataset item of the run'), evaluator_id: z.string().min(1).describe('the evaluator to teach (id or name)') }))
      .min(1)
      .max(20)
      .describe('the disagreements to turn into demonstrations (1..20)'),
  }),
  output: z.object({
    evaluators: z.array(
      z.object({
        evaluator_id: z.string(),
        evaluator_name: z.string(),
        version: z.number().int().describe('the version now (new when demonstrations were added)'),
        added: z.number().int().describe('demonstrations added (an identical one already there is not added twice)'),
        demonstrations: z.number().int().describe('demonstrations it holds now'),
      }),
    ),
    next: z.string().describe('what to do next'),
  }),
  annotations: WRITE,
  handler: ({ calibration_run_id, items }, ctx) => demonstrationsFromRun(ctx, calibration_run_id, items),
});
