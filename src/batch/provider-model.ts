// Mode provider_batch (issue 32): which provider account each model of a run submits to, the
// refusal of a run whose models cannot (checked when the run starts), and the judge model a row's
// scoring targets are swapped for: its calls go to the hub (provider-hub.ts) instead of the live
// API, and are priced at the provider's batch rate (half the live price, cache reads as such).
import type { BatchGate } from '../engine/providers/resilient-model.ts';
import { createHash } from 'node:crypto';
import OpenAI from 'openai';
import type { RequestContext } from '../context.ts';
import { validationError } from '../errors.ts';
import { scoresWithoutModel } from '../checks/score.ts';
import { modelApiKey, registeredModelNamed } from '../domain/models.ts';
import type { JudgeModel, StructuredAnswer, StructuredCall } from '../engine/providers/model.ts';
import { ModelCallError } from '../engine/providers/model-errors.ts';
import { cacheRates, priceFor, type PriceTable, type PricedProvider } from '../engine/providers/cost.ts';
import { BATCH_PRICE_MULTIPLE } from '../engine/providers/anthropic-batch.ts';
import type { RunOptions } from '../runs/types.ts';
import type { EvaluatorRecord } from '../store/types.ts';
import { RESUBMIT, type ProviderAccount, type ProviderBatchHub } from './provider-hub.ts';

type Ctx = Pick<RequestContext, 'store' | 'caller' | 'config'>;
const refuse = (message: string) => validationError(message, [{ field: 'mode', message: 'provider_batch is not available for this judge' }]);

/** Does this OpenAI-compatible base URL serve the Batch API? One GET /batches?limit=1 says. */
async function servesOpenAIBatches(apiKey: string, baseUrl: string | null): Promise<string | null> {
  try {
    await new OpenAI({ apiKey, baseURL: baseUrl ?? undefined, maxRetries: 0, timeout: 10_000 }).batches.list({ limit: 1 });
    return null;
  } catch (err) {
    const status = (err as { status?: number }).status;
    return status ? `GET /batches answered ${status}` : (err as Error).message;
  }
}

/**
 * The provider account of every model the evaluators score with, keyed by the engine's target
 * identity; throws 400 (field `mode`) naming the model when one cannot take provider batches, or an
 * evaluator scores by log-probabilities (no batch API returns them as scoring needs).
 */
export async function providerAccounts(ctx: Ctx, evaluators: EvaluatorRecord[], probe = true): Promise<Map<string, ProviderAccount>> {
  const accounts = new Map<string, ProviderAccount>();
  for (const e of evaluators) {
    if (scoresWithoutModel(e)) continue; // check and code evaluators are scored here, locally
    if (e.scoring === 'logprobs')
      throw refuse(`Evaluator ${e.name} scores by log-probabilities, which provider batches do not return; run it without mode provider_batch, or set its scoring to direct.`);
    for (const name of e.models?.length ? e.models : [e.model ?? '']) {
      const record = name ? await registeredModelNamed(ctx, name) : null;
      if (!record) {
        // A name neither registered nor allowed keeps the engine's own clear error (no call is made).
        if (name && !ctx.config.model.allowed.includes(name)) continue;
        const model = name || ctx.config.model.name;
        // The server's own model is Anthropic's API (ANTHROPIC_BASE_URL), which has Message Batches.
        accounts.set(`server:${model}`, { key: 'server', provider: 'anthropic', apiKey: ctx.config.model.apiKey ?? '', baseUrl: ctx.config.model.baseUrl ?? null });
        continue;
      }
      const apiKey = modelApiKey(ctx, record) ?? '';
      if (record.provider === 'openai' && probe) {
        const why = await servesOpenAIBatches(apiKey, record.base_url);
        if (why)
          throw refuse(
            `Model ${record.name} (${record.base_url ?? 'api.openai.com'}) has no batch API: its base URL does not serve the OpenAI Batch API (${why}). Run without mode provider_batch, or use a model whose provider has one.`,
          );
      }
      accounts.set(`${record.id}@${record.updated_at}`, { key: record.id, provider: record.provider as 'anthropic' | 'openai', apiKey, baseUrl: record.base_url });
    }
  }
  return accounts;
}

/** The account a stored provider batch went to, for cancelling it; null when its model is gone. */
export async function accountByKey(ctx: Ctx, key: string): Promise<ProviderAccount | null> {
  if (key === 'server') return { key, provider: 'anthropic', apiKey: ctx.config.model.apiKey ?? '', baseUrl: ctx.config.model.baseUrl ?? null };
  const record = await ctx.store.getModel(key);
  if (!record || record.org_id !== ctx.caller.org.id) return null;
  return { key, provider: record.provider as 'anthropic' | 'openai', apiKey: modelApiKey(ctx, record) ?? '', baseUrl: record.base_url };
}

/** A price table with the model's rates at the batch rate: every token half, cache reads and writes at half their own rates. */
export function batchPrices(model: string, prices: PriceTable, provider: PricedProvider = 'anthropic'): PriceTable {
  const price = priceFor(model, prices);
  if (!price) return {};
  const cache = cacheRates(price, provider);
  const half = (n: number) => n * BATCH_PRICE_MULTIPLE;
  return { [model]: { ...price, input: half(price.input), output: half(price.output), cache_read: half(cache.read), cache_write: half(cache.write) } };
}

const ZERO = { input_tokens: 0, output_tokens: 0 };
const NONCE = /[0-9a-f]{24}/g;

/**
 * The judge model of one row: each call becomes a request `r<position>-<hash>` of a provider batch.
 * The id depends only on the row and the call's bytes (less the fence nonce), so the same row scored
 * again after a restart asks for the same request and is answered from the batch already submitted.
 */
class ProviderBatchModel implements JudgeModel {
  readonly configured = true;
  private readonly asked = new Set<string>();

  constructor(
    private readonly hub: ProviderBatchHub,
    private readonly run: { id: string; org_id: string },
    private readonly account: ProviderAccount,
    private readonly position: number,
    /** The run's cancel check (batch/work.ts runGate). */
    private readonly gate: BatchGate,
  ) {}

  async call(request: StructuredCall): Promise<StructuredAnswer> {
    await this.gate(); // no request is added after the run was cancelled
    // Without TRIBUNAL_SECRET_KEY the fence nonce (24 hex digits, conversation/fence.ts) changes with each
    // process: left out, so that the id stays the same after a restart.
    const bytes = JSON.stringify([this.account.key, request.model, request.system, request.prompt, request.tool]).replace(NONCE, '');
    const hash = createHash('sha256').update(bytes).digest('hex');
    const customId = `r${this.position}-${hash.slice(0, 40)}`;
    // A malformed answer is asked again by the engine: a batch answers the same, billed once.
    const repeat = this.asked.has(customId);
    this.asked.add(customId);
    let outcome = await this.hub.ask(this.run, this.account, customId, request);
    while (outcome === RESUBMIT) outcome = await this.hub.ask(this.run, this.account, customId, request);
    if (outcome.ok) return repeat ? { ...outcome.answer, usage: ZERO } : outcome.answer;
    const usage = repeat ? ZERO : (outcome.usage ?? ZERO);
    throw new ModelCallError(outcome.kind === 'malformed' ? 'malformed' : 'rejected', `Provider batch: ${outcome.message}`, { usage });
  }
}

/** RunOptions.retarget for one row of a provider_batch run. */
export function providerRetarget(
  hub: ProviderBatchHub,
  run: { id: string; org_id: string },
  position: number,
  accounts: Map<string, ProviderAccount>,
  gate: BatchGate,
): NonNullable<RunOptions['retarget']> {
  return (target) => {
    const account = accounts.get(target.identity ?? '');
    if (!account) return target; // a model unknown or not allowed: the engine's own error, as in a live run
    return {
      ...target,
      model: new ProviderBatchModel(hub, run, account, position, gate),
      prices: batchPrices(target.modelName, target.prices, target.provider),
    };
  };
}
