// What an evaluator scores with, as the engine takes it. The runs resolve it (runs/targets.ts: the
// server's model, or a model the caller's organization registered); the engine only uses it.
import type { RequestContext } from '../context.ts';
import type { ModelCapabilities } from '../schemas.ts';
import { TribunalError } from '../errors.ts';
import { NOT_CONFIGURED_MESSAGE } from './providers/anthropic-model.ts';
import type { PriceTable, PricedProvider } from './providers/cost.ts';
import type { AnswerStrategy } from './providers/json-answer.ts';
import type { JudgeModel } from './providers/model.ts';
import type { ResultSettings } from './result-cache.ts';

/** A malformed or out-of-range answer is asked again at most this many times. */
export const MALFORMED_RETRIES = 2;

/** Which model scores an evaluator: the server's own, or a model the caller's organization registered. */
export interface ScoringTarget {
  model: JudgeModel;
  /** The model id sent to the provider. */
  modelName: string;
  prices: PriceTable;
  strategy?: AnswerStrategy;
  temperature?: number;
  /** A registered model's verified capabilities (logprobs scoring picks its answer format from them). */
  capabilities?: ModelCapabilities | null;
  /** Whose cache rates price cached prompt tokens (cost.ts); default anthropic. */
  provider?: PricedProvider;
  /** Changes when the model behind the name does: part of the result-cache key. */
  identity?: string;
  /** Whether the model takes images and documents (attachments.ts has the rule). */
  attachments?: boolean;
}

/** The settings a call of this evaluator asks for (the temperature actually sent is recorded after the call). */
export const requestedSettings = (ctx: Pick<RequestContext, 'config'>, target?: ScoringTarget): ResultSettings => ({
  temperature: target?.temperature ?? 0,
  max_tokens: ctx.config.model.maxTokens,
  strategy: target?.strategy ?? 'tool',
});

export function requireModel(model: JudgeModel): void {
  if (!model.configured) throw new TribunalError('model_unavailable', 503, NOT_CONFIGURED_MESSAGE, { reason: 'model_not_configured' });
}
