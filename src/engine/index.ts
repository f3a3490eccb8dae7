// Builds the judge model and the scoring engine from the config. One model instance per server:
// its limiter is the server-wide cap on judge-model calls in flight (TRIBUNAL_MODEL_CONCURRENCY),
// so judge generation should be handed the same instance as scoring.
import type { Config } from '../config.ts';
import { AnthropicJudgeModel } from './providers/anthropic-model.ts';
import { Limiter } from './providers/limiter.ts';
import type { JudgeModel } from './providers/model.ts';
import { ResilientJudgeModel, type ModelCallObserver } from './providers/resilient-model.ts';
import { ComparingEngine } from './pairwise.ts';
import type { ScoringEngine } from './types.ts';

export function createJudgeModel(config: Config, observer?: ModelCallObserver): ResilientJudgeModel {
  const m = config.model;
  // The SDK timeout is only a backstop: the retry layer applies TRIBUNAL_MODEL_TIMEOUT per attempt.
  const raw = new AnthropicJudgeModel({ apiKey: m.apiKey, baseUrl: m.baseUrl, timeoutMs: m.timeoutMs + 5_000 });
  return new ResilientJudgeModel(raw, {
    limiter: new Limiter(m.concurrency),
    policy: { retries: m.retries, timeoutMs: m.timeoutMs, backoffMs: m.backoffMs, backoffMaxMs: m.backoffMaxMs },
    observer,
  });
}

/** `observer` also watches the calls to organizations' registered models (their limiters are their own). */
export function createScoringEngine(model: JudgeModel, observer?: ModelCallObserver): ScoringEngine {
  return new ComparingEngine(model, observer && { attemptFinished: (event) => observer.attemptFinished(event) });
}
