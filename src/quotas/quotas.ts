// Per-organization quotas (issue 24, item 3; docs/DEPLOYMENT.md, "Security"): stored items, datasets,
// batch runs queued or running at once, and batch rows started per day. Demo organizations get far
// lower limits. Checked before the work starts, from what the store already counts (a dataset's
// item_count, the org's runs): over a limit is a 413 (what is stored) or a 429 (what runs), naming the
// limit and its setting. Concurrent requests may pass a limit by what they add at once; the next is refused.
import type { RequestContext } from '../context.ts';
import type { Config } from '../config.ts';
import { TribunalError } from '../errors.ts';
import type { PageQuery } from '../store/types.ts';

type Ctx = Pick<RequestContext, 'store' | 'caller' | 'config'>;

export interface QuotaLimits {
  items: number;
  datasets: number;
  runningBatches: number;
  rowsPerDay: number;
  /** Attachments held (h-attach, src/files/): how many and their bytes in all. */
  files: number;
  fileBytes: number;
}

/** The limits that apply to the caller's organization. */
export function quotaLimits(config: Config, org: { is_demo: boolean }): QuotaLimits {
  return org.is_demo ? config.quotas.demo : config.quotas.org;
}

export const setting = (org: { is_demo: boolean }, name: string) => `TRIBUNAL_${org.is_demo ? 'DEMO_' : ''}QUOTA_${name}`;

/** The organization's datasets and the items they hold, paged through its datasets (at most `datasets` of them). */
export async function storedUsage(ctx: Ctx): Promise<{ datasets: number; items: number }> {
  let datasets = 0;
  let items = 0;
  let after: PageQuery['after'];
  do {
    const page = await ctx.store.listDatasets({ org_id: ctx.caller.org.id }, { limit: 200, after });
    datasets += page.items.length;
    for (const d of page.items) items += d.item_count;
    after = page.last;
  } while (after);
  return { datasets, items };
}

/** Refuses a new dataset once the organization holds its limit. */
export async function checkDatasetQuota(ctx: Ctx): Promise<void> {
  const limit = quotaLimits(ctx.config, ctx.caller.org).datasets;
  const { datasets } = await storedUsage(ctx);
  if (datasets >= limit) {
    throw new TribunalError(
      'payload_too_large',
      413,
      `This organization holds ${datasets} datasets, its limit (${setting(ctx.caller.org, 'DATASETS')}=${limit}); delete a dataset before creating another.`,
      {
        extra: { limit: 'datasets', limit_value: limit, used: datasets },
      },
    );
  }
}

function itemsOver(ctx: Ctx, used: number, limit: number, adding?: number): TribunalError {
  return new TribunalError(
    'payload_too_large',
    413,
    `This organization holds ${used} dataset items${adding ? ` and this request adds ${adding}` : ''}, over its limit of ${limit} (${setting(ctx.caller.org, 'ITEMS')}); delete items or datasets first.`,
    { extra: { limit: 'items', limit_value: limit, used } },
  );
}

/** How many more items the organization may store; a 413 when none, or when `adding` is more than that. */
export async function itemAllowance(ctx: Ctx, adding?: number): Promise<number> {
  const limit = quotaLimits(ctx.config, ctx.caller.org).items;
  const { items } = await storedUsage(ctx);
  const left = Math.max(0, limit - items);
  if (left === 0 || (adding !== undefined && adding > left)) throw itemsOver(ctx, items, limit, adding);
  return left;
}

/** The error an import ends with when it reaches the item limit part way (what was stored is kept). */
export function importOverQuota(ctx: Ctx, created: number): TribunalError {
  const limit = quotaLimits(ctx.config, ctx.caller.org).items;
  return new TribunalError(
    'payload_too_large',
    413,
    `The import stopped at this organization's limit of ${limit} dataset items (${setting(ctx.caller.org, 'ITEMS')}); ${created} items of this file were stored, the rest was not read.`,
    {
      extra: { limit: 'items', limit_value: limit, created },
    },
  );
}

/** Refuses a batch run of `rows` rows when the org has its limit of runs in flight, or of rows today. */
export async function checkBatchQuota(ctx: Ctx, rows: number): Promise<void> {
  const limits = quotaLimits(ctx.config, ctx.caller.org);
  const org = ctx.caller.org;
  let inFlight = 0;
  for (const status of ['queued', 'running'] as const) {
    const page = await ctx.store.listBatchExecutions({ org_id: org.id, status }, { limit: limits.runningBatches + 1 });
    inFlight += page.items.length;
  }
  if (inFlight >= limits.runningBatches) {
    throw new TribunalError(
      'rate_limited',
      429,
      `This organization has ${inFlight} batch runs queued or running, its limit (${setting(org, 'RUNNING_BATCHES')}=${limits.runningBatches}); wait for one to finish or cancel one.`,
      {
        extra: { limit: 'running_batches', limit_value: limits.runningBatches, used: inFlight },
      },
    );
  }
  const since = new Date(Date.now() - 86_400_000).toISOString();
  let today = 0;
  let after: PageQuery['after'];
  do {
    const page = await ctx.store.listBatchExecutions({ org_id: org.id, date_from: since }, { limit: 200, after });
    for (const b of page.items) today += b.total;
    after = page.last;
  } while (after && today + rows <= limits.rowsPerDay);
  if (today + rows > limits.rowsPerDay) {
    throw new TribunalError(
      'rate_limited',
      429,
      `This run's ${rows} rows would bring this organization's batch rows in the last 24 hours to ${today + rows}, over its limit of ${limits.rowsPerDay} (${setting(org, 'ROWS_PER_DAY')}); try again later or with fewer rows.`,
      {
        headers: { 'retry-after': '3600' },
        extra: { limit: 'rows_per_day', limit_value: limits.rowsPerDay, used: today },
      },
    );
  }
}
