// The JSON store's claim tokens (db.json "claim_tokens", keyed by token hash) and synthetic data
// (db.json "synthetic_data", keyed by judge id); both absent in files written before them.
import { StoreConflictError, type ClaimTokenRecord, type SyntheticDataRecord } from './types.ts';

export interface SurfaceTables {
  claim_tokens: Record<string, ClaimTokenRecord>;
  synthetic_data: Record<string, SyntheticDataRecord>;
}

export class JsonSurfaceTables {
  constructor(
    private readonly tables: () => SurfaceTables,
    private readonly save: () => Promise<void>,
  ) {}

  async createClaimToken(token: ClaimTokenRecord): Promise<void> {
    const t = this.tables().claim_tokens;
    if (t[token.token_hash]) throw new StoreConflictError({ kind: 'id_taken', resource: 'judge', id: token.judge_id });
    t[token.token_hash] = structuredClone(token);
    await this.save();
  }
  async getClaimToken(tokenHash: string): Promise<ClaimTokenRecord | null> {
    return structuredClone(this.tables().claim_tokens[tokenHash] ?? null);
  }
  async useClaimToken(tokenHash: string, usedAt: string, usedByOrgId: string): Promise<boolean> {
    const token = this.tables().claim_tokens[tokenHash];
    if (!token || token.used_at !== null) return false;
    token.used_at = usedAt;
    token.used_by_org_id = usedByOrgId;
    await this.save();
    return true;
  }
  async putSyntheticData(record: SyntheticDataRecord): Promise<void> {
    this.tables().synthetic_data[record.judge_id] = structuredClone(record);
    await this.save();
  }
  async getSyntheticData(judgeId: string): Promise<SyntheticDataRecord | null> {
    return structuredClone(this.tables().synthetic_data[judgeId] ?? null);
  }
  async listPendingSyntheticData(): Promise<SyntheticDataRecord[]> {
    return Object.values(this.tables().synthetic_data)
      .filter((r) => r.status === 'pending')
      .map((r) => structuredClone(r));
  }
  /** What an organization leaves behind when it is purged. */
  purgeOrganization(orgId: string): void {
    const { claim_tokens, synthetic_data } = this.tables();
    for (const [hash, t] of Object.entries(claim_tokens)) if (t.org_id === orgId) delete claim_tokens[hash];
    for (const [id, r] of Object.entries(synthetic_data)) if (r.org_id === orgId) delete synthetic_data[id];
  }
}
