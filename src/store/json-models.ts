// The JSON store's registered judge models (db.json "models", keyed by id; absent in files written
// before the registry). Few rows per organization, so lookups are plain scans.
import { clone, orgPage } from './json-data.ts';
import type { ModelStore } from './parts/models.ts';
import { StoreConflictError, type ModelRecord } from './types.ts';

/** The model part of the JSON store, over its table (read late: init loads db.json) and the commit. */
export function jsonModels(table: () => Record<string, ModelRecord>, save: () => Promise<void>): ModelStore {
  const nameTaken = (model: ModelRecord) => Object.values(table()).some((m) => m.id !== model.id && m.org_id === model.org_id && m.name === model.name);
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
      return clone(Object.values(table()).find((m) => m.org_id === orgId && m.name === name) ?? null);
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
