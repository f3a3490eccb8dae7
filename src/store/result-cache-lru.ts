// The JSON store's result cache: an in-memory LRU (a Map in use order), not written to the data
// directory. The JSON store is one process on one machine, so a cache that lives as long as that
// process is enough to skip repeated model calls within a session, a batch or a re-run; a restart
// starts it empty (docs/MODELS.md, "Caching"). At most maxEntries entries across all organizations;
// keys are scoped by organization, so one organization never reads another's entry.
import type { EvaluatorResult } from '../schemas.ts';
import type { ResultCacheStore } from './parts/logs.ts';

export class ResultCacheLru {
  private readonly entries = new Map<string, string>();

  private static slot(orgId: string, key: string): string {
    return `${orgId}\u0000${key}`;
  }

  get(orgId: string, key: string): EvaluatorResult | null {
    const slot = ResultCacheLru.slot(orgId, key);
    const json = this.entries.get(slot);
    if (json === undefined) return null;
    // Used now: to the back of the order.
    this.entries.delete(slot);
    this.entries.set(slot, json);
    return JSON.parse(json) as EvaluatorResult;
  }

  put(orgId: string, key: string, result: EvaluatorResult, maxEntries: number): void {
    const slot = ResultCacheLru.slot(orgId, key);
    this.entries.delete(slot);
    // Kept as JSON: a copy that no caller can change afterwards.
    this.entries.set(slot, JSON.stringify(result));
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= Math.max(0, maxEntries)) break;
      this.entries.delete(oldest);
    }
  }

  purgeOrganization(orgId: string): void {
    const prefix = `${orgId}\u0000`;
    for (const slot of this.entries.keys()) if (slot.startsWith(prefix)) this.entries.delete(slot);
  }

  get size(): number {
    return this.entries.size;
  }
}

/** The result cache part of the JSON store, over its LRU (the store keeps it to purge an organization's entries). */
export function jsonResultCache(lru: ResultCacheLru): ResultCacheStore {
  return {
    getCachedResult: async (orgId, key) => lru.get(orgId, key),
    putCachedResult: async (orgId, key, result, maxEntries) => lru.put(orgId, key, result, maxEntries),
  };
}
