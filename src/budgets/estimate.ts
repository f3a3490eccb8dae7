// Cost estimates without a model call (room h-cost, docs/COST.md): the scoring prompt of every call
// is built exactly as scoring builds it (engine/prompt.ts, the evaluator version's nonce) and its
// tokens counted at ~4 characters a token (no tokenizer is exact for every provider; stated as an
// estimate). Output tokens are the evaluator's recent average from its logs, or a stated default.
// Three prices: live (every prompt token at the input rate), cached (the static system prompt of
// each evaluator written to the provider's cache once, then read at the cache-read rate) and
// provider batch (half of each rate, cache reads included, where the model has a batch API).
import type { RequestContext } from '../context.ts';
import { cacheRates, priceFor, type PricedProvider } from '../engine/providers/cost.ts';
import { versionNonce } from '../conversation/fence.ts';
import { buildPrompt, SCORE_TOOL, type PromptItem } from '../engine/prompt.ts';
import { registeredModelNamed } from '../domain/models.ts';
import type { ModelPriceRates } from '../prices.ts';
import type { EvaluatorRecord } from '../store/types.ts';

export const CHARS_PER_TOKEN = 4;
/** Output tokens per call when an evaluator has no recent logs to average. */
export const DEFAULT_OUTPUT_TOKENS = 400;
/** Anthropic Message Batches and the OpenAI Batch API bill every token at half the live rate. */
export const PROVIDER_BATCH_DISCOUNT = 0.5;
const TOOL_TOKENS = Math.ceil(JSON.stringify(SCORE_TOOL).length / CHARS_PER_TOKEN);

export const tokensOf = (text: string) => Math.ceil(text.length / CHARS_PER_TOKEN);

/** What one evaluator (or one juror of it) is priced with. */
export interface CallPricing {
  evaluator_id: string;
  model: string;
  price: ModelPriceRates | null;
  provider: PricedProvider;
  /** The provider serves a batch API for this model (Anthropic; OpenAI's own API). */
  batch_api: boolean;
  output_tokens: number;
}

const outputMemo = new Map<string, { at: number; tokens: number }>();

/** The mean output tokens of the evaluator's last 20 results in this org's logs (cached a minute), or the default. */
async function recentOutputTokens(ctx: Pick<RequestContext, 'store' | 'caller'>, evaluatorId: string): Promise<number> {
  const memoKey = `${ctx.caller.org.id}:${evaluatorId}`;
  const memo = outputMemo.get(memoKey);
  if (memo && Date.now() - memo.at < 60_000) return memo.tokens;
  const page = await ctx.store.listExecutionLogs({ org_id: ctx.caller.org.id, evaluator_id: evaluatorId }, { limit: 20 });
  const outs = page.items.flatMap((l) => l.evaluator_results.filter((r) => r.evaluator_id === evaluatorId && r.output_tokens > 0).map((r) => r.output_tokens));
  const tokens = outs.length ? Math.round(outs.reduce((a, b) => a + b, 0) / outs.length) : DEFAULT_OUTPUT_TOKENS;
  if (outputMemo.size > 10_000) outputMemo.clear();
  outputMemo.set(memoKey, { at: Date.now(), tokens });
  return tokens;
}

/** The pricing of every call one run of these evaluators makes (a jury: one per juror). */
export async function callPricings(ctx: Pick<RequestContext, 'store' | 'caller' | 'config'>, evaluators: EvaluatorRecord[]): Promise<CallPricing[]> {
  const out: CallPricing[] = [];
  for (const e of evaluators) {
    const output_tokens = await recentOutputTokens(ctx, e.id);
    for (const name of e.models?.length ? e.models : [e.model ?? '']) {
      const record = name ? await registeredModelNamed(ctx, name) : null;
      if (record) {
        const host = record.base_url ? new URL(record.base_url).hostname : 'api.openai.com';
        out.push({
          evaluator_id: e.id,
          model: record.model,
          price: record.price ? priceFor(record.model, { [record.model]: record.price }) : null,
          provider: record.provider,
          batch_api: record.provider === 'anthropic' || host === 'api.openai.com',
          output_tokens,
        });
      } else {
        const model = name || ctx.config.model.name;
        out.push({ evaluator_id: e.id, model, price: priceFor(model, ctx.config.model.prices), provider: 'anthropic', batch_api: true, output_tokens });
      }
    }
  }
  return out;
}

/** Tokens of one call: the whole prompt, and its static part (system prompt + tool: what a prompt cache holds). */
export function promptTokens(ctx: Pick<RequestContext, 'config'>, evaluator: EvaluatorRecord, item: PromptItem): { input: number; static: number } {
  const { system, prompt } = buildPrompt(evaluator, item, versionNonce(ctx.config.registry.secretKey, evaluator.id, evaluator.version));
  const fixed = tokensOf(system) + TOOL_TOKENS;
  return { input: fixed + tokensOf(prompt), static: fixed };
}

/** Sums of a run's calls, per pricing (evaluator and model), kept apart so each is priced with its own rates. */
export interface CallTally {
  pricing: CallPricing;
  calls: number;
  input_tokens: number;
  /** Static prompt tokens of every call (each call after the first reads them from the cache). */
  static_tokens: number;
  output_tokens: number;
}

export interface CostEstimate {
  calls: number;
  input_tokens: number;
  output_tokens: number;
  cost_usd: { live: number | null; cached: number | null; provider_batch: number | null };
}

const round = (usd: number) => Math.round(usd * 1e6) / 1e6;

/** The three prices of tallied calls; a price is null when any model has no price (or, for provider_batch, no batch API). */
export function priceTallies(tallies: CallTally[]): CostEstimate {
  let live: number | null = 0;
  let cached: number | null = 0;
  let batch: number | null = 0;
  for (const t of tallies) {
    const price = t.pricing.price;
    if (!price) {
      if (t.calls) live = cached = batch = null;
      continue;
    }
    const rates = cacheRates(price, t.pricing.provider);
    const out = t.output_tokens * price.output;
    const liveUsd = (t.input_tokens * price.input + out) / 1e6;
    // The first call writes the static prefix to the cache; every later call reads it.
    const perCallStatic = t.calls ? t.static_tokens / t.calls : 0;
    const reads = Math.max(0, t.calls - 1) * perCallStatic;
    const writes = t.calls ? perCallStatic : 0;
    const plain = t.input_tokens - reads - writes;
    const cachedUsd = (plain * price.input + reads * rates.read + writes * rates.write + out) / 1e6;
    if (live !== null) live += liveUsd;
    if (cached !== null) cached += cachedUsd;
    if (batch !== null) batch = t.pricing.batch_api ? batch + cachedUsd * PROVIDER_BATCH_DISCOUNT : null;
  }
  const calls = tallies.reduce((n, t) => n + t.calls, 0);
  return {
    calls,
    input_tokens: tallies.reduce((n, t) => n + t.input_tokens, 0),
    output_tokens: tallies.reduce((n, t) => n + t.output_tokens, 0),
    cost_usd: { live: live === null ? null : round(live), cached: cached === null ? null : round(cached), provider_batch: batch === null ? null : round(batch) },
  };
}

/** A tally per pricing for these evaluators, to which items are added one at a time (a dataset is streamed). */
export class RunTally {
  private readonly tallies: CallTally[];
  constructor(
    private readonly ctx: Pick<RequestContext, 'config'>,
    private readonly evaluators: EvaluatorRecord[],
    pricings: CallPricing[],
  ) {
    this.tallies = pricings.map((pricing) => ({ pricing, calls: 0, input_tokens: 0, static_tokens: 0, output_tokens: 0 }));
  }

  add(item: PromptItem): void {
    for (const e of this.evaluators) {
      const tokens = promptTokens(this.ctx, e, item);
      for (const t of this.tallies) {
        if (t.pricing.evaluator_id !== e.id) continue;
        t.calls++;
        t.input_tokens += tokens.input;
        t.static_tokens += tokens.static;
        t.output_tokens += t.pricing.output_tokens;
      }
    }
  }

  get result(): CostEstimate {
    return priceTallies(this.tallies);
  }

  /** Live cost per evaluator (unpriced: 0, as the spend counters count it). */
  liveByEvaluator(): Map<string, number> {
    const by = new Map<string, number>();
    for (const t of this.tallies) {
      const usd = t.pricing.price ? (t.input_tokens * t.pricing.price.input + t.output_tokens * t.pricing.price.output) / 1e6 : 0;
      by.set(t.pricing.evaluator_id, (by.get(t.pricing.evaluator_id) ?? 0) + usd);
    }
    return by;
  }
}
