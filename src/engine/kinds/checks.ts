// Scoring and comparing kind "checks and code evaluators" (an evaluator of kind check or code): no
// model, no cache (scoring is cheaper than a lookup); ../../checks/ scores, and compares by scoring
// each side.
import { compareWithoutModel } from '../../checks/pairwise.ts';
import { scoresWithoutModel, scoreWithoutModel } from '../../checks/score.ts';
import type { ComparingKind, ScoringKind } from './kind.ts';

export const checksKind: ScoringKind = {
  name: 'checks',
  usesModel: false,
  matches: ({ evaluator }) => scoresWithoutModel(evaluator),
  run: async (job) => ({ result: await scoreWithoutModel(job.ctx.config, job.orgId, job.evaluator, job.input) }),
};

export const checksComparingKind: ComparingKind = {
  name: 'checks',
  usesModel: false,
  matches: ({ evaluator }) => scoresWithoutModel(evaluator),
  run: (job) => compareWithoutModel(job.ctx.config, job.orgId, job.evaluator, job.pair.run, job.runB),
};
