// The JSON store's registered judge models (db.json "models", keyed by id; absent in files written
// before the registry). Few rows per organization, so most lookups are plain scans; the lookup by
// name (every proxied call and every run of a registered model makes one) goes through a small index.
import { clone, orgPage } from './json-data.ts';
import type { ModelStore } from './parts/models.ts';
import { StoreConflictError, type ModelRecord } from './types.ts';

/** The model part of the JSON store, over its table (read late: init loads db.json) and the commit. */
export function jsonModels(table: () => Record<string, ModelRecord>, save: () => Promise<void>): ModelStore {
  const nameTaken = (model: ModelRecord) => Object.values(table()).some((m) => m.id !== model.id && m.org_id === model.org_id && m.name === model.name);
  // org and name -> id. Only a hint: a hit is checked against the record it points at, so a rename,
  // a delete or a reloaded table (init, migration) costs one scan, never a wrong answer.
  const byName = new Map<string, string>();
  const named = (orgId: string, name: string): ModelRecord | undefined => {
    const key = `${orgId}\u0000${name}`;
    const rows = table();
    const hinted = byName.get(key);
    const hit = hinted === undefined ? undefined : rows[hinted];
    if (hit && hit.org_id === orgId && hit.name === name) return hit;
    for (const id in rows) {
      const m = rows[id]!;
      if (m.org_id !== orgId || m.name !== name) continue;
      if (byName.size >= 10_000) byName.clear();
      byName.set(key, id);
      return m;
    }
    return undefined;
  };
  return {
    async createModel(model) {
      if (table()[model.id]) throw new StoreConflictError({ kind: 'id_taken', resource: 'model', id: model.id });
      if (nameTaken(model)) throw new StoreConflictError({ kind: 'name_taken', resource: 'model', name: model.name });
      table()[model.id] = clone(model);
      await save();
    },
    async getModel(id) {
      return clone(table()[id] ?? null);
    },
    async getModelByName(orgId, name) {
      return clone(named(orgId, name) ?? null);
    },
    listModels: async (orgId, page) => orgPage(table(), orgId, page),
    async updateModel(model) {
      if (!table()[model.id]) return false;
      if (nameTaken(model)) throw new StoreConflictError({ kind: 'name_taken', resource: 'model', name: model.name });
      table()[model.id] = clone(model);
      await save();
      return true;
    },
    async deleteModel(id) {
      if (!table()[id]) return false;
      delete table()[id];
      await save();
      return true;
    },
  };
}
