// The JSON store's table of registered judge models (db.json "models", keyed by id; absent in files
// written before the registry). Few rows per organization, so lookups are plain scans.
import { newestFirst, StoreConflictError, type ModelRecord, type Page } from './types.ts';

export class JsonModelTable {
  constructor(
    private readonly table: () => Record<string, ModelRecord>,
    private readonly save: () => Promise<void>,
  ) {}

  private nameTaken(model: ModelRecord): boolean {
    return Object.values(this.table()).some((m) => m.id !== model.id && m.org_id === model.org_id && m.name === model.name);
  }

  async create(model: ModelRecord): Promise<void> {
    if (this.table()[model.id]) throw new StoreConflictError({ kind: 'id_taken', resource: 'model', id: model.id });
    if (this.nameTaken(model)) throw new StoreConflictError({ kind: 'name_taken', resource: 'model', name: model.name });
    this.table()[model.id] = structuredClone(model);
    await this.save();
  }
  async get(id: string): Promise<ModelRecord | null> {
    return structuredClone(this.table()[id] ?? null);
  }
  async byName(orgId: string, name: string): Promise<ModelRecord | null> {
    return structuredClone(Object.values(this.table()).find((m) => m.org_id === orgId && m.name === name) ?? null);
  }
  /** `paginate` is the store's own (it copies the page's rows). */
  async list(orgId: string, paginate: (sorted: ModelRecord[]) => Page<ModelRecord>): Promise<Page<ModelRecord>> {
    return paginate(
      Object.values(this.table())
        .filter((m) => m.org_id === orgId)
        .sort(newestFirst),
    );
  }
  async update(model: ModelRecord): Promise<boolean> {
    if (!this.table()[model.id]) return false;
    if (this.nameTaken(model)) throw new StoreConflictError({ kind: 'name_taken', resource: 'model', name: model.name });
    this.table()[model.id] = structuredClone(model);
    await this.save();
    return true;
  }
  async delete(id: string): Promise<boolean> {
    if (!this.table()[id]) return false;
    delete this.table()[id];
    await this.save();
    return true;
  }
}
