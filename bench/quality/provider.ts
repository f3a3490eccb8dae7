// bench:quality's judge model: the Anthropic Messages API (the server's own client) or any
// OpenAI-compatible Chat Completions server (OpenAI, or a local vLLM, Ollama or LM Studio model)
// through the same client a registered model uses (src/engine/providers/). Either way the calls go
// through the retry layer and a limiter, and scoring takes the result as a ScoringTarget, so the
// engine asks exactly what it asks a registered model. The key is read from an environment
// variable, never a flag (a flag would land in shell history and process lists).
import type { Config } from '../../src/config.ts';
import { createJudgeModel } from '../../src/engine/index.ts';
import { Limiter } from '../../src/engine/providers/limiter.ts';
import type { JudgeModel } from '../../src/engine/providers/model.ts';
import type { AnswerStrategy } from '../../src/engine/providers/json-answer.ts';
import { defaultBaseUrl, providerModel } from '../../src/engine/providers/index.ts';
import { ResilientJudgeModel } from '../../src/engine/providers/resilient-model.ts';
import type { ScoringTarget } from '../../src/engine/target.ts';

export type BenchProvider = 'anthropic' | 'openai';
export const PROVIDERS: BenchProvider[] = ['anthropic', 'openai'];
export const STRATEGIES: AnswerStrategy[] = ['tool', 'json_schema', 'json'];

export class UsageError extends Error {}

export interface ProviderOptions {
  provider: BenchProvider;
  /** The environment variable holding the key (default ANTHROPIC_API_KEY / OPENAI_API_KEY). */
  keyEnv?: string;
  baseUrl?: string;
  /** How the structured answer is asked for (openai only; default the forced tool). */
  strategy?: AnswerStrategy;
}

export const defaultKeyEnv = (provider: BenchProvider) => (provider === 'openai' ? 'OPENAI_API_KEY' : 'ANTHROPIC_API_KEY');

/** The judge model and the target every bench call goes through. `config` carries the model name and limits. */
export function benchTarget(config: Config, env: Record<string, string | undefined>, opts: ProviderOptions): { model: JudgeModel; target: ScoringTarget } {
  const keyEnv = opts.keyEnv ?? defaultKeyEnv(opts.provider);
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(keyEnv)) throw new UsageError(`--api-key-env takes the name of an environment variable, not ${JSON.stringify(keyEnv)}`);
  const key = env[keyEnv];
  const m = config.model;
  if (opts.provider === 'anthropic') {
    if (opts.strategy && opts.strategy !== 'tool') throw new UsageError('--strategy applies to --provider openai only (the Messages API always answers through the forced tool)');
    if (!key) throw new UsageError(`set ${keyEnv} (the judge model is called for real; see docs/QUALITY.md)`);
    const model = createJudgeModel({ ...config, model: { ...m, apiKey: key } });
    return { model, target: { model, modelName: m.name, prices: m.prices, temperature: 0, provider: 'anthropic' } };
  }
  // A local server usually takes no key: the client then sends a placeholder, as for a registered
  // model without one, and a server that wanted a key refuses with its own 401.
  const baseUrl = opts.baseUrl ?? defaultBaseUrl('openai');
  // The bench is run by the operator against a server of their choice, often on this machine or the LAN.
  const raw = providerModel({ provider: 'openai', base_url: baseUrl }, key ?? null, m.timeoutMs + 5_000, { allowLoopback: true, allowPrivate: true });
  const model = new ResilientJudgeModel(raw, {
    limiter: new Limiter(m.concurrency),
    policy: { retries: m.retries, timeoutMs: m.timeoutMs, backoffMs: m.backoffMs, backoffMaxMs: m.backoffMaxMs },
  });
  // Prices: the server's table knows the Anthropic models only; an unknown price is null, never 0.
  return { model, target: { model, modelName: m.name, prices: {}, temperature: 0, provider: 'openai', strategy: opts.strategy ?? 'tool' } };
}
