// Scoring kind "tool call": one model call forced to answer through the scoring tool (or the JSON
// strategy a registered model honours), asked again when malformed. The default: it matches every
// evaluator the kinds before it in the table did not take.
import { scoreByModel } from '../scoring.ts';
import { callStructured } from '../structured-call.ts';
import type { ScoringKind } from './kind.ts';

export const toolKind: ScoringKind = {
  name: 'tool',
  usesModel: true,
  matches: () => true,
  run: (job) => scoreByModel(job.ctx, job.model, job.evaluator, job.input, job.target, (model, spec) => callStructured(model, spec)),
};
