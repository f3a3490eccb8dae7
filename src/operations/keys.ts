// REST-only operations on access: the organization's API keys and the demo-user endpoint. Never
// registered with MCP.
import { z } from 'zod';
import { createApiKey, listApiKeys, revokeApiKey } from '../domain/api-keys.ts';
import { createOrganization } from '../domain/orgs.ts';
import { ApiKey, page, PageParams } from '../schemas.ts';
import { defineTool, type Services } from '../tool.ts';
import { READ, WRITE } from './annotations.ts';

const CreateApiKey = z.object({
  name: z.string().min(1).max(200).describe('a label to recognise the key by'),
  expires_in_days: z.number().int().min(1).max(3650).optional().describe('days until the key expires; default never (demo organizations: the demo key lifetime)'),
});

export const listApiKeysOperation = defineTool({
  name: 'list_api_keys',
  title: "List your organization's API keys (never their secrets)",
  description: "Your organization's API keys, newest first; secrets are never shown again.",
  input: z.object({ ...PageParams }),
  output: page(ApiKey),
  annotations: READ,
  handler: (input, ctx) => listApiKeys(ctx, input),
});

export const createApiKeyOperation = defineTool({
  name: 'create_api_key',
  title: 'Create an API key; its secret (api_key) is in this answer only',
  description: 'Create an API key for your organization (up to TRIBUNAL_MAX_KEYS_PER_ORG live keys; fewer for demo organizations).',
  input: CreateApiKey,
  output: ApiKey.extend({ api_key: z.string().describe('the secret key: shown once, store it now') }),
  annotations: WRITE,
  handler: (input, ctx) => createApiKey(ctx, input),
});

export const revokeApiKeyOperation = defineTool({
  name: 'revoke_api_key',
  title: 'Revoke an API key: it stops working at once',
  description: 'Revoke one of your API keys.',
  input: z.object({ key_id: z.string().min(1).describe('id of the key') }),
  output: ApiKey,
  annotations: WRITE,
  handler: ({ key_id }, ctx) => revokeApiKey(ctx, key_id),
});

/** No caller: anyone may make a demo user (rate limited per client address by the door). */
export const createDemoUser = defineTool({
  name: 'create_demo_user',
  title: 'Create a demo organization with a temporary API key (no auth)',
  description: 'A new demo organization, its default project and a temporary key.',
  input: z.object({}),
  output: z.object({
    api_key: z.string().describe('the demo key: shown once'),
    expires_at: z.string().nullable(),
    organization_id: z.string(),
    project_id: z.string(),
  }),
  annotations: WRITE,
  async handler(_input, ctx: Services) {
    const made = await createOrganization(ctx.store, { name: 'Demo organization', isDemo: true, keyTtlMs: ctx.config.demoKeyTtlMs });
    return { api_key: made.api_key, expires_at: made.expires_at, organization_id: made.organization.id, project_id: made.project_id };
  },
});
