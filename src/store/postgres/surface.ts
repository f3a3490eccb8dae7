// The PostgreSQL store's claim tokens and synthetic data (migrations/015_surface.sql), for room
// surface (issue 30): a part over the store's shared connection.
import type { SurfaceStore } from '../parts/surface.ts';
import type { ClaimTokenRecord, SyntheticDataRecord } from '../types.ts';
import { json } from './codecs.ts';
import type { PgConnection } from './connection.ts';

export const pgSurface = (db: PgConnection): SurfaceStore => ({
  async createClaimToken(t: ClaimTokenRecord): Promise<void> {
    await db.write('INSERT INTO claim_tokens (token_hash, org_id, used_at, record) VALUES ($1, $2, $3, $4)', [t.token_hash, t.org_id, t.used_at, json(t)]);
  },
  async getClaimToken(tokenHash: string): Promise<ClaimTokenRecord | null> {
    const { rows } = await db.query('SELECT record FROM claim_tokens WHERE token_hash = $1', [tokenHash]);
    return (rows[0]?.record as ClaimTokenRecord | undefined) ?? null;
  },
  /** One conditional UPDATE: of two claims at once, exactly one wins. */
  async useClaimToken(tokenHash: string, usedAt: string, usedByOrgId: string): Promise<boolean> {
    const { rowCount } = await db.write(
      `UPDATE claim_tokens SET used_at = $2::timestamptz, record = (record::jsonb || jsonb_build_object('used_at', $4::text, 'used_by_org_id', $3::text))::json
       WHERE token_hash = $1 AND used_at IS NULL`,
      [tokenHash, usedAt, usedByOrgId, usedAt],
    );
    return (rowCount ?? 0) > 0;
  },
  async putSyntheticData(r: SyntheticDataRecord): Promise<void> {
    await db.write(
      `INSERT INTO synthetic_data (judge_id, org_id, status, record) VALUES ($1, $2, $3, $4)
       ON CONFLICT (judge_id) DO UPDATE SET org_id = excluded.org_id, status = excluded.status, record = excluded.record`,
      [r.judge_id, r.org_id, r.status, json(r)],
    );
  },
  async getSyntheticData(judgeId: string): Promise<SyntheticDataRecord | null> {
    const { rows } = await db.query('SELECT record FROM synthetic_data WHERE judge_id = $1', [judgeId]);
    return (rows[0]?.record as SyntheticDataRecord | undefined) ?? null;
  },
  async listPendingSyntheticData(): Promise<SyntheticDataRecord[]> {
    const { rows } = await db.query("SELECT record FROM synthetic_data WHERE status = 'pending' ORDER BY judge_id", []);
    return rows.map((r) => r.record as SyntheticDataRecord);
  },
});

/** Tables an organization's purge empties (purgeOrganization). */
export const SURFACE_TABLES = ['claim_tokens', 'synthetic_data'] as const;
