// The JSON store's projects (db.json "projects", keyed by id). Few per organization, so lookups are
// plain scans; at most one default project per organization, names unique within it.
import { clone, pageNewestFirst } from './json-data.ts';
import { StoreConflictError, type PageQuery, type ProjectRecord } from './types.ts';

export class JsonProjectTable {
  constructor(
    private readonly table: () => Record<string, ProjectRecord>,
    private readonly save: () => Promise<void>,
  ) {}

  async create(project: ProjectRecord): Promise<void> {
    const siblings = Object.values(this.table()).filter((p) => p.org_id === project.org_id);
    if (project.is_default && siblings.some((p) => p.is_default)) throw new StoreConflictError({ kind: 'default_project_exists' });
    if (siblings.some((p) => p.name === project.name)) throw new StoreConflictError({ kind: 'name_taken', resource: 'project', name: project.name });
    this.table()[project.id] = clone(project);
    await this.save();
  }
  async get(id: string) {
    return clone(this.table()[id] ?? null);
  }
  async getDefault(orgId: string) {
    return clone(Object.values(this.table()).find((p) => p.org_id === orgId && p.is_default) ?? null);
  }
  async list(orgId: string, page: PageQuery) {
    return pageNewestFirst(this.table(), (p) => p.org_id === orgId, page);
  }
}
