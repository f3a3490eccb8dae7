// The PostgreSQL store's account parts: organizations (and the purge of everything one owns), API
// keys and projects. Each is a part over the shared connection (postgres-store.ts assembles them).
import type { Organization } from '../../schemas.ts';
import type { ApiKeyRecord, ApiKeyStore, OrganizationStore, ProjectRecord, ProjectStore } from '../parts/accounts.ts';
import type { ConflictReason, PageQuery } from '../types.ts';
import { purgeOrgBatchJobs } from './batch-jobs.ts';
import { extraOf, KEY_COLUMNS, keyFromRow, ORG_COLUMNS, ORG_TABLES, orgFromRow, PageSql, placeholders, PROJECT_COLUMNS, projectFromRow, toPage, type Row } from './codecs.ts';
import type { PgConnection } from './connection.ts';
import { SURFACE_TABLES } from './surface.ts';

export const pgOrganizations = (db: PgConnection): OrganizationStore => ({
  async createOrganization(org: Organization): Promise<void> {
    await db.write(
      `INSERT INTO organizations (${ORG_COLUMNS.join(', ')}, extra) VALUES (${placeholders(5)})`,
      [org.id, org.name, org.is_demo, org.created_at, extraOf(org, ORG_COLUMNS)],
      () => ({ kind: 'id_taken', resource: 'organization', id: org.id }),
    );
  },
  getOrganization(id: string) {
    return db.one('SELECT * FROM organizations WHERE id = $1', [id], orgFromRow);
  },
  findOrganizationByName(name: string) {
    // The oldest, as in the JSON store: a name taken twice resolves to the first one made.
    return db.one('SELECT * FROM organizations WHERE name = $1 AND NOT is_demo ORDER BY created_at, id LIMIT 1', [name], orgFromRow);
  },
  async listDemoOrganizations(createdBefore: string, limit: number) {
    const { rows } = await db.query('SELECT * FROM organizations WHERE is_demo AND created_at < $1 ORDER BY created_at, id LIMIT $2', [createdBefore, limit]);
    return rows.map(orgFromRow);
  },
  async purgeOrganization(orgId: string): Promise<void> {
    await db.transaction(async (c) => {
      await c.query('DELETE FROM evaluator_versions WHERE id IN (SELECT id FROM evaluators WHERE org_id = $1)', [orgId]);
      await c.query('DELETE FROM judge_versions WHERE id IN (SELECT id FROM judges WHERE org_id = $1)', [orgId]);
      // h-harden: the queue's jobs hold the runs' item text; they go before the runs do.
      await purgeOrgBatchJobs(c, orgId);
      for (const table of ORG_TABLES) await c.query(`DELETE FROM ${table} WHERE org_id = $1`, [orgId]);
      for (const table of SURFACE_TABLES) await c.query(`DELETE FROM ${table} WHERE org_id = $1`, [orgId]);
      await c.query('DELETE FROM organizations WHERE id = $1', [orgId]);
    });
  },
});

/** Rows of one organization, newest first: the page query that keys, projects and models share. */
export async function orgPage<T extends { created_at: string; id: string }>(db: PgConnection, table: string, orgId: string, page: PageQuery, fromRow: (r: Row) => T) {
  const q = new PageSql();
  q.where.push(`org_id = ${q.p(orgId)}`);
  return toPage((await db.query(q.sql(table, page), q.params)).rows, page, fromRow);
}

/**
 * What every request's authentication reads, in one round trip and prepared by name (issue 31): the
 * key by its prefix and its organization. Read fresh each time (no cache), so a revoke or an expiry
 * is honoured on the next request on every instance. Columns named, not k.*: a column added later
 * would change a prepared statement's result type.
 */
const KEY_WITH_ORG = {
  name: 'tribunal_api_key_with_org_v1',
  text: `SELECT ${[...KEY_COLUMNS, 'extra'].map((c) => `k.${c}`).join(', ')}, ${[...ORG_COLUMNS, 'extra'].map((c) => `o.${c} AS organization_${c}`).join(', ')}
           FROM api_keys k LEFT JOIN organizations o ON o.id = k.org_id WHERE k.prefix = $1`,
};
const orgOfRow = (r: Row): Organization | null =>
  r.organization_id === null
    ? null
    : orgFromRow({ id: r.organization_id, name: r.organization_name, is_demo: r.organization_is_demo, created_at: r.organization_created_at, extra: r.organization_extra });

export const pgApiKeys = (db: PgConnection): ApiKeyStore => {
  const getApiKey = (id: string) => db.one('SELECT * FROM api_keys WHERE id = $1', [id], keyFromRow);
  return {
    getApiKeyWithOrganization(prefix: string) {
      return db.one(KEY_WITH_ORG, [prefix], (r) => ({ key: keyFromRow(r), org: orgOfRow(r) }));
    },
    async createApiKey(key: ApiKeyRecord): Promise<void> {
      await db.write(
        `INSERT INTO api_keys (${KEY_COLUMNS.join(', ')}, extra) VALUES (${placeholders(10)})`,
        [key.id, key.org_id, key.name, key.prefix, key.hash, key.created_at, key.expires_at, key.last_used_at, key.revoked_at, extraOf(key, KEY_COLUMNS)],
        (c) => (c === 'api_keys_prefix_key' ? { kind: 'key_prefix_taken' } : { kind: 'id_taken', resource: 'api_key', id: key.id }),
      );
    },
    getApiKeyByPrefix(prefix: string) {
      return db.one('SELECT * FROM api_keys WHERE prefix = $1', [prefix], keyFromRow);
    },
    getApiKey,
    listApiKeys: (orgId, page) => orgPage(db, 'api_keys', orgId, page, keyFromRow),
    async updateApiKey(id: string, patch: Partial<Pick<ApiKeyRecord, 'revoked_at' | 'last_used_at'>>) {
      const sets: string[] = [];
      const params: unknown[] = [id];
      for (const field of ['revoked_at', 'last_used_at'] as const) {
        if (field in patch && patch[field] !== undefined) {
          params.push(patch[field]);
          sets.push(`${field} = $${params.length}`);
        }
      }
      if (!sets.length) return getApiKey(id);
      const { rows } = await db.write(`UPDATE api_keys SET ${sets.join(', ')} WHERE id = $1 RETURNING *`, params);
      return rows[0] ? keyFromRow(rows[0]) : null;
    },
  };
};

export const pgProjects = (db: PgConnection): ProjectStore => ({
  async createProject(project: ProjectRecord): Promise<void> {
    await db.write(
      `INSERT INTO projects (${PROJECT_COLUMNS.join(', ')}, extra) VALUES (${placeholders(7)})`,
      [project.id, project.org_id, project.name, project.description, project.is_default, project.created_at, extraOf(project, PROJECT_COLUMNS)],
      (c): ConflictReason =>
        c === 'projects_one_default'
          ? { kind: 'default_project_exists' }
          : c === 'projects_unique_name'
            ? { kind: 'name_taken', resource: 'project', name: project.name }
            : { kind: 'id_taken', resource: 'project', id: project.id },
    );
  },
  getProject(id: string) {
    return db.one('SELECT * FROM projects WHERE id = $1', [id], projectFromRow);
  },
  getDefaultProject(orgId: string) {
    return db.one('SELECT * FROM projects WHERE org_id = $1 AND is_default', [orgId], projectFromRow);
  },
  listProjects: (orgId, page) => orgPage(db, 'projects', orgId, page, projectFromRow),
});
