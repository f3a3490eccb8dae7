// dry_run: true on a batch or calibration run (room h-cost, SPEC section 18): what the run would
// cost, from the real prompts of every item, without storing a run or calling a model.
import { z } from 'zod';
import type { RequestContext } from '../context.ts';
import { getOwnDataset } from '../datasets/datasets.ts';
import type { DatasetItemInput } from '../schemas.ts';
import type { EvaluatorRecord } from '../store/types.ts';
import { callPricings, DEFAULT_OUTPUT_TOKENS, RunTally, type CostEstimate } from './estimate.ts';

export const CostEstimateSchema = z.object({
  dry_run: z.literal(true).describe('nothing was run or stored; these are estimates'),
  calls: z.number().int().describe('model calls the run would make (one per item and evaluator; a jury one per juror)'),
  input_tokens: z.number().int().describe('prompt tokens, counted from the real prompts at about 4 characters a token'),
  output_tokens: z.number().int().describe(`answer tokens: each evaluator's recent average from its logs, else ${DEFAULT_OUTPUT_TOKENS} a call`),
  cost_usd: z
    .object({
      live: z.number().nullable().describe('every call live, without prompt caching'),
      cached: z.number().nullable().describe("live with the provider's prompt cache holding each evaluator's static prompt"),
      provider_batch: z.number().nullable().describe('through the provider batch API (half price) with caching; null where the model has no batch API'),
    })
    .describe('USD; a cost is null where a model has no price'),
});

/** Counts the calls, tokens and cost of running these evaluators over a dataset (streamed a page at a time) or given items. */
export async function estimateRun(
  ctx: Pick<RequestContext, 'store' | 'caller' | 'config'>,
  evaluators: EvaluatorRecord[],
  source: { dataset_id: string } | { items: DatasetItemInput[] },
): Promise<CostEstimate & { dry_run: true }> {
  const tally = new RunTally(ctx, evaluators, await callPricings(ctx, evaluators));
  if ('items' in source) {
    for (const item of source.items) tally.add(item);
  } else {
    const dataset = await getOwnDataset(ctx, source.dataset_id);
    let after: number | undefined;
    for (;;) {
      const page = await ctx.store.listDatasetItems(dataset.id, { limit: 500, after });
      for (const item of page.items) tally.add(item);
      if (page.last === undefined || !page.items.length) break;
      after = page.last;
    }
  }
  return { dry_run: true, ...tally.result };
}
