// Datasets and their items (SPEC section 7): the core behind REST, the CLI and the web app.
// A dataset is its organization's alone; an unknown or foreign one is a 404, by id or by exact name.
import { checkFileIds } from '../files/files.ts';
import type { RequestContext } from '../context.ts';
import { notFound, TribunalError, validationError } from '../errors.ts';
import { looksLikeId, newId } from '../ids.ts';
import { conflictToError } from '../domain/conflicts.ts';
import { pageQuery, toPage } from '../domain/pagination.ts';
import { checkProjectFilter, resolveProjectId } from '../domain/projects.ts';
import type { Dataset, DatasetItem, DatasetItemInput } from '../schemas.ts';
import type { DatasetItemRecord, DatasetRecord } from '../store/types.ts';
import { itemShapeProblem } from './item-shape.ts';

type StoreCtx = Pick<RequestContext, 'store' | 'caller'>;

export const datasetToWire = ({ org_id: _org, ...wire }: DatasetRecord): Dataset => wire;

/** By id or exact name, within the caller's organization only. */
export async function getOwnDataset(ctx: StoreCtx, idOrName: string): Promise<DatasetRecord> {
  if (!looksLikeId(idOrName)) {
    const { items } = await ctx.store.listDatasets({ org_id: ctx.caller.org.id, name: idOrName }, { limit: 1 });
    if (items[0]) return items[0];
  } else {
    const found = await ctx.store.getDataset(idOrName);
    if (found && found.org_id === ctx.caller.org.id) return found;
  }
  throw notFound('Dataset', idOrName);
}

export async function createDataset(ctx: StoreCtx, input: { name: string; description?: string; project_id?: string }): Promise<Dataset> {
  const now = new Date().toISOString();
  const record: DatasetRecord = {
    id: newId('dst'),
    org_id: ctx.caller.org.id,
    project_id: await resolveProjectId(ctx, input.project_id),
    name: input.name,
    description: input.description ?? '',
    item_count: 0,
    created_at: now,
    updated_at: now,
  };
  try {
    await ctx.store.createDataset(record);
  } catch (err) {
    throw conflictToError(err, 'choose another name.');
  }
  return datasetToWire(record);
}

export async function listDatasets(ctx: StoreCtx, input: { limit?: number; cursor?: string; project_id?: string; search?: string }, maxPageSize: number) {
  await checkProjectFilter(ctx, input.project_id);
  const page = await ctx.store.listDatasets({ org_id: ctx.caller.org.id, project_id: input.project_id, search: input.search }, pageQuery(input, maxPageSize));
  return toPage(page, datasetToWire);
}

export async function updateDataset(ctx: StoreCtx, idOrName: string, patch: { name?: string; description?: string }): Promise<Dataset> {
  const dataset = await getOwnDataset(ctx, idOrName);
  let updated: DatasetRecord | null;
  try {
    updated = await ctx.store.updateDataset(dataset.id, { ...patch, updated_at: new Date().toISOString() });
  } catch (err) {
    throw conflictToError(err, 'choose another name.');
  }
  if (!updated) throw notFound('Dataset', idOrName);
  return datasetToWire(updated);
}

export async function deleteDataset(ctx: StoreCtx, idOrName: string): Promise<string> {
  const dataset = await getOwnDataset(ctx, idOrName);
  await ctx.store.deleteDataset(dataset.id);
  return dataset.id;
}

// Items

/** Items stored before conversations were accepted have no turns/system_prompt: they read as null. */
export const itemToWire = (item: DatasetItemRecord): DatasetItem => ({ ...item, turns: item.turns ?? null, system_prompt: item.system_prompt ?? null });

/** Refuses the whole call when any item cannot be run, naming every bad index. */
export function checkItemShapes(inputs: DatasetItemInput[]): void {
  const errors = inputs.flatMap((input, i) => {
    const problem = itemShapeProblem(input, `items.${i}.`);
    return problem ? [problem] : [];
  });
  if (errors.length) {
    throw validationError(
      `${errors.length === 1 ? 'One item' : `${errors.length} items`} cannot be run, nothing was added: ${errors.map((e) => `${e.field}: ${e.message}`).join('; ')}.`,
      errors,
    );
  }
}

export function newItem(input: DatasetItemInput, createdAt: string): DatasetItemRecord {
  return {
    id: newId('itm'),
    response: input.response ?? null,
    request: input.request ?? null,
    turns: input.turns ?? null,
    system_prompt: input.system_prompt ?? null,
    contexts: input.contexts ?? null,
    expected_output: input.expected_output ?? null,
    ...(input.attachments?.length ? { attachments: input.attachments } : {}), // h-attach
    tags: input.tags ?? [],
    metadata: input.metadata ?? {},
    expected_scores: input.expected_scores ?? null,
    created_at: createdAt,
  };
}

export async function addItems(ctx: StoreCtx, idOrName: string, inputs: DatasetItemInput[]): Promise<{ created: number; ids: string[] }> {
  checkItemShapes(inputs);
  const dataset = await getOwnDataset(ctx, idOrName);
  await checkFileIds(
    ctx,
    inputs.map((input, i) => ({ field: `items.${i}.attachments`, ids: input.attachments })),
  ); // h-attach
  const now = new Date().toISOString();
  const items = inputs.map((input) => newItem(input, now));
  if (!(await ctx.store.addDatasetItems(dataset.id, items))) throw notFound('Dataset', idOrName);
  return { created: items.length, ids: items.map((i) => i.id) };
}

/** Item cursors are the store's position of the last item: opaque to callers, checked on the way in. */
function itemCursor(cursor: string | undefined): number | undefined {
  if (cursor === undefined || cursor === '') return undefined;
  const match = /^i(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match) {
    throw validationError('cursor is not a cursor this server issued: pass `next_cursor` from the previous page unchanged.', [{ field: 'cursor', message: 'invalid cursor' }]);
  }
  return Number(match[1]);
}

export async function listItems(ctx: StoreCtx, idOrName: string, input: { limit?: number; cursor?: string }, maxPageSize: number) {
  const dataset = await getOwnDataset(ctx, idOrName);
  const { limit } = pageQuery({ limit: input.limit }, maxPageSize);
  const page = await ctx.store.listDatasetItems(dataset.id, { limit, after: itemCursor(input.cursor) });
  return { results: page.items.map(itemToWire), next_cursor: page.last === undefined ? null : Buffer.from(`i${page.last}`).toString('base64url') };
}

async function getOwnItem(ctx: StoreCtx, idOrName: string, itemId: string): Promise<{ dataset: DatasetRecord; item: DatasetItemRecord }> {
  const dataset = await getOwnDataset(ctx, idOrName);
  const item = await ctx.store.getDatasetItem(dataset.id, itemId);
  if (!item) throw notFound(`Item of dataset ${dataset.id}`, itemId);
  return { dataset, item };
}

export async function getItem(ctx: StoreCtx, idOrName: string, itemId: string): Promise<DatasetItem> {
  return itemToWire((await getOwnItem(ctx, idOrName, itemId)).item);
}

/** A patch sets the fields it names; `null` clears an optional one. */
export type ItemPatch = { [K in keyof DatasetItemInput]?: DatasetItemInput[K] | null };

export async function updateItem(ctx: StoreCtx, idOrName: string, itemId: string, patch: ItemPatch): Promise<DatasetItem> {
  const { dataset, item } = await getOwnItem(ctx, idOrName, itemId);
  const next: DatasetItemRecord = { ...itemToWire(item) };
  if (patch.response !== undefined) next.response = patch.response;
  if (patch.request !== undefined) next.request = patch.request;
  if (patch.turns !== undefined) next.turns = patch.turns;
  if (patch.system_prompt !== undefined) next.system_prompt = patch.system_prompt;
  if (patch.contexts !== undefined) next.contexts = patch.contexts;
  if (patch.expected_output !== undefined) next.expected_output = patch.expected_output;
  if (patch.attachments !== undefined) {
    await checkFileIds(ctx, [{ field: 'attachments', ids: patch.attachments }]);
    if (patch.attachments?.length) next.attachments = patch.attachments;
    else delete next.attachments;
  }
  if (patch.tags !== undefined) next.tags = patch.tags ?? [];
  if (patch.metadata !== undefined) next.metadata = patch.metadata ?? {};
  if (patch.expected_scores !== undefined) next.expected_scores = patch.expected_scores;
  // The item as it would be after the patch must still be runnable (switching to turns clears response and request in the same patch).
  const problem = itemShapeProblem(next);
  if (problem) throw validationError(`The item would not be runnable after this change: ${problem.field}: ${problem.message}.`, [problem]);
  if (!(await ctx.store.updateDatasetItem(dataset.id, next))) throw notFound(`Item of dataset ${dataset.id}`, itemId);
  return itemToWire(next);
}

export async function deleteItem(ctx: StoreCtx, idOrName: string, itemId: string): Promise<string> {
  const { dataset } = await getOwnItem(ctx, idOrName, itemId);
  if (!(await ctx.store.deleteDatasetItem(dataset.id, itemId))) throw notFound(`Item of dataset ${dataset.id}`, itemId);
  return itemId;
}

export const datasetGone = (id: string) => new TribunalError('not_found', 404, `Dataset ${JSON.stringify(id)} was deleted while this request ran.`);
