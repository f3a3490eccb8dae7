// Builds the judge model from the config (the scoring engine around it: runs/index.ts). One model instance per server:
// its limiter is the server-wide cap on judge-model calls in flight (TRIBUNAL_MODEL_CONCURRENCY),
// so judge generation should be handed the same instance as scoring.
import type { Config } from '../config.ts';
import { AnthropicJudgeModel } from './providers/anthropic-model.ts';
import { Limiter } from './providers/limiter.ts';
import { ResilientJudgeModel, type ModelCallObserver } from './providers/resilient-model.ts';

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
