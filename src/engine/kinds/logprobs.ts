// Scoring kind "log-probabilities" (an evaluator with scoring "logprobs"): the weighted mean grade
// (../logprobs.ts), never a silent fallback to the tool call.
import { callLogprobs } from '../logprobs.ts';
import { scoreByModel } from '../scoring.ts';
import type { ScoringKind } from './kind.ts';

export const logprobsKind: ScoringKind = {
  name: 'logprobs',
  usesModel: true,
  matches: ({ evaluator }) => evaluator.scoring === 'logprobs',
  run: (job) => scoreByModel(job.ctx, job.model, job.evaluator, job.input, job.target, (model, spec, target) => callLogprobs(model, spec, target?.capabilities)),
};
