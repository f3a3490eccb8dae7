// REST-only operations of synthetic test data (room surface; SPEC section 16). Never MCP.
import { z } from 'zod';
import { getSyntheticData, saveSyntheticDataset, startSyntheticData } from '../surface/synthetic-data.ts';
import { defineTool } from '../tool.ts';
import { READ, WRITE } from './annotations.ts';

const Sample = z.object({
  quality: z.enum(['high', 'low']).describe('high: meets every rubric; low: fails one evaluator in the named way'),
  request: z.string(),
  response: z.string(),
  contexts: z.array(z.string()).optional(),
  expected_output: z.string().optional(),
  fails_evaluator: z.string().nullable().optional().describe('low samples: the evaluator it fails'),
  failure: z.string().nullable().optional().describe('low samples: how it fails it'),
});
const SyntheticData = z.object({
  judge_id: z.string(),
  status: z.enum(['pending', 'ready', 'not_generated']).describe('not_generated: never asked for, or the last attempt failed (see error)'),
  name: z.string(),
  description: z.string(),
  samples: z.array(Sample),
  error: z.string().nullable().describe('why the last generation failed'),
  requested_at: z.string().nullable(),
  updated_at: z.string().nullable(),
});
const judgeId = z.string().min(1).describe('id or exact name of a judge of your organization');

export const startSyntheticDataOperation = defineTool({
  name: 'generate_synthetic_data',
  title: 'Generate test data for a judge (background)',
  description:
    'Start generating realistic requests for the judge, each with a response that meets every rubric and one that fails one evaluator in a named way. Answers at once (status pending); GET the same path until ready.',
  input: z.object({
    judge_id: judgeId,
    count: z.number().int().min(1).max(20).optional().describe('how many requests (each gives a high and a low sample); default max(3, evaluators), at most 20'),
  }),
  output: SyntheticData,
  annotations: { ...WRITE, openWorldHint: true },
  handler: ({ judge_id, ...input }, ctx) => startSyntheticData(ctx, judge_id, input),
});

export const getSyntheticDataOperation = defineTool({
  name: 'get_synthetic_data',
  title: 'Read the test data generated for a judge',
  description: 'The synthetic test data of a judge: status pending, ready (with samples) or not_generated.',
  input: z.object({ judge_id: judgeId }),
  output: SyntheticData,
  annotations: READ,
  handler: ({ judge_id }, ctx) => getSyntheticData(ctx, judge_id),
});

export const saveSyntheticDatasetOperation = defineTool({
  name: 'save_synthetic_dataset',
  title: "Save a judge's test data as a dataset",
  description:
    'Save the ready synthetic data as a dataset: expected_scores 1 from every evaluator for a high sample, 0 from the failed evaluator for a low one. A first calibration set.',
  input: z.object({
    judge_id: judgeId,
    name: z.string().min(1).max(200).optional().describe('dataset name (default: the judge name, "synthetic" and the time)'),
    description: z.string().max(2000).optional().describe('dataset description'),
    project_id: z.string().optional().describe('project for the dataset'),
  }),
  output: z.object({ dataset_id: z.string(), name: z.string(), item_count: z.number().int() }),
  annotations: WRITE,
  handler: ({ judge_id, ...input }, ctx) => saveSyntheticDataset(ctx, judge_id, input),
});
