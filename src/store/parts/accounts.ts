// Store parts for who owns things: organizations, their API keys and projects.
import type { ApiKey, Organization, Project } from '../../schemas.ts';
import type { Page, PageQuery } from './page.ts';

export type ApiKeyRecord = ApiKey & { org_id: string; hash: string };
export type ProjectRecord = Project & { org_id: string };

export interface OrganizationStore {
  createOrganization(org: Organization): Promise<void>;
  getOrganization(id: string): Promise<Organization | null>;
  findOrganizationByName(name: string): Promise<Organization | null>;
  /** Demo organizations created before `createdBefore` (ISO-8601), oldest first, at most `limit`. */
  listDemoOrganizations(createdBefore: string, limit: number): Promise<Organization[]>;
  /** Deletes an organization and everything it owns: keys, projects, evaluators, judges (every version), logs. */
  purgeOrganization(orgId: string): Promise<void>;
}

export interface ApiKeyStore {
  createApiKey(key: ApiKeyRecord): Promise<void>;
  getApiKeyByPrefix(prefix: string): Promise<ApiKeyRecord | null>;
  /**
   * The key by its prefix with its organization (null when the organization is gone), in one read:
   * authentication's (one round trip on PostgreSQL, not two). Never cached, so a revoke counts on
   * the next request. The records may be read-only (the JSON store's snapshots): never change them.
   */
  getApiKeyWithOrganization(prefix: string): Promise<{ key: ApiKeyRecord; org: Organization | null } | null>;
  getApiKey(id: string): Promise<ApiKeyRecord | null>;
  listApiKeys(orgId: string, page: PageQuery): Promise<Page<ApiKeyRecord>>;
  updateApiKey(id: string, patch: Partial<Pick<ApiKeyRecord, 'revoked_at' | 'last_used_at'>>): Promise<ApiKeyRecord | null>;
}

export interface ProjectStore {
  /** Fails with a conflict error when the org already has a default project and this one is default too. */
  createProject(project: ProjectRecord): Promise<void>;
  getProject(id: string): Promise<ProjectRecord | null>;
  getDefaultProject(orgId: string): Promise<ProjectRecord | null>;
  listProjects(orgId: string, page: PageQuery): Promise<Page<ProjectRecord>>;
}
