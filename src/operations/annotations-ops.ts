// REST-only operations on annotations (SPEC section 8): a person's verdict on one evaluator result of
// one execution log, and copying annotated runs into a dataset. Never registered with MCP.
// (./annotations.ts is something else: the READ/WRITE hints every definition carries.)
import { z } from 'zod';
import { createAnnotation, deleteAnnotation, getAnnotation, itemsFromAnnotations, listAnnotations, updateAnnotation } from '../calibration/annotations.ts';
import { page, PageParams } from '../schemas.ts';
import { Annotation } from '../schemas/calibration.ts';
import { defineTool } from '../tool.ts';
import { READ, WRITE } from './annotations.ts';
import { itemAllowance } from '../quotas/quotas.ts'; // h-harden
import { defineDeleteOperation } from './resources.ts';

const annotationId = z.string().min(1).describe('id of the annotation');
const score = z.number().min(0).max(1).describe('the score 0..1 the evaluator should have given');
const note = z.string().max(4000).describe("the person's reason (at most 4000 characters)");
const dateFrom = z.string().optional().describe('only annotations made at or after this date (2026-11-21) or ISO-8601 date-time');
const dateTo = z.string().optional().describe('only annotations made at or before this date (inclusive, whole day) or ISO-8601 date-time');

export const listAnnotationsOperation = defineTool({
  name: 'list_annotations',
  title: "List your organization's annotations, newest first",
  description: 'Annotations, newest first; filter by execution log, evaluator or judge (ids or exact names).',
  input: z.object({
    ...PageParams,
    execution_log_id: z.string().optional().describe('only annotations of this execution log'),
    evaluator_id: z.string().optional().describe('only annotations of this evaluator (id or exact name)'),
    judge_id: z.string().optional().describe("only annotations of this judge's runs (id or exact name)"),
    date_from: dateFrom,
    date_to: dateTo,
  }),
  output: page(Annotation),
  annotations: READ,
  handler: (input, ctx) => listAnnotations(ctx, input, ctx.config.limits.pageSize),
});

export const createAnnotationOperation = defineTool({
  name: 'create_annotation',
  title: 'Annotate one evaluator result of an execution log',
  description:
    "Say what score an evaluator should have given in one run: the log must be your organization's and the evaluator one of its results. One annotation per result; edit it to change it.",
  input: z.object({
    execution_log_id: z.string().min(1).describe('the execution log'),
    evaluator_id: z.string().min(1).describe('the evaluator whose result you correct (id or exact name, as in the log)'),
    score,
    note: note.optional(),
  }),
  output: Annotation,
  annotations: WRITE,
  handler: (input, ctx) => createAnnotation(ctx, input),
});

export const getAnnotationOperation = defineTool({
  name: 'get_annotation',
  title: 'Read one annotation',
  description: 'One annotation.',
  input: z.object({ annotation_id: annotationId }),
  output: Annotation,
  annotations: READ,
  handler: ({ annotation_id }, ctx) => getAnnotation(ctx, annotation_id),
});

export const updateAnnotationOperation = defineTool({
  name: 'update_annotation',
  title: "Change an annotation's score or note",
  description: 'Sets the fields given; a null note clears it.',
  input: z.object({ annotation_id: annotationId, score: score.optional(), note: note.nullable().optional() }),
  output: Annotation,
  annotations: WRITE,
  handler: ({ annotation_id, ...patch }, ctx) => updateAnnotation(ctx, annotation_id, patch),
});

export const deleteAnnotationOperation = defineDeleteOperation({
  name: 'delete_annotation',
  title: 'Delete an annotation',
  description: 'Delete one annotation (items already copied into a dataset stay).',
  input: z.object({ annotation_id: annotationId }),
  remove: ({ annotation_id }, ctx) => deleteAnnotation(ctx, annotation_id),
});

export const itemsFromAnnotationsOperation = defineTool({
  name: 'add_dataset_items_from_annotations',
  title: 'Copy annotated runs into a dataset',
  description:
    "One item per annotated execution log: the log's inputs, and each annotated evaluator's person score as expected_scores (by evaluator id); notes and the log id go to metadata. Give annotation_ids, or judge_id with an optional date range.",
  input: z.object({
    dataset_id: z.string().min(1).describe('id or exact name of the dataset'),
    annotation_ids: z.array(z.string().min(1)).min(1).max(1000).optional().describe('the annotations to copy (1..1000)'),
    judge_id: z.string().min(1).optional().describe("or: every annotation of this judge's runs (id or exact name)"),
    date_from: dateFrom,
    date_to: dateTo,
  }),
  output: z.object({
    created: z.number().int().describe('items added'),
    ids: z.array(z.string()).describe('their ids, in order'),
    annotations: z.number().int().describe('annotations read'),
    skipped: z.array(z.object({ execution_log_id: z.string(), reason: z.string() })).describe('annotated logs not copied, and why'),
  }),
  annotations: WRITE,
  // h-harden: the organization's item quota must have room left.
  handler: async ({ dataset_id, ...input }, ctx) => (await itemAllowance(ctx), itemsFromAnnotations(ctx, dataset_id, input)),
});
