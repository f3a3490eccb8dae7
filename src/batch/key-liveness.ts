// A batch run lives no longer than the key that started it (issue 24, item 4; h-harden): before a
// chunk and before each row, the run's key is checked (revoked, expired, gone), at most once a second
// per key, and a run whose key is no longer valid is cancelled with the reason. Rows in flight finish
// and are kept; no row starts after that.
import type { BatchExecutionRecord, Store } from '../store/types.ts';

const CHECK_EVERY_MS = 1000;

/** Why the key no longer runs work, or null while it is valid. */
export function keyEndReason(key: { revoked_at: string | null; expires_at: string | null } | null, now = Date.now()): string | null {
  if (!key) return 'the API key that started the run was deleted';
  if (key.revoked_at) return `the API key that started the run was revoked (${key.revoked_at})`;
  if (key.expires_at && Date.parse(key.expires_at) <= now) return `the API key that started the run expired (${key.expires_at})`;
  return null;
}

export class KeyLiveness {
  private readonly checked = new Map<string, { at: number; reason: string | null }>();

  constructor(private readonly store: Store) {}

  /** Null while the run's key is valid; else the run is cancelled (if still unfinished) and the reason answered. */
  async endIfKeyEnded(batch: BatchExecutionRecord): Promise<string | null> {
    const now = Date.now();
    let seen = this.checked.get(batch.key_id);
    if (!seen || now - seen.at >= CHECK_EVERY_MS) {
      seen = { at: now, reason: keyEndReason(await this.store.getApiKey(batch.key_id), now) };
      this.checked.set(batch.key_id, seen);
      if (this.checked.size > 10_000) this.checked.clear();
    }
    if (!seen.reason) return null;
    await this.store.updateBatchExecution(batch.id, {
      status: 'cancelled',
      error: `Cancelled: ${seen.reason}.`,
      finished_at: new Date().toISOString(),
      if_status: ['queued', 'running'],
    });
    return seen.reason;
  }
}
