// The default judge-model price table, USD per million tokens. It is configuration (TRIBUNAL_PRICES
// extends it in config.ts), so it sits in the base layer; the cost arithmetic is in engine/providers/cost.ts.
export interface ModelPriceRates {
  input: number;
  output: number;
  /** Prompt tokens read from the provider's prompt cache; absent: the provider's usual share of `input` (engine/providers/cost.ts). */
  cache_read?: number;
  /** Prompt tokens written to the provider's prompt cache; absent: the provider's usual multiple of `input`. */
  cache_write?: number;
}
export type PriceTable = Record<string, ModelPriceRates>;

/**
 * Base input/output prices (no batch discount; cache writes and reads follow from them, see
 * engine/providers/cost.ts) from Anthropic's model pages, platform.claude.com/docs/en/models/<model>/overview, as read on 2026-11-23. A model whose
 * page gives no single price (Claude Haiku 5.5 is priced "from" a tier) is left out: unknown, not a guess.
 */
export const DEFAULT_PRICES: PriceTable = {
  'claude-fable-5-1': { input: 10, output: 50 },
  'claude-opus-5-5': { input: 4, output: 20 },
  'claude-opus-5': { input: 5, output: 25 },
  'claude-sonnet-5-5': { input: 2, output: 10 },
  'claude-sonnet-5': { input: 2, output: 10 },
  'claude-opus-4-8': { input: 5, output: 25 },
  'claude-opus-4-6': { input: 5, output: 25 },
  'claude-sonnet-4-6': { input: 3, output: 15 },
  'claude-opus-4-5': { input: 5, output: 25 },
  'claude-sonnet-4-5': { input: 3, output: 15 },
  'claude-haiku-4-5': { input: 1, output: 5 },
  'claude-opus-4-1': { input: 15, output: 75 },
  'claude-sonnet-4-0': { input: 3, output: 15 },
  'claude-3-5-haiku-latest': { input: 0.8, output: 4 },
};
