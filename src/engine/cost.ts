// Cost in USD from the price table (USD per million tokens; TRIBUNAL_PRICES overrides or extends
// the defaults in config.ts). A dated model name (claude-sonnet-4-5-20250929) is priced as its
// undated family (claude-sonnet-4-5). A model the table does not know costs 0 and is documented so.
export type PriceTable = Record<string, { input: number; output: number }>;

export function priceFor(model: string, prices: PriceTable): { input: number; output: number } | null {
  if (prices[model]) return prices[model];
  let best: string | null = null;
  for (const name of Object.keys(prices)) {
    if (model.startsWith(`${name}-`) && (!best || name.length > best.length)) best = name;
  }
  return best ? prices[best] : null;
}

export function costUsd(model: string, usage: { input_tokens: number; output_tokens: number }, prices: PriceTable): number {
  const price = priceFor(model, prices);
  if (!price) return 0;
  const cost = (usage.input_tokens * price.input + usage.output_tokens * price.output) / 1_000_000;
  return Math.round(cost * 1e9) / 1e9;
}
