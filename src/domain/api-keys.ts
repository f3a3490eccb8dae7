// The caller's own API keys: list, create (secret shown once), revoke.
import { mintApiKey } from '../auth.ts';
import { notFound, TribunalError } from '../errors.ts';
import type { ApiKey } from '../schemas.ts';
import type { ApiKeyRecord } from '../store/types.ts';
import type { RequestContext } from '../context.ts';
import { pageQuery, toPage } from './pagination.ts';

type Ctx = Pick<RequestContext, 'store' | 'caller' | 'config'>;

export const apiKeyToWire = ({ org_id: _org, hash: _hash, ...wire }: ApiKeyRecord): ApiKey => wire;

export async function listApiKeys(ctx: Ctx, input: { limit?: number; cursor?: string }) {
  return toPage(await ctx.store.listApiKeys(ctx.caller.org.id, pageQuery(input, ctx.config.limits.pageSize)), apiKeyToWire);
}

/** Keys that still work (not revoked, not expired), counting no further than `stopAt`. */
async function liveKeyCount(ctx: Ctx, stopAt: number): Promise<number> {
  const now = Date.now();
  let count = 0;
  let after: { created_at: string; id: string } | undefined;
  do {
    const page = await ctx.store.listApiKeys(ctx.caller.org.id, { limit: 200, after });
    count += page.items.filter((k) => !k.revoked_at && !(k.expires_at && Date.parse(k.expires_at) <= now)).length;
    after = page.last;
  } while (after && count < stopAt);
  return count;
}

export async function createApiKey(ctx: Ctx, input: { name: string; expires_in_days?: number }) {
  // Each key has its own rate-limit budget, so an organization's live keys are capped (demo ones tighter).
  const cap = ctx.caller.org.is_demo ? ctx.config.limits.keysPerDemoOrg : ctx.config.limits.keysPerOrg;
  if ((await liveKeyCount(ctx, cap)) >= cap) {
    throw new TribunalError(
      'conflict',
      409,
      `Your organization already has ${cap} live API keys, the most it may hold (${ctx.caller.org.is_demo ? 'TRIBUNAL_MAX_KEYS_PER_DEMO_ORG for demo organizations' : 'TRIBUNAL_MAX_KEYS_PER_ORG'}); revoke one you no longer use first.`,
      { reason: 'too_many_keys' },
    );
  }
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
