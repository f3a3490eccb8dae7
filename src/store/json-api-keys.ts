// The JSON store's API keys (db.json "api_keys", keyed by id) with an index by prefix: every request
// looks its key up by prefix, so that lookup is a map read, not a scan.
import { clone, orgPage } from './json-data.ts';
import { snapshotOf } from './json-snapshots.ts';
import type { ApiKeyStore } from './parts/accounts.ts';
import type { Organization } from '../schemas.ts';
import { StoreConflictError, type ApiKeyRecord } from './types.ts';

/**
 * The API key part of the JSON store, over its table (read late: init loads db.json), the commit,
 * and the organizations' table (a key is read with its organization by authentication).
 */
export function jsonApiKeys(table: () => Record<string, ApiKeyRecord>, save: () => Promise<void>, organizations: () => Record<string, Organization>): ApiKeyStore {
  // prefix -> key id, built from the loaded keys on first use. An organization's purge takes its keys
  // out of the table only, so an entry counts only while its key is still there with that prefix.
  let byPrefix: Map<string, string> | undefined;
  const keyWithPrefix = (prefix: string): ApiKeyRecord | undefined => {
    byPrefix ??= new Map(Object.values(table()).map((key) => [key.prefix, key.id]));
    const id = byPrefix.get(prefix);
    const key = id === undefined ? undefined : table()[id];
    return key?.prefix === prefix ? key : undefined;
  };
  return {
    async createApiKey(key) {
      if (keyWithPrefix(key.prefix)) throw new StoreConflictError({ kind: 'key_prefix_taken' });
      table()[key.id] = clone(key);
      byPrefix!.set(key.prefix, key.id);
      await save();
    },
    async getApiKeyByPrefix(prefix) {
      return clone(keyWithPrefix(prefix) ?? null);
    },
    // Every request reads its key here: read-only snapshots, not copies (json-snapshots.ts). A key
    // is replaced, never changed in place (updateApiKey), and an organization is never changed.
    async getApiKeyWithOrganization(prefix) {
      const key = keyWithPrefix(prefix);
      return key ? { key: snapshotOf(key), org: snapshotOf(organizations()[key.org_id]) } : null;
    },
    async getApiKey(id) {
      return clone(table()[id] ?? null);
    },
    listApiKeys: async (orgId, page) => orgPage(table(), orgId, page),
    async updateApiKey(id, patch) {
      const current = table()[id];
      if (!current) return null;
      // A new record in the table, not the old one changed: snapshots of the old one stay as read.
      const key = Object.assign(clone(current), patch);
      table()[id] = key;
      await save();
      return clone(key);
    },
  };
}
