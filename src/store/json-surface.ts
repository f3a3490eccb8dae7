// The JSON store's claim tokens (db.json "claim_tokens", keyed by token hash) and synthetic data
// (db.json "synthetic_data", keyed by judge id); both absent in files written before them.
import { clone } from './json-data.ts';
import type { SurfaceStore } from './parts/surface.ts';
import { StoreConflictError, type ClaimTokenRecord, type SyntheticDataRecord } from './types.ts';

export interface SurfaceTables {
  claim_tokens: Record<string, ClaimTokenRecord>;
  synthetic_data: Record<string, SyntheticDataRecord>;
}

/** The surface part of the JSON store, over its tables (read late: init loads db.json) and the commit. */
export function jsonSurface(tables: () => SurfaceTables, save: () => Promise<void>): SurfaceStore {
  return {
    async createClaimToken(token) {
      const t = tables().claim_tokens;
      if (t[token.token_hash]) throw new StoreConflictError({ kind: 'id_taken', resource: 'judge', id: token.judge_id });
      t[token.token_hash] = clone(token);
      await save();
    },
    async getClaimToken(tokenHash) {
      return clone(tables().claim_tokens[tokenHash] ?? null);
    },
    async useClaimToken(tokenHash, usedAt, usedByOrgId) {
      const token = tables().claim_tokens[tokenHash];
      if (!token || token.used_at !== null) return false;
      token.used_at = usedAt;
      token.used_by_org_id = usedByOrgId;
      await save();
      return true;
    },
    async putSyntheticData(record) {
      tables().synthetic_data[record.judge_id] = clone(record);
      await save();
    },
    async getSyntheticData(judgeId) {
      return clone(tables().synthetic_data[judgeId] ?? null);
    },
    async listPendingSyntheticData() {
      return Object.values(tables().synthetic_data)
        .filter((r) => r.status === 'pending')
        .map((r) => clone(r));
    },
  };
}
