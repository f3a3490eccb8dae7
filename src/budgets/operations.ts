// The core of the budget doors (room h-cost): the calibration estimate and setting an evaluator's cap.
import type { RequestContext } from '../context.ts';
import { getVisibleEvaluator } from '../domain/evaluators.ts';
import { assertRunnable, getVisibleJudge, loadJudgeEvaluators } from '../domain/judges.ts';
import { notFound, validationError } from '../errors.ts';
import { estimateRun } from './dry-run.ts';

/** dry_run on a calibration run: the same estimate as a batch run of that judge or evaluator over the dataset. */
export async function estimateCalibration(ctx: Pick<RequestContext, 'store' | 'caller' | 'config'>, input: { judge_id?: string; evaluator_id?: string; dataset_id: string }) {
  if ((input.judge_id === undefined) === (input.evaluator_id === undefined)) {
    throw validationError('Give judge_id or evaluator_id (the judge or the one evaluator to calibrate), not both.', [
      { field: 'judge_id', message: 'give judge_id or evaluator_id' },
    ]);
  }
  let evaluators;
  if (input.judge_id !== undefined) {
    const judge = await getVisibleJudge(ctx, input.judge_id);
    assertRunnable(judge);
    evaluators = await loadJudgeEvaluators(ctx, judge);
  } else {
    evaluators = [await getVisibleEvaluator(ctx, input.evaluator_id!)];
  }
  return estimateRun(ctx, evaluators, { dataset_id: input.dataset_id });
}

/** Sets (or, with null, removes) the daily cap of one of the caller's own evaluators. */
export async function setEvaluatorBudget(ctx: Pick<RequestContext, 'store' | 'caller'>, evaluatorId: string, dailyUsd: number | null): Promise<void> {
  const evaluator = await getVisibleEvaluator(ctx, evaluatorId);
  // A preset or another org's public evaluator can still be capped for this org's own spend.
  if (evaluator.org_id !== null && evaluator.org_id !== ctx.caller.org.id && !evaluator.is_preset) throw notFound('Evaluator', evaluatorId);
  await ctx.store.setBudgetCap({ org_id: ctx.caller.org.id, scope: 'evaluator', scope_id: evaluator.id, period: 'daily', cap_usd: dailyUsd });
}
