// The JSON store's provider batches (issue 32): a table of db.json, "provider_batches" (absent in
// files written before it). Every change is saved before it is answered: the record of a submit must
// be on disk before the submit call goes out.
import type { ProviderBatchPatch, ProviderBatchRecord } from './provider-batch-types.ts';

export type ProviderBatchTables = { provider_batches: Record<string, ProviderBatchRecord> };

export class JsonProviderBatches {
  constructor(
    private readonly tables: () => ProviderBatchTables,
    private readonly save: () => Promise<void>,
  ) {}

  private get table() {
    return (this.tables().provider_batches ??= Object.create(null) as ProviderBatchTables['provider_batches']);
  }

  async create(r: ProviderBatchRecord): Promise<void> {
    this.table[r.id] = structuredClone(r);
    await this.save();
  }

  async update(id: string, patch: ProviderBatchPatch): Promise<ProviderBatchRecord | null> {
    const r = this.table[id];
    if (!r) return null;
    Object.assign(r, patch, { updated_at: new Date().toISOString() });
    await this.save();
    return structuredClone(r);
  }

  async list(batchId: string): Promise<ProviderBatchRecord[]> {
    return Object.values(this.table)
      .filter((r) => r.batch_id === batchId)
      .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id))
      .map((r) => structuredClone(r));
  }

  purgeOrganization(orgId: string): void {
    for (const r of Object.values(this.table)) if (r.org_id === orgId) delete this.table[r.id];
  }
}
