// REST-only operations of review queues (SPEC section 17). Never registered with MCP (it stays at 14
// tools); rest.ts routes /v1/review-queues/ to these.
import { z } from 'zod';
import { pageQuery } from '../domain/pagination.ts';
import { READ, WRITE } from '../operations/annotations.ts';
import { defineDeleteOperation } from '../operations/resources.ts';
import { PageParams, page } from '../schemas.ts';
import { defineTool } from '../tool.ts';
import { adjudicateItem, listDisagreements } from './adjudication.ts';
import { calibrateFromQueue } from './loop.ts';
import { addItems, createQueue, deleteQueue, getOwnQueue, listItems, listQueues, nextItem, queueToWire, skipItem, submitItem, updateQueue } from './queues.ts';

const queueId = z.string().min(1).describe('id of the review queue');
const itemId = z.string().min(1).describe('id of the queue item (from next/ or items/)');
/** What scoring an item writes (a person's scores, or the decided ones): the log's annotations for it. */
const ItemAnnotations = z.object({ item_id: z.string(), execution_log_id: z.string(), annotations: z.array(z.record(z.string(), z.unknown())) });
const Sources = z
  .object({
    confidence_below: z.number().min(0).max(1).optional().describe('add runs whose confidence is below this'),
    jury_spread_above: z.number().min(0).max(1).optional().describe("add runs whose jurors' scores spread more than this"),
    critical_failures: z.boolean().optional().describe('add runs where an evaluator failed (error) or scored 0'),
    sample_rate: z.number().min(0).max(1).optional().describe("add this share of all runs of the queue's judge or evaluators, at random"),
    evaluation_rule_ids: z.array(z.string().min(1)).max(50).optional().describe('add runs made by these online evaluation rules'),
  })
  .describe('what adds runs automatically as they happen');
const QueueShape = {
  annotators_per_item: z.number().int().min(1).max(5).optional().describe('how many different people score each item (1..5, default 1)'),
  lease_seconds: z.number().int().min(1).max(86_400).optional().describe('how long a person holds an item before it goes back (default 600)'),
  sources: Sources.optional(),
  show_justification: z.boolean().optional().describe("show the judge's justification and score before the person has scored (default false, so the judge does not anchor them)"),
};
const Agreement = z.object({
  evaluator_id: z.string(),
  alpha: z.number().nullable().describe("Krippendorff's alpha (interval) over the items at least two people scored; null below two such items"),
  n_items: z.number().int(),
  n_annotations: z.number().int(),
});
export const ReviewQueue = z.object({
  id: z.string(),
  name: z.string(),
  judge_id: z.string().nullable(),
  evaluator_ids: z.array(z.string()),
  annotators_per_item: z.number().int(),
  lease_seconds: z.number().int(),
  sources: Sources,
  show_justification: z.boolean(),
  counts: z.object({ queued: z.number().int(), leased: z.number().int(), done: z.number().int(), skipped: z.number().int() }),
  agreement: z.array(Agreement),
  created_at: z.string(),
  updated_at: z.string(),
});
const ReviewItem = z.object({
  id: z.string(),
  execution_log_id: z.string(),
  source: z.string(),
  status: z.enum(['queued', 'leased', 'done', 'skipped']),
  annotations_done: z.number().int(),
  leased: z.number().int(),
  skipped: z.number().int(),
  adjudicated_at: z.string().nullable(),
  created_at: z.string(),
});
const Label = z.object({
  evaluator_id: z.string().min(1).describe('evaluator id (or exact name, as in the log)'),
  score: z.number().min(0).max(1),
  note: z.string().max(4000).nullable().optional(),
});

export const listReviewQueues = defineTool({
  name: 'list_review_queues',
  title: "List your organization's review queues, newest first",
  description: 'Review queues with their counts and agreement.',
  input: z.object({ ...PageParams }),
  output: page(ReviewQueue),
  annotations: READ,
  handler: (input, ctx) => listQueues(ctx, pageQuery(input, ctx.config.limits.pageSize)),
});

export const createReviewQueue = defineTool({
  name: 'create_review_queue',
  title: 'Create a review queue',
  description: 'A queue of runs that people score: for a judge (its evaluators) or for evaluators by id.',
  input: z.object({
    name: z.string().trim().min(1).max(200),
    judge_id: z.string().min(1).optional().describe('the judge whose evaluators people score (id or exact name)'),
    evaluator_ids: z.array(z.string().min(1)).min(1).max(50).optional().describe('or these evaluators (ids or exact names)'),
    ...QueueShape,
  }),
  output: ReviewQueue,
  annotations: WRITE,
  handler: async (input, ctx) => queueToWire(ctx, await createQueue(ctx, input)),
});

export const getReviewQueue = defineTool({
  name: 'get_review_queue',
  title: 'Read a review queue with its counts and agreement',
  description: 'One review queue.',
  input: z.object({ queue_id: queueId }),
  output: ReviewQueue,
  annotations: READ,
  handler: async ({ queue_id }, ctx) => queueToWire(ctx, await getOwnQueue(ctx, queue_id)),
});

export const updateReviewQueue = defineTool({
  name: 'update_review_queue',
  title: 'Edit a review queue',
  description: 'Sets the fields given (annotators_per_item may grow, not shrink).',
  input: z.object({ queue_id: queueId, name: z.string().trim().min(1).max(200).optional(), ...QueueShape }),
  output: ReviewQueue,
  annotations: WRITE,
  handler: async ({ queue_id, ...patch }, ctx) => queueToWire(ctx, await updateQueue(ctx, queue_id, patch)),
});

export const deleteReviewQueue = defineDeleteOperation({
  name: 'delete_review_queue',
  title: 'Delete a review queue',
  description: "Deletes the queue with its items, leases and people's labels (annotations made by adjudication stay).",
  input: z.object({ queue_id: queueId }),
  remove: ({ queue_id }, ctx) => deleteQueue(ctx, queue_id),
});

export const listReviewItems = defineTool({
  name: 'list_review_items',
  title: "List a review queue's items, oldest first",
  description: 'Items with their status (queued, leased, done, skipped).',
  input: z.object({ queue_id: queueId, ...PageParams }),
  output: page(ReviewItem),
  annotations: READ,
  handler: ({ queue_id, ...p }, ctx) => listItems(ctx, queue_id, pageQuery(p, ctx.config.limits.pageSize)),
});

export const addReviewItems = defineTool({
  name: 'add_review_items',
  title: 'Add runs to a review queue by hand',
  description: 'Adds execution logs of your organization; logs already in the queue are reported, not added twice.',
  input: z.object({ queue_id: queueId, execution_log_ids: z.array(z.string().min(1)).min(1).max(1000) }),
  output: z.object({ added: z.array(z.object({ item_id: z.string(), execution_log_id: z.string() })), already_queued: z.array(z.string()) }),
  annotations: WRITE,
  handler: ({ queue_id, execution_log_ids }, ctx) => addItems(ctx, queue_id, execution_log_ids),
});

export const nextReviewItem = defineTool({
  name: 'next_review_item',
  title: 'Lease the next item to score',
  description: 'Leases the oldest item that still wants people and that you have not had; 204 when none is left for you.',
  input: z.object({ queue_id: queueId }),
  output: z.object({
    item_id: z.string().optional(),
    execution_log_id: z.string().optional(),
    lease_expires_at: z.string().optional(),
    evaluator_ids: z.array(z.string()).optional().describe('score each of these'),
    show_justification: z.boolean().optional(),
    log: z.record(z.string(), z.unknown()).nullable().optional().describe('the run; evaluator scores and justifications are null unless the queue shows them'),
  }),
  annotations: WRITE,
  handler: ({ queue_id }, ctx) => nextItem(ctx, queue_id),
});

export const submitReviewItem = defineTool({
  name: 'submit_review_item',
  title: 'Score a leased item (completes your lease)',
  description: 'One score per evaluator of the item; the item must be leased to you and the lease unexpired.',
  input: z.object({ queue_id: queueId, item_id: itemId, annotations: z.array(Label).min(1).max(50) }),
  output: ItemAnnotations,
  annotations: WRITE,
  handler: ({ queue_id, item_id, annotations }, ctx) => submitItem(ctx, queue_id, item_id, annotations),
});

export const skipReviewItem = defineTool({
  name: 'skip_review_item',
  title: 'Skip a leased item (gives it back)',
  description: 'Gives the item back to the queue for others, with your reason; you will not get it again.',
  input: z.object({ queue_id: queueId, item_id: itemId, reason: z.string().trim().min(1).max(1000) }),
  output: z.object({ item_id: z.string(), skipped: z.literal(true), reason: z.string() }),
  annotations: WRITE,
  handler: ({ queue_id, item_id, reason }, ctx) => skipItem(ctx, queue_id, item_id, reason),
});

export const listReviewDisagreements = defineTool({
  name: 'list_review_disagreements',
  title: 'List where people disagree, largest spread first',
  description: "Items whose people's scores for an evaluator spread by at least min_spread (default 0.25), not yet adjudicated.",
  input: z.object({
    queue_id: queueId,
    min_spread: z.number().min(0).max(1).optional(),
    include_adjudicated: z.boolean().optional(),
    limit: z.number().int().min(1).max(200).optional(),
  }),
  output: z.object({ results: z.array(z.record(z.string(), z.unknown())), total: z.number().int() }),
  annotations: READ,
  handler: ({ queue_id, ...opts }, ctx) => listDisagreements(ctx, queue_id, opts),
});

export const adjudicateReviewItem = defineTool({
  name: 'adjudicate_review_item',
  title: "Decide an item's scores (what calibration uses)",
  description: "Writes the decided score per evaluator as the log's annotation (section 8); an evaluator left out gets the people's mean.",
  input: z.object({ queue_id: queueId, item_id: itemId, scores: z.array(Label).max(50).optional() }),
  output: ItemAnnotations,
  annotations: WRITE,
  handler: ({ queue_id, item_id, scores }, ctx) => adjudicateItem(ctx, queue_id, item_id, scores ?? []),
});

export const calibrateFromReviewQueue = defineTool({
  name: 'calibrate_from_review_queue',
  title: "Close the loop: the queue's adjudicated items into a calibration dataset, and a calibration run",
  description:
    'Adjudicates done items the people agree on (their mean), copies adjudicated items into a dataset (new, or extended without duplicates) ' +
    "and starts a calibration run of the queue's judge (or one per evaluator). Improve the judge from the run's largest disagreements with " +
    'POST /v1/calibration-runs/{id}/demonstrations/, then call this again to measure before and after.',
  input: z.object({
    queue_id: queueId,
    dataset_id: z.string().min(1).optional().describe('extend this dataset (id or exact name)'),
    dataset_name: z.string().trim().min(1).max(200).optional().describe('or create a dataset with this name (default: the queue name and the date)'),
    threshold: z.number().min(0).max(1).optional().describe('score >= threshold is a pass (default 0.5)'),
    auto_adjudicate_below: z
      .number()
      .min(0)
      .max(1)
      .nullable()
      .optional()
      .describe('adjudicate done items whose people spread less than this with their mean (default 0.25; null = only items adjudicated by hand)'),
  }),
  output: z.object({ dataset_id: z.string(), items_added: z.number().int(), auto_adjudicated: z.number().int(), calibration_runs: z.array(z.record(z.string(), z.unknown())) }),
  annotations: WRITE,
  handler: ({ queue_id, ...input }, ctx) => calibrateFromQueue(ctx, queue_id, input),
});
