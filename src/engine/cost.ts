// Cost in USD from the price table (USD per million tokens; TRIBUNAL_PRICES extends or overrides
// these defaults). A dated model name (claude-sonnet-5-5-20260928) is priced as its undated family
// (claude-sonnet-5-5). A model the table does not know has an unknown cost: null, never a silent 0
// (the server warns about it at start-up, see model-check.ts).
import type { PriceTable } from '../prices.ts';

export type { PriceTable };

// Only a snapshot date may follow the family name: claude-sonnet-5-7 must not pass as claude-sonnet-5.
const SNAPSHOT_SUFFIX = /-\d{8}$/;

export function priceFor(model: string, prices: PriceTable): { input: number; output: number } | null {
  if (Object.hasOwn(prices, model)) return prices[model];
  const family = model.replace(SNAPSHOT_SUFFIX, '');
  return family !== model && Object.hasOwn(prices, family) ? prices[family] : null;
}

/** USD for one call, or null when the model has no price (unknown, shown as such). */
export function costUsd(model: string, usage: { input_tokens: number; output_tokens: number }, prices: PriceTable): number | null {
  const price = priceFor(model, prices);
  // Nothing spent costs nothing, priced or not (a call that failed before the model answered).
  if (!price) return usage.input_tokens === 0 && usage.output_tokens === 0 ? 0 : null;
  const cost = (usage.input_tokens * price.input + usage.output_tokens * price.output) / 1_000_000;
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
