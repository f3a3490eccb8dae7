// The caller's own API keys: list, create (secret shown once), revoke.
import { mintApiKey } from '../auth.ts';
import { notFound } from '../errors.ts';
import type { ApiKey } from '../schemas.ts';
import type { ApiKeyRecord } from '../store/types.ts';
import type { RequestContext } from '../context.ts';
import { pageQuery, toPage } from './pagination.ts';

type Ctx = Pick<RequestContext, 'store' | 'caller' | 'config'>;

export const apiKeyToWire = ({ org_id: _org, hash: _hash, ...wire }: ApiKeyRecord): ApiKey => wire;

export async function listApiKeys(ctx: Ctx, input: { limit?: number; cursor?: string }) {
  return toPage(await ctx.store.listApiKeys(ctx.caller.org.id, pageQuery(input, ctx.config.limits.pageSize)), apiKeyToWire);
}

export async function createApiKey(ctx: Ctx, input: { name: string; expires_in_days?: number }) {
  let ttlMs = input.expires_in_days ? input.expires_in_days * 86_400_000 : null;
  // A demo organization cannot mint keys that outlive the demo.
  if (ctx.caller.org.is_demo) ttlMs = Math.min(ttlMs ?? Infinity, ctx.config.demoKeyTtlMs);
  const expiresAt = ttlMs ? new Date(Date.now() + ttlMs).toISOString() : null;
  const { secret, record } = mintApiKey(ctx.caller.org.id, input.name, expiresAt);
  await ctx.store.createApiKey(record);
  return { ...apiKeyToWire(record), api_key: secret };
}

export async function revokeApiKey(ctx: Ctx, keyId: string) {
  const key = await ctx.store.getApiKey(keyId);
  if (!key || key.org_id !== ctx.caller.org.id) throw notFound('API key', keyId);
  if (key.revoked_at) return apiKeyToWire(key);
  const updated = await ctx.store.updateApiKey(keyId, { revoked_at: new Date().toISOString() });
  return apiKeyToWire(updated ?? key);
}
