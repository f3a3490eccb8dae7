// Cost in USD from the price table (USD per million tokens; TRIBUNAL_PRICES extends or overrides
// these defaults). A dated model name (claude-sonnet-5-5-20260928) is priced as its undated family
// (claude-sonnet-5-5). A model the table does not know has an unknown cost: null, never a silent 0
// (the server warns about it at start-up, see model-check.ts).
//
// Prompt caching: input_tokens counts every prompt token; the cached ones among them are billed at
// the cache rates instead of `input`. A price may carry cache_read / cache_write; without them the
// provider's published multiples of the input price apply: Anthropic writes at 1.25x and reads at
// 0.1x (5-minute cache); OpenAI reads cached input at 0.5x and has no write charge.
import type { ModelPriceRates, PriceTable } from '../../prices.ts';
import type { ModelUsage } from './model.ts';

export type { PriceTable };

export type PricedProvider = 'anthropic' | 'openai';

const CACHE_MULTIPLES: Record<PricedProvider, { read: number; write: number }> = {
  anthropic: { read: 0.1, write: 1.25 },
  openai: { read: 0.5, write: 1 },
};

// Only a snapshot date may follow the family name: claude-sonnet-5-7 must not pass as claude-sonnet-5.
const SNAPSHOT_SUFFIX = /-\d{8}$/;

export function priceFor(model: string, prices: PriceTable): ModelPriceRates | null {
  if (Object.hasOwn(prices, model)) return prices[model];
  const family = model.replace(SNAPSHOT_SUFFIX, '');
  return family !== model && Object.hasOwn(prices, family) ? prices[family] : null;
}

/** USD per million tokens read from and written to the prompt cache, for this price and provider. */
export function cacheRates(price: ModelPriceRates, provider: PricedProvider = 'anthropic'): { read: number; write: number } {
  const multiple = CACHE_MULTIPLES[provider];
  return { read: price.cache_read ?? price.input * multiple.read, write: price.cache_write ?? price.input * multiple.write };
}

/** USD for one call, or null when the model has no price (unknown, shown as such). */
export function costUsd(model: string, usage: ModelUsage, prices: PriceTable, provider: PricedProvider = 'anthropic'): number | null {
  const price = priceFor(model, prices);
  // Nothing spent costs nothing, priced or not (a call that failed before the model answered).
  if (!price) return usage.input_tokens === 0 && usage.output_tokens === 0 ? 0 : null;
  const read = usage.cache_read_tokens ?? 0;
  const write = usage.cache_write_tokens ?? 0;
  const rates = cacheRates(price, provider);
  const plain = Math.max(0, usage.input_tokens - read - write);
  const cost = (plain * price.input + read * rates.read + write * rates.write + usage.output_tokens * price.output) / 1_000_000;
  return Math.round(cost * 1e9) / 1e9;
}

/**
 * The total of several costs. One unknown part makes the total unknown (null): a sum that quietly
 * left out an unpriced model would understate what the run cost.
 */
export function sumCosts(costs: Iterable<number | null>): number | null {
  let total = 0;
  for (const c of costs) {
    if (c === null) return null;
    total += c;
  }
  return Math.round(total * 1e9) / 1e9;
}
