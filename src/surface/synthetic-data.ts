// The synthetic data of a judge as callers see it (SPEC section 16): start a generation, read it,
// save it as a dataset whose expected_scores come from each sample's quality (a first calibration set).
import type { RequestContext } from '../context.ts';
import { addItems, createDataset } from '../datasets/datasets.ts';
import { getEditableJudge, loadJudgeEvaluators } from '../domain/judges.ts';
import { TribunalError, validationError } from '../errors.ts';
import type { DatasetItemInput } from '../schemas.ts';
import type { SyntheticDataRecord } from '../store/types.ts';
import type { SyntheticRunner } from './synthetic-runner.ts';
import { defaultCount } from './synthetic.ts';

type Ctx = Pick<RequestContext, 'store' | 'caller' | 'config'> & { synthetic?: SyntheticRunner };

/** What GET answers: not_generated when never asked for, or when the last attempt failed (with its error). */
export function syntheticToWire(judgeId: string, record: SyntheticDataRecord | null) {
  const status = !record || record.status === 'failed' ? ('not_generated' as const) : record.status;
  return {
    judge_id: judgeId,
    status,
    name: record?.status === 'ready' ? record.name : '',
    description: record?.status === 'ready' ? record.description : '',
    samples: record?.status === 'ready' ? record.samples : [],
    error: record?.status === 'failed' ? record.error : null,
    requested_at: record?.created_at ?? null,
    updated_at: record?.updated_at ?? null,
  };
}

export async function startSyntheticData(ctx: Ctx, judgeIdOrName: string, input: { count?: number }) {
  const judge = await getEditableJudge(ctx, judgeIdOrName);
  if (!ctx.synthetic) throw new TribunalError('not_available', 503, 'This server runs no synthetic data generation.');
  ctx.synthetic.assertConfigured();
  const evaluators = await loadJudgeEvaluators(ctx, judge);
  const current = await ctx.store.getSyntheticData(judge.id);
  // Asking again while a generation runs answers that one (no second model call).
  if (current?.status !== 'pending') {
    const now = new Date().toISOString();
    await ctx.store.putSyntheticData({
      judge_id: judge.id,
      org_id: judge.org_id,
      key_id: ctx.caller.key.id,
      status: 'pending',
      count: input.count ?? defaultCount(evaluators.length),
      name: '',
      description: '',
      samples: [],
      error: null,
      created_at: now,
      updated_at: now,
    });
  }
  ctx.synthetic.submit(judge.id);
  return syntheticToWire(judge.id, await ctx.store.getSyntheticData(judge.id));
}

export async function getSyntheticData(ctx: Ctx, judgeIdOrName: string) {
  const judge = await getEditableJudge(ctx, judgeIdOrName);
  return syntheticToWire(judge.id, await ctx.store.getSyntheticData(judge.id));
}

/** High samples expect 1 from every evaluator; a low one expects 0 from the evaluator it fails. */
export async function saveSyntheticDataset(ctx: Ctx, judgeIdOrName: string, input: { name?: string; description?: string; project_id?: string }) {
  const judge = await getEditableJudge(ctx, judgeIdOrName);
  const record = await ctx.store.getSyntheticData(judge.id);
  if (record?.status !== 'ready') {
    throw new TribunalError(
      'conflict',
      409,
      `Judge ${judge.name} has no synthetic data ready (${record ? `it is ${syntheticToWire(judge.id, record).status}` : 'none was generated'}); POST /v1/judges/${judge.id}/synthetic-data/ first and wait for status ready.`,
    );
  }
  const evaluators = await loadJudgeEvaluators(ctx, judge);
  const byName = new Map(evaluators.map((e) => [e.name, e.id]));
  const items: DatasetItemInput[] = record.samples.map((s) => {
    const failing = s.fails_evaluator ? byName.get(s.fails_evaluator) : undefined;
    const expected =
      s.quality === 'high' ? Object.fromEntries(evaluators.map((e) => [e.id, 1])) : failing ? { [failing]: 0 } : Object.fromEntries(evaluators.map((e) => [e.id, 0]));
    return {
      request: s.request,
      response: s.response,
      ...(s.contexts ? { contexts: s.contexts } : {}),
      ...(s.expected_output !== undefined ? { expected_output: s.expected_output } : {}),
      tags: ['synthetic', s.quality],
      metadata: { quality: s.quality, ...(s.fails_evaluator ? { fails_evaluator: s.fails_evaluator, failure: s.failure } : {}) },
      expected_scores: expected,
    };
  });
  if (!items.length) throw validationError('The synthetic data has no samples to save.', [{ field: '(body)', message: 'no samples' }]);
  const dataset = await createDataset(ctx, {
    name: input.name ?? `${judge.name} synthetic ${record.updated_at.slice(0, 16).replace('T', ' ')}`.slice(0, 200),
    description: input.description ?? (record.description || `Synthetic test data for judge ${judge.name}.`),
    project_id: input.project_id,
  });
  const added = await addItems(ctx, dataset.id, items);
  return { dataset_id: dataset.id, name: dataset.name, item_count: added.created };
}
