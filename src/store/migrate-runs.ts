// The second half of `tribunal migrate --from json --to postgres` (migrate-json.ts): datasets with
// their items, batch runs with their rows and inline items, and calibration runs (which point at
// both, so they come last). Everything is read and written a page at a time, never whole, and
// through the Store interface on both sides.
//
// - Ids, positions and order are kept: items keep their ids and their order, rows their positions.
// - Safe to re-run: a dataset already in PostgreSQL gets only the items it lacks (the first
//   `item_count` are those an earlier run added, in order); a batch run only the rows it lacks
//   (recordBatchRow skips a position recorded already); a calibration run already there is kept.
// - A batch run's counters move in PostgreSQL as rows are recorded, so it is created with the part
//   of done/failed its rows do not account for (nothing, in a consistent directory), and its cost
//   is set to the source's once its rows are in (the sums are rounded alike, but need not be).
// - A run still queued or running is copied as it is, with its planner reset (planned 0, no
//   cursor): the JSON runner plans every resumed run again from its first row too, and its dataset
//   cursor is a JSON position, not a PostgreSQL one. The first PostgreSQL instance to start picks
//   it up, skipping the rows already recorded (and reusing their logs).
import type { DatasetItemInput } from '../schemas.ts';
import { StoreConflictError, type BatchExecutionRecord, type CalibrationRunRecord, type DatasetRecord, type Page, type PageQuery, type Store } from './types.ts';

export type RunKind = 'datasets' | 'dataset_items' | 'batch_executions' | 'batch_rows' | 'batch_items' | 'calibration_runs';
export const RUN_KINDS: RunKind[] = ['datasets', 'dataset_items', 'batch_executions', 'batch_rows', 'batch_items', 'calibration_runs'];

export interface RunsContext {
  source: Store;
  target: Store;
  orgIds: string[];
  batchSize: number;
  counts: Record<RunKind, { source: number; copied: number; verified: number }>;
  mismatches: string[];
  /** Counts `want` verified when `got` equals it (migrate-json.ts's canonical form), else lists the difference. */
  compare: (kind: RunKind, label: string, want: unknown, got: unknown) => void;
  equal: (a: unknown, b: unknown) => boolean;
  log: (line: string) => void;
}

type Cursored<T> = (after: number | undefined) => Promise<{ items: T[]; last?: number }>;

/** Every element of a positioned listing (dataset items, batch rows), a page at a time. */
async function* paged<T>(page: Cursored<T>): AsyncGenerator<T[]> {
  let after: number | undefined;
  for (;;) {
    const p = await page(after);
    if (p.items.length) yield p.items;
    if (p.last === undefined) return;
    after = p.last;
  }
}

async function* flat<T>(pages: AsyncGenerator<T[]>): AsyncGenerator<T> {
  for await (const page of pages) yield* page;
}

async function listAll<T extends { created_at: string; id: string }>(list: (p: PageQuery) => Promise<Page<T>>): Promise<T[]> {
  const out: T[] = [];
  let after: PageQuery['after'];
  do {
    const page = await list({ limit: 500, after });
    out.push(...page.items);
    after = page.last;
  } while (after);
  return out;
}

const oldestFirst = <T extends { created_at: string; id: string }>(a: T, b: T) =>
  a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;

/**
 * Compares two positioned listings element by element (both in order), each read a page at a time;
 * counts the source's elements. Elements missing in PostgreSQL are told once per owner, not one by one.
 */
async function compareListings<T>(ctx: RunsContext, kind: RunKind, owner: string, want: Cursored<T>, got: Cursored<T>, label: (x: T) => string): Promise<void> {
  const stored = flat(paged(got));
  let missing = 0;
  for await (const w of flat(paged(want))) {
    ctx.counts[kind].source++;
    const g = await stored.next();
    if (g.done) missing++;
    else ctx.compare(kind, `${owner} ${label(w)}`, w, g.value);
  }
  let extra = 0;
  while (!(await stored.next()).done) extra++;
  if (missing) ctx.mismatches.push(`${kind}: ${missing} of ${owner} missing in PostgreSQL`);
  if (extra) ctx.mismatches.push(`${kind}: ${owner} has ${extra} more in PostgreSQL than in the JSON data`);
}

/** The record as PostgreSQL should hold it: an unfinished run's planner starts again from its first row. */
export function batchForPostgres(b: BatchExecutionRecord): BatchExecutionRecord {
  return b.status === 'queued' || b.status === 'running' ? { ...b, planned: 0, planned_all: false, plan_cursor: null } : b;
}

/** True when the record in PostgreSQL under this id is this one (copied by an earlier run), not a stranger. */
const sameOrigin = (ctx: RunsContext, a: { org_id: string; created_at: string }, b: { org_id: string; created_at: string }) =>
  a.org_id === b.org_id && ctx.equal({ created_at: a.created_at }, { created_at: b.created_at });

async function copyDataset(ctx: RunsContext, d: DatasetRecord): Promise<void> {
  const { source, target: t, counts } = ctx;
  let existing = await t.getDataset(d.id);
  if (!existing) {
    try {
      await t.createDataset(d);
      counts.datasets.copied++;
    } catch (err) {
      if (!(err instanceof StoreConflictError)) throw err;
      ctx.mismatches.push(`datasets: ${d.id} not copied: ${err.message}`);
      return;
    }
    existing = { ...d, item_count: 0 };
  } else if (!sameOrigin(ctx, existing, d)) {
    ctx.mismatches.push(`datasets: ${d.id} not copied: another dataset with this id is in PostgreSQL`);
    return;
  }
  // The first item_count items are those an earlier run added (all or none per page, in order).
  let skip = existing.item_count;
  for await (const page of paged((after) => source.listDatasetItems(d.id, { limit: ctx.batchSize, after }))) {
    const fresh = page.slice(Math.min(skip, page.length));
    skip -= page.length - fresh.length;
    if (!fresh.length) continue;
    try {
      if (!(await t.addDatasetItems(d.id, fresh))) throw new Error(`dataset ${d.id} vanished from PostgreSQL during the copy`);
      counts.dataset_items.copied += fresh.length;
    } catch (err) {
      if (!(err instanceof StoreConflictError)) throw err;
      ctx.mismatches.push(`dataset_items: items of ${d.id} not copied: ${err.message}`);
      // Keep counting the source, but add nothing after a gap: the order would be wrong.
      skip = Infinity;
    }
  }
  // Adding items touched updated_at: give it back the source's.
  const now = await t.getDataset(d.id);
  if (now && !ctx.equal({ updated_at: now.updated_at }, { updated_at: d.updated_at })) await t.updateDataset(d.id, { updated_at: d.updated_at });
}

async function inlineItems(source: Store, b: BatchExecutionRecord, pageSize: number): Promise<DatasetItemInput[]> {
  // At most MAX_INLINE_ITEMS (1,000) per run: the store takes them in one call, as the request did.
  const items: DatasetItemInput[] = [];
  for (;;) {
    const page = await source.getBatchItems(b.id, items.length, pageSize);
    items.push(...page);
    if (page.length < pageSize) return items;
  }
}

async function copyBatch(ctx: RunsContext, b: BatchExecutionRecord): Promise<void> {
  const { source, target: t, counts } = ctx;
  const rows = (after: number | undefined) => source.listBatchRows(b.id, { limit: ctx.batchSize, after });
  const inline = b.dataset_id === null ? await inlineItems(source, b, ctx.batchSize) : [];
  const existing = await t.getBatchExecution(b.id);
  if (!existing) {
    // Recording the rows moves done/failed/cost: start from what the rows do not account for.
    let done = 0;
    let failed = 0;
    for await (const page of paged(rows)) for (const r of page) r.score !== null ? done++ : failed++;
    const record = { ...batchForPostgres(b), done: b.done - done, failed: b.failed - failed, cost_usd: b.cost_usd === null ? null : 0 };
    try {
      await t.createBatchExecution(record, inline.length ? inline : undefined);
      counts.batch_executions.copied++;
      counts.batch_items.copied += inline.length;
    } catch (err) {
      if (!(err instanceof StoreConflictError)) throw err;
      ctx.mismatches.push(`batch_executions: ${b.id} not copied: ${err.message}`);
      return;
    }
  } else if (!sameOrigin(ctx, existing, b)) {
    ctx.mismatches.push(`batch_executions: ${b.id} not copied: another batch run with this id is in PostgreSQL`);
    return;
  }
  for await (const page of paged(rows)) {
    // Rows of a page in parallel (a few connections): the counters move in SQL, so none is lost.
    for (let i = 0; i < page.length; i += 16) {
      const recorded = await Promise.all(page.slice(i, i + 16).map((r) => t.recordBatchRow(b.id, r)));
      counts.batch_rows.copied += recorded.filter(Boolean).length;
    }
  }
  const now = await t.getBatchExecution(b.id);
  if (now && now.cost_usd !== b.cost_usd) await t.updateBatchExecution(b.id, { cost_usd: b.cost_usd });
}

async function copyCalibrationRun(ctx: RunsContext, r: CalibrationRunRecord): Promise<void> {
  try {
    await ctx.target.createCalibrationRun(r);
    ctx.counts.calibration_runs.copied++;
  } catch (err) {
    if (!(err instanceof StoreConflictError)) throw err;
    // Copied by an earlier run (nothing to copy); anything else is a difference.
    if (!ctx.equal(await ctx.target.getCalibrationRun(r.id), r)) ctx.mismatches.push(`calibration_runs: ${r.id} not copied: ${err.message}`);
  }
}

/** Copies datasets, batch runs and calibration runs, then reads each back and compares. */
export async function migrateRuns(ctx: RunsContext): Promise<void> {
  const { source, target: t, counts } = ctx;
  const datasets: DatasetRecord[] = [];
  const batches: BatchExecutionRecord[] = [];
  const calibrations: CalibrationRunRecord[] = [];
  for (const org_id of ctx.orgIds) {
    datasets.push(...(await listAll((p) => source.listDatasets({ org_id }, p))));
    batches.push(...(await listAll((p) => source.listBatchExecutions({ org_id }, p))));
    calibrations.push(...(await listAll((p) => source.listCalibrationRuns({ org_id }, p))));
  }
  for (const list of [datasets, batches, calibrations]) list.sort(oldestFirst);
  counts.datasets.source = datasets.length;
  counts.batch_executions.source = batches.length;
  counts.calibration_runs.source = calibrations.length;
  ctx.log(`Read ${datasets.length} datasets, ${batches.length} batch runs, ${calibrations.length} calibration runs.`);

  for (const d of datasets) await copyDataset(ctx, d);
  for (const b of batches) await copyBatch(ctx, b);
  for (const r of calibrations) await copyCalibrationRun(ctx, r);
  ctx.log(
    `Copied ${counts.datasets.copied} datasets (${counts.dataset_items.copied} items), ${counts.batch_executions.copied} batch runs (${counts.batch_rows.copied} rows), ${counts.calibration_runs.copied} calibration runs.`,
  );

  // Verify, a page at a time on both sides.
  for (const d of datasets) {
    ctx.compare('datasets', d.id, d, await t.getDataset(d.id));
    const items = (s: Store) => (after: number | undefined) => s.listDatasetItems(d.id, { limit: ctx.batchSize, after });
    await compareListings(ctx, 'dataset_items', d.id, items(source), items(t), (i) => i.id);
  }
  for (const b of batches) {
    ctx.compare('batch_executions', b.id, batchForPostgres(b), await t.getBatchExecution(b.id));
    const rows = (s: Store) => (after: number | undefined) => s.listBatchRows(b.id, { limit: ctx.batchSize, after });
    await compareListings(ctx, 'batch_rows', b.id, rows(source), rows(t), (r) => `row ${r.position}`);
    if (b.dataset_id === null) {
      const items = (s: Store) => async (after: number | undefined) => {
        const from = after === undefined ? 0 : after + 1;
        const page = await s.getBatchItems(b.id, from, ctx.batchSize);
        return { items: page, last: page.length === ctx.batchSize ? from + page.length - 1 : undefined };
      };
      let n = 0;
      await compareListings(ctx, 'batch_items', b.id, items(source), items(t), () => `item ${n++}`);
    }
  }
  for (const r of calibrations) ctx.compare('calibration_runs', r.id, r, await t.getCalibrationRun(r.id));
}
