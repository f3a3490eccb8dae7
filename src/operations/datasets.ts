// REST-only operations on datasets and their items (SPEC section 7). Never registered with MCP: the
// 14 tools stay as they are. Streamed import and export are plain routes (src/http/dataset-stream.ts),
// since their bodies are not JSON.
import { z } from 'zod';
import {
  addItems,
  createDataset,
  deleteDataset,
  deleteItem,
  getItem,
  getOwnDataset,
  datasetToWire,
  listDatasets,
  listItems,
  updateDataset,
  updateItem,
} from '../datasets/datasets.ts';
import { runnableItems } from '../datasets/item-shape.ts';
import { Dataset, DatasetItem, DatasetItemInputShape, page, PageParams } from '../schemas.ts';
import { defineTool } from '../tool.ts';
import { defineDeleteOperation } from './resources.ts';
import { checkDatasetQuota, itemAllowance } from '../quotas/quotas.ts'; // h-harden
import { READ, WRITE } from './annotations.ts';

const datasetId = z.string().min(1).describe('id or exact name of the dataset');
const itemId = z.string().min(1).describe('id of the item');
const name = z.string().min(1).max(200).describe('dataset name, unique in your organization');
const description = z.string().max(2000).describe('what the dataset holds');

export const listDatasetsOperation = defineTool({
  name: 'list_datasets',
  title: "List your organization's datasets, newest first",
  description: "Your organization's datasets, newest first.",
  input: z.object({ ...PageParams, project_id: z.string().optional().describe('only this project'), search: z.string().optional().describe('text in the name or description') }),
  output: page(Dataset),
  annotations: READ,
  handler: (input, ctx) => listDatasets(ctx, input, ctx.config.limits.pageSize),
});

export const createDatasetOperation = defineTool({
  name: 'create_dataset',
  title: 'Create a dataset',
  description: 'Create an empty dataset; add items with POST .../items/ or import a JSONL or CSV file.',
  input: z.object({ name, description: description.optional(), project_id: z.string().optional().describe('owning project; default: your default project') }),
  output: Dataset,
  annotations: WRITE,
  // h-harden: the organization's dataset quota first.
  handler: async (input, ctx) => (await checkDatasetQuota(ctx), createDataset(ctx, input)),
});

export const getDatasetOperation = defineTool({
  name: 'get_dataset',
  title: 'Read a dataset',
  description: 'One dataset, with its item count.',
  input: z.object({ dataset_id: datasetId }),
  output: Dataset,
  annotations: READ,
  handler: async ({ dataset_id }, ctx) => datasetToWire(await getOwnDataset(ctx, dataset_id)),
});

export const updateDatasetOperation = defineTool({
  name: 'update_dataset',
  title: 'Rename a dataset or change its description',
  description: 'Rename a dataset or change its description.',
  input: z.object({ dataset_id: datasetId, name: name.optional(), description: description.optional() }),
  output: Dataset,
  annotations: WRITE,
  handler: ({ dataset_id, ...patch }, ctx) => updateDataset(ctx, dataset_id, patch),
});

export const deleteDatasetOperation = defineDeleteOperation({
  name: 'delete_dataset',
  title: 'Delete a dataset and its items (execution logs stay)',
  description: 'Delete a dataset and every item in it; logs of runs over it stay.',
  input: z.object({ dataset_id: datasetId }),
  remove: ({ dataset_id }, ctx) => deleteDataset(ctx, dataset_id),
});

export const listDatasetItemsOperation = defineTool({
  name: 'list_dataset_items',
  title: 'A page of dataset items, in the order they were added',
  description: 'Items of a dataset in insertion order (not newest first): the order a batch runs them in.',
  input: z.object({ dataset_id: datasetId, ...PageParams }),
  output: z.object({
    results: z.array(DatasetItem).describe('items, in insertion order'),
    next_cursor: z.string().nullable().describe('pass as `cursor` for the next page; null on the last page'),
  }),
  annotations: READ,
  handler: ({ dataset_id, ...input }, ctx) => listItems(ctx, dataset_id, input, ctx.config.limits.pageSize),
});

export const addDatasetItemsOperation = defineTool({
  name: 'add_dataset_items',
  title: 'Add 1 to 1000 items to a dataset',
  description: 'Adds items in the order given. One invalid item refuses the whole call, and the errors name each bad index (items.N.field).',
  input: z.object({ dataset_id: datasetId, items: runnableItems(1000).describe('the items, 1..1000; each has a response (with an optional request) or turns') }),
  output: z.object({ created: z.number().int().describe('items added'), ids: z.array(z.string()).describe('their ids, in the order given') }),
  annotations: WRITE,
  // h-harden: the organization's item quota first.
  handler: async ({ dataset_id, items }, ctx) => (await itemAllowance(ctx, items.length), addItems(ctx, dataset_id, items)),
});

export const getDatasetItemOperation = defineTool({
  name: 'get_dataset_item',
  title: 'Read one dataset item',
  description: 'One item of a dataset.',
  input: z.object({ dataset_id: datasetId, item_id: itemId }),
  output: DatasetItem,
  annotations: READ,
  handler: ({ dataset_id, item_id }, ctx) => getItem(ctx, dataset_id, item_id),
});

const nullable = <T extends z.ZodType>(t: T) => t.nullable().optional();

export const updateDatasetItemOperation = defineTool({
  name: 'update_dataset_item',
  title: 'Edit one dataset item',
  description:
    'Sets the fields given; null clears a field (request, response or turns, system_prompt, contexts, expected_output, tags, metadata, expected_scores). The item must stay runnable: a response or turns, never both.',
  input: z.object({
    dataset_id: datasetId,
    item_id: itemId,
    response: nullable(z.string().min(1, 'response is empty: pass the LLM output to evaluate')).describe(
      'the LLM output to evaluate; null clears it (when switching the item to turns)',
    ),
    request: nullable(z.string()).describe('the input that prompted the response'),
    turns: nullable(DatasetItemInputShape.turns.unwrap()).describe('the conversation to judge instead of request/response; null clears it'),
    system_prompt: nullable(z.string()).describe('the system prompt of the evaluated application, with turns'),
    contexts: nullable(z.array(z.string())).describe('retrieved snippets'),
    expected_output: nullable(z.string()).describe('reference answer'),
    attachments: nullable(DatasetItemInputShape.attachments.unwrap()).describe('ids of files (POST /v1/files/) given to the judge model; null clears them'),
    tags: nullable(z.array(z.string())).describe('labels'),
    metadata: nullable(z.record(z.string(), z.unknown())).describe('free JSON object'),
    expected_scores: nullable(z.record(z.string().min(1), z.number().min(0).max(1))).describe('evaluator id or exact name -> score 0..1'),
  }),
  output: DatasetItem,
  annotations: WRITE,
  handler: ({ dataset_id, item_id, ...patch }, ctx) => updateItem(ctx, dataset_id, item_id, patch),
});

export const deleteDatasetItemOperation = defineDeleteOperation({
  name: 'delete_dataset_item',
  title: 'Delete one dataset item',
  description: 'Delete one item of a dataset.',
  input: z.object({ dataset_id: datasetId, item_id: itemId }),
  remove: ({ dataset_id, item_id }, ctx) => deleteItem(ctx, dataset_id, item_id),
});
