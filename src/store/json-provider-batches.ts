// The JSON store's provider batches (issue 32): a table of db.json, "provider_batches" (absent in
// files written before it). Every change is saved before it is answered: the record of a submit must
// be on disk before the submit call goes out.
import { clone } from './json-data.ts';
import type { ProviderBatchStore } from './parts/batches.ts';
import type { ProviderBatchRecord } from './provider-batch-types.ts';

/** The provider batch part of the JSON store, over its table (read late: init loads db.json) and the commit. */
export function jsonProviderBatches(table: () => Record<string, ProviderBatchRecord>, save: () => Promise<void>): ProviderBatchStore {
  return {
    async createProviderBatch(r) {
      table()[r.id] = clone(r);
      await save();
    },
    async updateProviderBatch(id, patch) {
      const r = table()[id];
      if (!r) return null;
      Object.assign(r, patch, { updated_at: new Date().toISOString() });
      await save();
      return clone(r);
    },
    async listProviderBatches(batchId) {
      return Object.values(table())
        .filter((r) => r.batch_id === batchId)
        .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id))
        .map((r) => clone(r));
    },
  };
}
