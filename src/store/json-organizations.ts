// The JSON store's organizations (db.json "organizations", keyed by id). An organization's purge
// reaches every file of the data directory, so the store gives it (json-store.ts).
import type { Organization } from '../schemas.ts';
import { clone } from './json-data.ts';
import type { OrganizationStore } from './parts/accounts.ts';
import { newestFirst } from './types.ts';

/** The organization part of the JSON store, over its table (read late: init loads db.json), the commit and the purge. */
export function jsonOrganizations(table: () => Record<string, Organization>, save: () => Promise<void>, purge: (orgId: string) => Promise<void>): OrganizationStore {
  return {
    async createOrganization(org) {
      table()[org.id] = clone(org);
      await save();
    },
    async getOrganization(id) {
      return clone(table()[id] ?? null);
    },
    async findOrganizationByName(name) {
      const found = Object.values(table()).filter((o) => o.name === name && !o.is_demo);
      found.sort(newestFirst);
      return clone(found[found.length - 1] ?? null);
    },
    async listDemoOrganizations(createdBefore, limit) {
      const found = Object.values(table()).filter((o) => o.is_demo && o.created_at < createdBefore);
      return clone(found.sort(newestFirst).reverse().slice(0, limit));
    },
    purgeOrganization: purge,
  };
}
