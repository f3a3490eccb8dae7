// The result cache (`use_cache: true` on a run; docs/MODELS.md, "Caching"). A run that asks for it
// reuses an identical earlier result of the same organization instead of calling the model: same
// evaluator id and version, the same inputs as the evaluator sees them, the same model(s) and the
// same settings. A reused result is marked `cached: true` and costs nothing (no tokens, cost 0); the
// run is still logged. Only good answers are kept: a score, or a not-applicable answer. Failed
// results never are (the next run tries the model again), and degenerate responses need no model
// anyway. Entries live in the store (result_cache table / an in-memory LRU for the JSON store),
// scoped by organization, at most TRIBUNAL_RESULT_CACHE_MAX of them, the least recently used evicted.
import { createHash } from 'node:crypto';
import type { RunInput } from '../conversation/validate.ts';
import type { EvaluatorResult } from '../schemas.ts';
import type { EvaluatorRecord, Store } from '../store/types.ts';
import { log } from '../log.ts';

/** Bumped when what a result depends on changes shape, so older entries stop matching. */
const KEY_FORMAT = 'tribunal result cache v1';

export type ResultSettings = NonNullable<EvaluatorResult['settings']>;

/** What picks the result: the evaluator version, its inputs, the model(s) and the settings. */
export interface ResultKeyParts {
  evaluator: Pick<EvaluatorRecord, 'id' | 'version' | 'requires_contexts' | 'requires_expected_output'>;
  input: RunInput;
  /**
   * Each model that scores, as an identity that changes when the model behind the name does: for a
   * registered model its id and updated_at (an edited base_url or model id is another model), for
   * the server's model its name.
   */
  models: string[];
  settings: ResultSettings;
}

/** SHA-256 (hex) of the parts, in a fixed order. Inputs the evaluator is not shown are left out. */
export function resultCacheKey(parts: ResultKeyParts): string {
  const { evaluator, input } = parts;
  const seen = [
    input.request ?? null,
    input.response,
    input.turns ?? null,
    input.system_prompt ?? null,
    evaluator.requires_contexts ? (input.contexts ?? null) : null,
    evaluator.requires_expected_output ? (input.expected_output ?? null) : null,
    // h-attach: the files' hashes, only when there are any (keys of runs without them stay as they were).
    ...(input.attached?.length ? [input.attached.map((a) => a.sha256)] : []),
  ];
  const { temperature, max_tokens, strategy } = parts.settings;
  const material = JSON.stringify([KEY_FORMAT, evaluator.id, evaluator.version, seen, parts.models, [temperature, max_tokens, strategy]]);
  return createHash('sha256').update(material).digest('hex');
}

/** Only a real answer is worth reusing: a score or a not-applicable answer, never a failure. */
export function isCacheable(result: EvaluatorResult): boolean {
  if (result.error !== undefined || result.degenerate || result.cached) return false;
  return result.score !== null || result.not_applicable === true;
}

/** What a stored result says when reused: the same answer, no tokens, no cost, marked cached. */
export function reusedResult(stored: EvaluatorResult, evaluator: Pick<EvaluatorRecord, 'name' | 'critical'>, latencyMs: number): EvaluatorResult {
  const { cache_read_tokens: _read, cache_write_tokens: _write, error: _error, ...rest } = stored;
  return {
    ...rest,
    evaluator_name: evaluator.name,
    critical: evaluator.critical === true,
    input_tokens: 0,
    output_tokens: 0,
    cost_usd: 0,
    latency_ms: latencyMs,
    cached: true,
  };
}

export interface ResultCacheOptions {
  store: Store;
  orgId: string;
  /** TRIBUNAL_RESULT_CACHE_MAX: entries kept at most, across the store. */
  maxEntries: number;
}

/** A cache the store cannot serve is the operator's to fix, so it is logged (a run never fails for it). */
const cacheFailed = (what: string) => (err: unknown) => {
  log.error(`result cache: ${what} failed (${(err as Error)?.message ?? err}); the run goes on without the cache`);
  return null;
};

/**
 * Runs `score` unless the cache holds this result. A store failure on the lookup or the write is not
 * the run's failure: the lookup then misses and the write is skipped (both logged).
 */
export async function withResultCache(
  opts: ResultCacheOptions,
  parts: ResultKeyParts,
  evaluator: EvaluatorRecord,
  score: () => Promise<{ result: EvaluatorResult; failure?: unknown }>,
) {
  const started = performance.now();
  const key = resultCacheKey(parts);
  const stored = await opts.store.getCachedResult(opts.orgId, key).catch(cacheFailed('lookup'));
  if (stored) return { result: reusedResult(stored, evaluator, Math.round((performance.now() - started) * 10) / 10) };
  const scored = await score();
  if (!scored.failure && isCacheable(scored.result)) await opts.store.putCachedResult(opts.orgId, key, scored.result, opts.maxEntries).catch(cacheFailed('write'));
  return scored;
}
