// Judge models for the models an organization registered (SPEC section 11): the provider's client,
// wrapped in the same retry layer as the server's own model, with a limiter of the model's own
// max_concurrency. Built once per model version (id + updated_at) and kept, so that the limit holds
// across runs; an edited model gets a fresh client.
import type { Config } from '../../config.ts';
import type { ModelCapabilities } from '../../schemas.ts';
import type { ModelRecord } from '../../store/types.ts';
import { TribunalError } from '../../errors.ts';
import { failureStatus, ModelCallError } from './model-errors.ts';
import { AnthropicJudgeModel } from './anthropic-model.ts';
import { Limiter } from './limiter.ts';
import type { JudgeModel } from './model.ts';
import { ResilientJudgeModel, type ModelCallObserver } from './resilient-model.ts';
import type { AnswerStrategy } from './json-answer.ts';
import { OpenAIJudgeModel } from './openai.ts';
import type { AddressPolicy } from './address-policy.ts';
import { RedactingModel } from './upstream-text.ts';

export type ProviderModel = JudgeModel & { verify(model: string, timeoutMs: number): Promise<ModelCapabilities> };

/** The provider's client for one registered model: one HTTP attempt per call, no retries. */
export function providerModel(record: Pick<ModelRecord, 'provider' | 'base_url'>, apiKey: string | null, timeoutMs: number, policy?: AddressPolicy): ProviderModel {
  // Every error text is shortened and has the key redacted (upstream-text.ts); every connection obeys the address policy.
  if (record.provider === 'openai') return new RedactingModel(new OpenAIJudgeModel({ apiKey, baseUrl: record.base_url ?? defaultBaseUrl('openai'), timeoutMs, policy }), [apiKey]);
  // A local Messages API server takes no key; the SDK still wants one.
  return new RedactingModel(new AnthropicJudgeModel({ apiKey: apiKey ?? 'no-key', baseUrl: record.base_url ?? defaultBaseUrl('anthropic'), timeoutMs, policy }), [apiKey]);
}

/**
 * The provider's own API when a registered model gives no base_url. Named here, never read from the
 * SDKs' environment (ANTHROPIC_BASE_URL, OPENAI_BASE_URL are the operator's, not an organization's).
 */
export function defaultBaseUrl(provider: ModelRecord['provider']): string {
  return provider === 'openai' ? 'https://api.openai.com/v1' : 'https://api.anthropic.com';
}

/**
 * How a registered model is asked for a structured answer: the forced tool where verify saw it
 * honoured (or before any verify), else the JSON-schema format, else JSON in the prompt.
 */
export function strategyFor(capabilities: ModelCapabilities | null): AnswerStrategy {
  if (!capabilities || capabilities.forced_tool) return 'tool';
  return capabilities.json_schema ? 'json_schema' : 'json';
}

/** The SSRF policy of registered models, from the settings (docs/DEPLOYMENT.md, "Security"). */
export function addressPolicy(config: Config): AddressPolicy {
  // h-harden: settings appended to config.ts's registry block.
  return { allowLoopback: config.registry.allowLoopback, allowPrivate: config.registry.allowPrivate };
}

/**
 * Verify a registered model: one tiny real call per answer strategy through the provider's client,
 * answering what the model supports. The provider's refusal becomes model_unavailable with its
 * message (the key redacted); domain/models.ts checks the record and stores what this found.
 */
export async function verifyRegisteredModel(config: Config, record: ModelRecord, apiKey: string | null): Promise<ModelCapabilities> {
  const timeoutMs = config.model.timeoutMs;
  try {
    return await providerModel(record, apiKey, timeoutMs + 5_000, addressPolicy(config)).verify(record.model, timeoutMs);
  } catch (err) {
    if (!(err instanceof ModelCallError)) throw err;
    throw new TribunalError('model_unavailable', failureStatus([err.kind]), `Verifying model ${record.name} (${record.provider}, ${record.model}) failed: ${err.message}`);
  }
}

export class RegisteredModelPool {
  private readonly models = new Map<string, { version: string; model: ResilientJudgeModel }>();

  constructor(private readonly observer?: ModelCallObserver) {}

  judgeModel(config: Config, record: ModelRecord, apiKey: string | null): ResilientJudgeModel {
    const version = `${record.updated_at}|${record.max_concurrency}`;
    const kept = this.models.get(record.id);
    if (kept && kept.version === version) return kept.model;
    const m = config.model;
    const model = new ResilientJudgeModel(providerModel(record, apiKey, m.timeoutMs + 5_000, addressPolicy(config)), {
      limiter: new Limiter(record.max_concurrency),
      policy: { retries: m.retries, timeoutMs: m.timeoutMs, backoffMs: m.backoffMs, backoffMaxMs: m.backoffMaxMs },
      observer: this.observer,
    });
    this.models.set(record.id, { version, model });
    return model;
  }

  forget(id: string): void {
    this.models.delete(id);
  }
}
