// Datasets and their items (SPEC section 7), built from the execution input's fields.
import { z } from 'zod';
import { ExecutionInputShape, id, timestamp, Turn } from './core.ts';

const ExpectedScores = z.record(z.string().min(1), z.number().min(0).max(1)).describe('evaluator id or exact name -> the score 0..1 a person gave (for calibration)');
const ItemMetadata = z.record(z.string(), z.unknown()).describe('free JSON object kept with the item');

/** What a caller gives for one item: the execution inputs, plus labels. */
export const DatasetItemInputShape = {
  // Either response (with request) or turns: checked per item by datasets/item-shape.ts, so a bulk add names each bad index.
  response: ExecutionInputShape.response,
  request: ExecutionInputShape.request,
  turns: ExecutionInputShape.turns,
  system_prompt: ExecutionInputShape.system_prompt,
  contexts: ExecutionInputShape.contexts,
  expected_output: ExecutionInputShape.expected_output,
  attachments: ExecutionInputShape.attachments,
  tags: z.array(z.string()).optional().describe('labels; a batch run copies them onto each row log'),
  metadata: ItemMetadata.optional(),
  expected_scores: ExpectedScores.optional(),
};
export const DatasetItemInput = z.object(DatasetItemInputShape);
export type DatasetItemInput = z.infer<typeof DatasetItemInput>;

export const DatasetItem = z.object({
  id: id('dataset item'),
  response: z.string().nullable().describe('the LLM output to evaluate; null when the item is a conversation (turns)'),
  request: z.string().nullable().describe('the input that prompted the response'),
  turns: z.array(Turn).nullable().describe('the conversation to judge instead of request/response (its last turn is judged); null otherwise'),
  system_prompt: z.string().nullable().describe('the system prompt of the evaluated application, with turns'),
  contexts: z.array(z.string()).nullable().describe('retrieved snippets'),
  expected_output: z.string().nullable().describe('reference answer'),
  attachments: z.array(z.string()).optional().describe('ids of files (POST /v1/files/) given to the judge model with the item; absent when none'),
  tags: z.array(z.string()).describe('labels'),
  metadata: ItemMetadata,
  expected_scores: ExpectedScores.nullable(),
  created_at: timestamp,
});
export type DatasetItem = z.infer<typeof DatasetItem>;

export const Dataset = z.object({
  id: id('dataset'),
  name: z.string().describe('dataset name, unique in its organization; accepted wherever a dataset id is'),
  description: z.string().describe('what the dataset holds'),
  project_id: z.string().describe('owning project'),
  item_count: z.number().int().describe('items in the dataset'),
  created_at: timestamp,
  updated_at: timestamp.describe('last change to the dataset or its items'),
});
export type Dataset = z.infer<typeof Dataset>;
