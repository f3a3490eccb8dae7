// REST-only: GET /v1/judges/batch-executions/compare/?a=&b= (SPEC section 9). Two batch runs of the
// caller's organization over the same dataset are paired by item (runs over given items, by
// position) and compared per evaluator with a paired bootstrap (src/batch/experiments.ts). Never an
// MCP tool: the 14 tools stay as they are.
import { z } from 'zod';
import { getVisibleBatch } from '../batch/batches.ts';
import { compareRuns, RunCollector, type PairBy } from '../batch/experiments.ts';
import { TribunalError, validationError } from '../errors.ts';
import type { RequestContext } from '../context.ts';
import { defineTool } from '../tool.ts';
import { READ } from './annotations.ts';

const runId = (which: string) => z.string().min(1).max(200).describe(`id of batch run ${which}`);
const num = z.number().nullable();

const Stats = {
  n: z.number().int().describe('pairs where both runs have a score'),
  mean_a: num.describe('mean score in run a over those pairs; null when n = 0'),
  mean_b: num.describe('mean score in run b over those pairs'),
  delta: num.describe('mean_b - mean_a'),
  ci_low: num.describe('lower end of the 95% paired-bootstrap interval of delta'),
  ci_high: num.describe('upper end of that interval'),
  wins_a: z.number().int().describe('pairs where a scored higher'),
  wins_b: z.number().int().describe('pairs where b scored higher'),
  ties: z.number().int().describe('pairs with equal scores'),
  verdict: z.enum(['improved', 'regressed', 'unclear', 'no_pairs']).describe('improved: the interval is above 0; regressed: wholly below 0; unclear: it holds 0'),
};

const RunBrief = z.object({
  id: z.string(),
  judge_id: z.string().nullable(),
  judge_version: z.number().int().nullable(),
  evaluator_id: z.string().nullable(),
  dataset_id: z.string().nullable(),
  status: z.string(),
  total: z.number().int(),
  done: z.number().int(),
  failed: z.number().int(),
});

const EvaluatorRef = z.object({ evaluator_id: z.string(), evaluator_name: z.string() });

export const ExperimentComparison = z.object({
  a: RunBrief.describe('run a (the baseline)'),
  b: RunBrief.describe('run b (the candidate)'),
  paired_by: z.enum(['item_id', 'position']).describe('item_id for runs over a dataset; position for runs over given items'),
  pairs: z.number().int().describe('rows present in both runs'),
  unpaired_a: z.number().int().describe('rows of a with no partner in b'),
  unpaired_b: z.number().int().describe('rows of b with no partner in a'),
  resamples: z.number().int().describe('bootstrap resamples'),
  confidence: z.number().describe('confidence level of the intervals (0.95)'),
  seed: z.number().int().describe('seed of the bootstrap: the same runs always give the same interval'),
  evaluators: z.array(z.object({ ...EvaluatorRef.shape, ...Stats })).describe('per evaluator both runs have'),
  overall: z.object(Stats).describe('the row score (the judge score of each item), compared the same way'),
  only_in_a: z.array(EvaluatorRef).describe('evaluators only run a has (not compared)'),
  only_in_b: z.array(EvaluatorRef).describe('evaluators only run b has (not compared)'),
  moved: z
    .array(
      z.object({
        item_id: z.string().nullable(),
        position_a: z.number().int(),
        position_b: z.number().int(),
        score_a: num,
        score_b: num,
        delta: z.number(),
        execution_log_id_a: z.string().nullable(),
        execution_log_id_b: z.string().nullable(),
      }),
    )
    .describe('the items whose row score changed most, largest change first'),
});

const ENDED = new Set(['completed', 'failed', 'cancelled']);

type Batch = Awaited<ReturnType<typeof getVisibleBatch>>;

const brief = (r: Batch) => ({
  id: r.id,
  judge_id: r.judge_id ?? null,
  judge_version: r.judge_version ?? null,
  evaluator_id: r.evaluator_id ?? null,
  dataset_id: r.dataset_id ?? null,
  status: r.status,
  total: r.total,
  done: r.done,
  failed: r.failed,
});

/** Rows read per page: large, as every row of both runs is read anyway (a page is a file open and read, or a query). */
const PAGE = 5000;

async function collect(ctx: RequestContext, id: string) {
  const c = new RunCollector();
  // The rows' scores only: a run's justifications are most of its bytes and play no part here. A
  // page at a time, each page's rows added in a plain loop: an async iterator's step per row (a
  // promise and a turn of the event loop each) cost more than adding the row.
  for (let after: number | undefined; ; ) {
    const page = await ctx.store.listBatchRowScores(id, { limit: PAGE, after });
    for (const row of page.items) c.add(row);
    if (page.last === undefined) return c.finish();
    after = page.last;
  }
}

// Two completed runs never change (a cancelled or failed one may still record rows that were in
// flight), so their comparison is kept (a few, most recently used): a page that
// is opened again answers without reading 2 x n rows from the store, which costs far more than the
// statistics (docs/BENCHMARKS.md). The visibility and status checks still run on every request.
const RECENT = 16;
const recent = new Map<string, ReturnType<typeof compareRuns>>();

export async function compareBatches(ctx: RequestContext, input: { a: string; b: string; top?: number }) {
  if (input.a === input.b) throw validationError('a and b are the same batch run: give two runs to compare.', [{ field: 'b', message: 'same run as a' }]);
  const [a, b] = [await getVisibleBatch(ctx, input.a), await getVisibleBatch(ctx, input.b)];
  let by: PairBy;
  if (a.dataset_id && b.dataset_id && a.dataset_id === b.dataset_id) by = 'item_id';
  else if (!a.dataset_id && !b.dataset_id) by = 'position';
  else {
    const over = (r: Batch) => (r.dataset_id ? `dataset ${r.dataset_id}` : 'items given in the request');
    throw validationError(
      `runs ${a.id} (over ${over(a)}) and ${b.id} (over ${over(b)}) are not over the same dataset: an experiment pairs the rows of two runs over one dataset item by item (or two runs over given items, by position).`,
      [{ field: 'b', message: 'not over the same dataset as a' }],
    );
  }
  for (const r of [a, b]) {
    if (!ENDED.has(r.status)) {
      throw new TribunalError('conflict', 409, `batch run ${r.id} is ${r.status} (${r.done + r.failed} of ${r.total} rows finished): compare the runs once both have ended.`);
    }
  }
  const cacheKey = `${a.id} ${b.id} ${input.top ?? 10}`;
  let comparison = recent.get(cacheKey);
  if (comparison) recent.delete(cacheKey);
  else {
    const [rowsA, rowsB] = await Promise.all([collect(ctx, a.id), collect(ctx, b.id)]);
    comparison = compareRuns(rowsA, rowsB, { by, top: input.top ?? 10 });
  }
  if (a.status === 'completed' && b.status === 'completed') recent.set(cacheKey, comparison);
  if (recent.size > RECENT) recent.delete(recent.keys().next().value!);
  return { a: brief(a), b: brief(b), ...comparison };
}

export const compareBatchesOperation = defineTool({
  name: 'compare_batch_executions',
  title: 'Compare two batch runs over the same dataset (an experiment)',
  description:
    'Pairs the rows of two ended batch runs by dataset item (or by position for runs over given items) and answers per evaluator the two means, delta = b - a with a 95% paired-bootstrap interval, wins, ties, and the items that moved most.',
  input: z.object({
    a: runId('a (the baseline)'),
    b: runId('b (the candidate)'),
    top: z.number().int().min(0).max(100).optional().describe('items that moved most to list (default 10)'),
  }),
  output: ExperimentComparison,
  annotations: READ,
  handler: (input, ctx) => compareBatches(ctx, input),
});
