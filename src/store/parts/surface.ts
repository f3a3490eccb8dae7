// Store part for claim tokens and synthetic data (room surface, issue 30; store/surface-types.ts).
import type { ClaimTokenRecord, SyntheticDataRecord } from '../surface-types.ts';

export interface SurfaceStore {
  /** A token is stored by its hash; a second with the same hash is a conflict. */
  createClaimToken(token: ClaimTokenRecord): Promise<void>;
  getClaimToken(tokenHash: string): Promise<ClaimTokenRecord | null>;
  /** Marks the token used, only when it is not yet: false (changing nothing) when it was used already or is unknown. */
  useClaimToken(tokenHash: string, usedAt: string, usedByOrgId: string): Promise<boolean>;
  /** Stores (or replaces) a judge's synthetic data, one per judge. */
  putSyntheticData(record: SyntheticDataRecord): Promise<void>;
  getSyntheticData(judgeId: string): Promise<SyntheticDataRecord | null>;
  /** Every generation still pending, in any organization (resumed at start-up). */
  listPendingSyntheticData(): Promise<SyntheticDataRecord[]>;
}
