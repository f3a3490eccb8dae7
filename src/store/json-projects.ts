// The JSON store's projects (db.json "projects", keyed by id). Few per organization, so lookups are
// plain scans; at most one default project per organization, names unique within it.
import { clone, orgPage } from './json-data.ts';
import type { ProjectStore } from './parts/accounts.ts';
import { StoreConflictError, type ProjectRecord } from './types.ts';

/** The project part of the JSON store, over its table (read late: init loads db.json) and the commit. */
export function jsonProjects(table: () => Record<string, ProjectRecord>, save: () => Promise<void>): ProjectStore {
  return {
    async createProject(project) {
      const siblings = Object.values(table()).filter((p) => p.org_id === project.org_id);
      if (project.is_default && siblings.some((p) => p.is_default)) throw new StoreConflictError({ kind: 'default_project_exists' });
      if (siblings.some((p) => p.name === project.name)) throw new StoreConflictError({ kind: 'name_taken', resource: 'project', name: project.name });
      table()[project.id] = clone(project);
      await save();
    },
    async getProject(id) {
      return clone(table()[id] ?? null);
    },
    async getDefaultProject(orgId) {
      return clone(Object.values(table()).find((p) => p.org_id === orgId && p.is_default) ?? null);
    },
    listProjects: async (orgId, page) => orgPage(table(), orgId, page),
  };
}
