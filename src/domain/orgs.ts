// Organizations come with a default project and a first key; demo and self-hosted ones alike.
import { mintApiKey } from '../auth.ts';
import { newId } from '../ids.ts';
import type { Organization } from '../schemas.ts';
import type { Store } from '../store/types.ts';

export interface NewOrganization {
  organization: Organization;
  project_id: string;
  api_key: string;
  key_id: string;
  expires_at: string | null;
}

export async function createOrganization(store: Store, opts: { name: string; isDemo: boolean; keyName?: string; keyTtlMs?: number | null }): Promise<NewOrganization> {
  const now = new Date();
  const organization: Organization = { id: newId('org'), name: opts.name, is_demo: opts.isDemo, created_at: now.toISOString() };
  await store.createOrganization(organization);
  const projectId = newId('prj');
  await store.createProject({
    id: projectId,
    org_id: organization.id,
    name: 'Default',
    description: 'Resources created without a project_id land here.',
    is_default: true,
    created_at: now.toISOString(),
  });
  const expiresAt = opts.keyTtlMs ? new Date(now.getTime() + opts.keyTtlMs).toISOString() : null;
  const { secret, record } = mintApiKey(organization.id, opts.keyName ?? (opts.isDemo ? 'demo key' : 'first key'), expiresAt);
  await store.createApiKey(record);
  return { organization, project_id: projectId, api_key: secret, key_id: record.id, expires_at: expiresAt };
}
