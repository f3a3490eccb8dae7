// Scoring kind "jury" (an evaluator with `models`): every juror scores with the kinds after this one
// in the table (a tool call or log-probabilities, with the juror's own target) and ../jury.ts folds
// the verdicts into one result.
import { scoreJury } from '../jury.ts';
import type { ScoringKind } from './kind.ts';

export const juryKind: ScoringKind = {
  name: 'jury',
  usesModel: true,
  matches: ({ evaluator }) => Boolean(evaluator.models?.length),
  // Object.assign, not a spread then a field: on Node 20 the latter gets a map of its own every time (scoring.ts).
  run: (job, next) => scoreJury(job.evaluator, (name) => next(Object.assign({}, job, { target: job.targets.get(name) }))),
};
