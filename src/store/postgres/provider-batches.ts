// The PostgreSQL store's provider batches (migrations/019_provider_batches.sql, issue 32).
import type { ProviderBatchStore } from '../parts/batches.ts';
import type { ProviderBatchPatch, ProviderBatchRecord } from '../provider-batch-types.ts';
import type { PgConnection } from './connection.ts';

type Rows = { rows: Array<Record<string, unknown>> };
export type PgRun = (sql: string, params: unknown[]) => Promise<Rows>;

const iso = (v: unknown) => (v instanceof Date ? v.toISOString() : String(v));
const fromRow = (r: Record<string, unknown>): ProviderBatchRecord => ({
  id: r.id as string,
  batch_id: r.batch_id as string,
  org_id: r.org_id as string,
  provider: r.provider as ProviderBatchRecord['provider'],
  account: r.account as string,
  provider_batch_id: (r.provider_batch_id as string | null) ?? null,
  status: r.status as ProviderBatchRecord['status'],
  custom_ids: r.custom_ids as string[],
  error: (r.error as string | null) ?? null,
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
});

export async function pgCreateProviderBatch(run: PgRun, r: ProviderBatchRecord): Promise<void> {
  await run(
    `INSERT INTO provider_batches (id, batch_id, org_id, provider, account, provider_batch_id, status, custom_ids, error, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10, $11)`,
    [r.id, r.batch_id, r.org_id, r.provider, r.account, r.provider_batch_id, r.status, JSON.stringify(r.custom_ids), r.error, r.created_at, r.updated_at],
  );
}

export async function pgUpdateProviderBatch(run: PgRun, id: string, patch: ProviderBatchPatch): Promise<ProviderBatchRecord | null> {
  const sets = ['updated_at = now()'];
  const params: unknown[] = [id];
  for (const field of ['provider_batch_id', 'status', 'error'] as const) {
    if (patch[field] === undefined) continue;
    params.push(patch[field]);
    sets.push(`${field} = $${params.length}`);
  }
  const { rows } = await run(`UPDATE provider_batches SET ${sets.join(', ')} WHERE id = $1 RETURNING *`, params);
  return rows[0] ? fromRow(rows[0]) : null;
}

export async function pgListProviderBatches(run: PgRun, batchId: string): Promise<ProviderBatchRecord[]> {
  const { rows } = await run('SELECT * FROM provider_batches WHERE batch_id = $1 ORDER BY created_at, id', [batchId]);
  return rows.map(fromRow);
}

/** The provider-batch part over the store's connection. */
export const pgProviderBatches = (db: PgConnection): ProviderBatchStore => ({
  createProviderBatch: (r) => pgCreateProviderBatch((sql, params) => db.write(sql, params), r),
  updateProviderBatch: (id, patch) => pgUpdateProviderBatch((sql, params) => db.write(sql, params), id, patch),
  listProviderBatches: (batchId) => pgListProviderBatches((sql, params) => db.query(sql, params), batchId),
});
