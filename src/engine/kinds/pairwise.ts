// Comparing kind "pairwise": the model asked which response better meets the rubric, in both orders
// (../pairwise.ts). A jury evaluator compares with its first juror's model: a pairwise jury is not
// built (docs/SCORING.md).
import { compareEvaluatorPair } from '../pairwise.ts';
import type { ComparingKind } from './kind.ts';

export const pairwiseKind: ComparingKind = {
  name: 'pairwise',
  usesModel: true,
  matches: () => true,
  run: (job) => {
    const e = job.evaluator;
    return compareEvaluatorPair(job.ctx, job.model, e, job.pair, job.targets.get(e.models?.length ? e.models[0] : (e.model ?? '')));
  },
};
