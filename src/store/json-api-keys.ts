// The JSON store's API keys (db.json "api_keys", keyed by id) with an index by prefix: every request
// looks its key up by prefix, so that lookup is a map read, not a scan.
import { clone, pageNewestFirst } from './json-data.ts';
import { StoreConflictError, type ApiKeyRecord, type PageQuery } from './types.ts';

export class JsonApiKeyTable {
  private readonly byPrefix = new Map<string, string>();

  constructor(
    private readonly table: () => Record<string, ApiKeyRecord>,
    private readonly save: () => Promise<void>,
  ) {}

  /** Builds the prefix index from the loaded keys (at start-up). */
  index(): void {
    this.byPrefix.clear();
    for (const key of Object.values(this.table())) this.byPrefix.set(key.prefix, key.id);
  }
  /** Forgets one organization's keys (the caller commits). */
  dropOrganization(orgId: string): void {
    const keys = this.table();
    for (const key of Object.values(keys)) if (key.org_id === orgId) this.byPrefix.delete(key.prefix), delete keys[key.id];
  }

  async create(key: ApiKeyRecord): Promise<void> {
    if (this.byPrefix.has(key.prefix)) throw new StoreConflictError({ kind: 'key_prefix_taken' });
    this.table()[key.id] = clone(key);
    this.byPrefix.set(key.prefix, key.id);
    await this.save();
  }
  async byPrefixOf(prefix: string) {
    const id = this.byPrefix.get(prefix);
    return id ? clone(this.table()[id] ?? null) : null;
  }
  async get(id: string) {
    return clone(this.table()[id] ?? null);
  }
  async list(orgId: string, page: PageQuery) {
    return pageNewestFirst(this.table(), (k) => k.org_id === orgId, page);
  }
  async update(id: string, patch: Partial<Pick<ApiKeyRecord, 'revoked_at' | 'last_used_at'>>) {
    const key = this.table()[id];
    if (!key) return null;
    Object.assign(key, patch);
    await this.save();
    return clone(key);
  }
}
