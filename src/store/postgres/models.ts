// The PostgreSQL store's registered judge models: one JSON document per model, with name and
// created_at as columns for lookups and pages.
import type { ModelRecord, ModelStore } from '../parts/models.ts';
import type { ConflictReason } from '../types.ts';
import { orgPage } from './accounts.ts';
import { json } from './codecs.ts';
import type { PgConnection } from './connection.ts';

const modelConflict =
  (m: ModelRecord) =>
  (c: string): ConflictReason =>
    c === 'models_unique_name' ? { kind: 'name_taken', resource: 'model', name: m.name } : { kind: 'id_taken', resource: 'model', id: m.id };
const fromRow = (r: Record<string, any>) => r.record as ModelRecord;

export const pgModels = (db: PgConnection): ModelStore => ({
  async createModel(model: ModelRecord): Promise<void> {
    await db.write(
      'INSERT INTO models (id, org_id, name, created_at, record) VALUES ($1, $2, $3, $4, $5)',
      [model.id, model.org_id, model.name, model.created_at, json(model)],
      modelConflict(model),
    );
  },
  getModel(id: string) {
    return db.one('SELECT record FROM models WHERE id = $1', [id], fromRow);
  },
  getModelByName(orgId: string, name: string) {
    return db.one('SELECT record FROM models WHERE org_id = $1 AND name = $2', [orgId, name], fromRow);
  },
  listModels: (orgId, page) => orgPage(db, 'models', orgId, page, fromRow),
  async updateModel(model: ModelRecord) {
    const { rowCount } = await db.write('UPDATE models SET name = $2, record = $3 WHERE id = $1', [model.id, model.name, json(model)], modelConflict(model));
    return (rowCount ?? 0) > 0;
  },
  async deleteModel(id: string) {
    const { rowCount } = await db.write('DELETE FROM models WHERE id = $1', [id]);
    return (rowCount ?? 0) > 0;
  },
});
