// Scoring kind "cached result" (a run with use_cache): an identical earlier result of the same
// organization, without a model call (../result-cache.ts); on a miss the kinds after this one score
// and a good answer is kept. Every juror's model is part of the key.
import { withResultCache } from '../result-cache.ts';
import { requestedSettings } from '../target.ts';
import type { Scored, ScoringKind } from './kind.ts';

export const cachedKind: ScoringKind = {
  name: 'cached',
  usesModel: true,
  matches: ({ input }) => Boolean(input.use_cache),
  run: (job, next) => {
    const { evaluator: e, targets, target } = job;
    if (!job.cache) return next(job);
    const models = e.models?.length ? e.models.map((name) => targets.get(name)?.identity ?? name) : [target?.identity ?? ''];
    return withResultCache(job.cache, { evaluator: e, input: job.input, models, settings: requestedSettings(job.ctx, target) }, e, () => next(job)) as Promise<Scored>;
  },
};
