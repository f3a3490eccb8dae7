// Batch runs (SPEC section 7): a run, its per-evaluator summary and its rows. Kept beside
// src/schemas.ts, whose building blocks it uses.
import { z } from 'zod';
import { EvaluatorResult, id, timestamp } from '../schemas.ts';

export const BATCH_STATUSES = ['queued', 'running', 'completed', 'failed', 'cancelled'] as const;
export const BatchStatus = z
  .enum(BATCH_STATUSES)
  .describe('queued: waiting to start; running; completed: every row scored or failed; failed: stopped (see error); cancelled: stopped by a caller');
export type BatchStatus = z.infer<typeof BatchStatus>;

export const BatchEvaluatorSummary = z.object({
  evaluator_id: z.string().describe('id of the evaluator'),
  evaluator_name: z.string().describe('name of the evaluator'),
  n: z.number().int().describe('rows this evaluator scored'),
  mean: z.number().nullable().describe('mean score over the scored rows; null when none'),
  min: z.number().nullable().describe('lowest score; null when none'),
  max: z.number().nullable().describe('highest score; null when none'),
  errors: z.number().int().describe('rows where this evaluator failed (no score)'),
});
export type BatchEvaluatorSummary = z.infer<typeof BatchEvaluatorSummary>;

export const BatchExecution = z.object({
  id: id('batch execution'),
  judge_id: z.string().nullable().describe('the judge run over the items; null when one evaluator is run'),
  judge_version: z.number().int().nullable().describe('the judge version every row uses'),
  evaluator_id: z.string().nullable().describe('the evaluator run over the items, when no judge is'),
  dataset_id: z.string().nullable().describe('the dataset run over; null when the items were given in the request'),
  status: BatchStatus,
  total: z.number().int().describe('rows in the run'),
  done: z.number().int().describe('rows finished with a score'),
  failed: z.number().int().describe('rows finished without a score (bad input, model failure, item gone)'),
  started_at: timestamp.nullable().describe('when the first row started'),
  finished_at: timestamp.nullable().describe('when the run ended (completed, failed or cancelled)'),
  cost_usd: z.number().nullable().describe("sum of the rows' costs in USD so far; null when a cost is unknown"),
  summary: z.array(BatchEvaluatorSummary).describe('per evaluator: rows scored, mean, min, max, errors'),
  tags: z.array(z.string()).describe('labels added to every row log'),
  use_cache: z.boolean().describe('rows may reuse a cached result for the same inputs'),
  error: z.string().nullable().describe('why the run failed; null otherwise'),
  created_at: timestamp,
  // Issue 32 (docs/COST.md): live calls, or the provider's batch API.
  mode: z.enum(['live', 'provider_batch']).optional().describe("live (default): live model calls; provider_batch: the calls go through the provider's batch API at its batch rate"),
  provider_batches: z
    .array(
      z.object({
        id: z.string().describe("the provider's batch id (Tribunal's own pbt_ id while it is being submitted)"),
        status: z.enum(['submitting', 'in_progress', 'canceling', 'ended', 'failed']).describe('where the provider batch is'),
        requests: z.number().int().describe('model calls it carries'),
      }),
    )
    .optional()
    .describe('provider_batch mode: the provider batches of the run, oldest first'),
});
export type BatchExecution = z.infer<typeof BatchExecution>;

/** One row of a batch, in item order. */
export const BatchRow = z.object({
  position: z.number().int().describe('0-based place of the row in the run (item order)'),
  item_id: z.string().nullable().describe('the dataset item, for a run over a dataset'),
  index: z.number().int().nullable().describe('index into the given items, for a run over items given in the request'),
  execution_log_id: z.string().nullable().describe('the execution log of the row; null when nothing was run'),
  score: z.number().nullable().describe('the row score; null when it failed'),
  evaluator_results: z.array(EvaluatorResult).describe('one entry per evaluator'),
  error: z.string().nullable().describe('why the row has no score'),
});
export type BatchRow = z.infer<typeof BatchRow>;
export const BatchResult = BatchRow;
export type BatchResult = BatchRow;
