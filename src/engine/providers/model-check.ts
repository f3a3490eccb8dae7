// Start-up checks of the configured judge models: one warning line per problem, printed by the
// server before it listens. Deprecation comes from the installed @anthropic-ai/sdk itself, so the
// list is never a stale copy: the SDK keeps its DEPRECATED_MODELS private to its messages resource
// and prints a notice from create() for a model on it, synchronously, before any request is sent.
// We call create() on a client that cannot send (an already-aborted signal, a fetch that throws)
// and keep that notice.
import Anthropic from '@anthropic-ai/sdk';
import { priceFor, type PriceTable } from './cost.ts';

/** The SDK's deprecation notice for `model` (first line, with its end-of-life date), or null. */
export function sdkDeprecationNotice(model: string): string | null {
  let notice: string | null = null;
  const client = new Anthropic({
    apiKey: 'deprecation-probe',
    baseURL: 'http://127.0.0.1:9',
    maxRetries: 0,
    fetch: async () => {
      throw new Error('the deprecation probe never sends a request');
    },
  });
  const original = console.warn;
  console.warn = (...args: unknown[]) => {
    const text = typeof args[0] === 'string' ? args[0] : '';
    if (text.includes(`'${model}'`) && text.includes('deprecated')) notice = text.split('\n')[0];
    else original(...args);
  };
  try {
    client.messages.create({ model, max_tokens: 1, messages: [] }, { signal: AbortSignal.abort() }).catch(() => {});
  } catch {
    // A create() that throws synchronously has still printed its notice, if any.
  } finally {
    console.warn = original;
  }
  return notice;
}

/**
 * Warnings about the judge models this server was told to use: TRIBUNAL_MODEL and, when set,
 * TRIBUNAL_ALLOWED_MODELS (the default allow-list is the price table, which keeps prices of older
 * models for their past and pinned runs; those are not the operator's choice). A model is deprecated
 * per the SDK, or has no price (its runs then record cost_usd null, "unknown").
 */
export function modelWarnings(model: { name: string; allowed: string[]; allowedFromEnv: boolean; prices: PriceTable }): string[] {
  const names = [...new Set([model.name, ...(model.allowedFromEnv ? model.allowed : [])])];
  const warnings: string[] = [];
  for (const name of names) {
    const setting = name === model.name ? 'TRIBUNAL_MODEL' : 'TRIBUNAL_ALLOWED_MODELS';
    const notice = sdkDeprecationNotice(name);
    if (notice) {
      const when = notice.replace(/^The model '[^']*' is deprecated/, '').trim();
      warnings.push(
        `warning: ${setting} names ${name}, which @anthropic-ai/sdk lists as deprecated${when ? ` (it ${when.replace(/^and /, '')})` : ''}; choose a current model (docs/SCORING.md lists them).`,
      );
    }
    if (!priceFor(name, model.prices)) {
      warnings.push(
        `warning: ${setting} names ${name}, which has no price: its runs record cost_usd null ("unknown"); add it to TRIBUNAL_PRICES, e.g. {"${name}":{"input":1,"output":5}} (USD per million tokens).`,
      );
    }
  }
  return warnings;
}
