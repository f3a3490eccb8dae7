// The organization's registered judge models (SPEC section 11): create, read, edit, delete, verify,
// and the lookup scoring uses. The API key is write-only: sealed with TRIBUNAL_SECRET_KEY before it
// is stored (secret-box.ts), opened only to make a call, and never part of any answer or message.
import type { RequestContext } from '../context.ts';
import { addressPolicy, defaultBaseUrl, verifyRegisteredModel } from '../engine/providers/index.ts';
import { refuseLiteral } from '../engine/providers/address-policy.ts';
import { notFound, TribunalError, validationError } from '../errors.ts';
import { looksLikeId, newId } from '../ids.ts';
import type { Model } from '../schemas.ts';
import { MAKE_SECRET_HINT, open, seal } from '../secret-box.ts';
import type { ModelRecord } from '../store/types.ts';
import { conflictToError } from './conflicts.ts';
import { pageQuery, toPage } from './pagination.ts';

type Ctx = Pick<RequestContext, 'store' | 'caller' | 'config'>;

export interface ModelInput {
  name: string;
  provider: Model['provider'];
  base_url?: string | null;
  model: string;
  api_key?: string | null;
  max_concurrency?: number;
  price?: Model['price'];
  supports_attachments?: boolean;
}

export const modelToWire = ({ org_id: _org, api_key_encrypted: _key, ...wire }: ModelRecord): Model => ({ ...wire, supports_attachments: wire.supports_attachments === true });

function secretKey(ctx: Ctx): Buffer {
  const secret = ctx.config.registry.secretKey;
  if (!secret) {
    throw new TribunalError(
      'not_available',
      503,
      `This server cannot keep model API keys: set TRIBUNAL_SECRET_KEY to the base64 of 32 random bytes (make one with: ${MAKE_SECRET_HINT}) and restart it. Keep the same secret across restarts and instances, or registered models stop working.`,
    );
  }
  return secret;
}

/**
 * base_url must be http(s), an origin plus a path (no query, no fragment), on an address the SSRF
 * policy allows (address-policy.ts) and, when the operator set TRIBUNAL_MODEL_HOSTS, on one of those
 * hosts. No base_url is the provider's own API, which must then be on that list too.
 */
export function checkBaseUrl(ctx: Pick<RequestContext, 'config'>, given: string | null | undefined, provider?: ModelRecord['provider']): void {
  const baseUrl = given ?? (provider ? defaultBaseUrl(provider) : null);
  if (baseUrl === null || baseUrl === undefined) return;
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw validationError(`base_url ${JSON.stringify(baseUrl)} is not a URL; give e.g. http://127.0.0.1:11434/v1.`, [{ field: 'base_url', message: 'not a URL' }]);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw validationError('base_url must be an http:// or https:// URL.', [{ field: 'base_url', message: 'not http(s)' }]);
  }
  if (url.username || url.password) {
    throw validationError('base_url must not hold credentials; pass the key as api_key (it is stored encrypted).', [{ field: 'base_url', message: 'holds credentials' }]);
  }
  // h-harden: a query or fragment would let the caller choose the path the server POSTs to.
  if (baseUrl.includes('?') || baseUrl.includes('#')) {
    throw validationError('base_url must be an origin plus a path, without a query (?) or fragment (#); e.g. https://api.example.com/v1.', [
      { field: 'base_url', message: 'has a query or fragment' },
    ]);
  }
  const hosts = ctx.config.registry.modelHosts;
  if (hosts && !hosts.includes(url.hostname) && !hosts.includes(url.host)) {
    throw validationError(`base_url's host ${url.host} is not one this server may call (TRIBUNAL_MODEL_HOSTS: ${hosts.join(', ')}); ask the operator to add it.`, [
      { field: 'base_url', message: 'host not allowed (TRIBUNAL_MODEL_HOSTS)' },
    ]);
  }
  const refused = refuseLiteral(url.hostname, addressPolicy(ctx.config));
  if (refused) throw validationError(`base_url is refused: ${refused.message}; see docs/DEPLOYMENT.md, "Security".`, [{ field: 'base_url', message: 'address not allowed' }]);
}

const hintOf = (key: string) => (key.length >= 8 ? key.slice(-4) : null);

/** The caller's model by id or exact name; another organization's model is not found. */
export async function findModel(ctx: Ctx, idOrName: string): Promise<ModelRecord> {
  const byId = looksLikeId(idOrName, 'mdl') ? await ctx.store.getModel(idOrName) : null;
  const found = byId && byId.org_id === ctx.caller.org.id ? byId : await ctx.store.getModelByName(ctx.caller.org.id, idOrName);
  if (!found) throw notFound('model', idOrName);
  return found;
}

export async function listModels(ctx: Ctx, input: { limit?: number; cursor?: string }) {
  return toPage(await ctx.store.listModels(ctx.caller.org.id, pageQuery(input, ctx.config.limits.pageSize)), modelToWire);
}

export async function getModel(ctx: Ctx, idOrName: string): Promise<Model> {
  return modelToWire(await findModel(ctx, idOrName));
}

export async function createModel(ctx: Ctx, input: ModelInput): Promise<Model> {
  // h-harden: a demo key is anonymous; it may not point this server at a host of its choosing.
  if (ctx.caller.org.is_demo && !ctx.config.registry.demoModels) {
    throw new TribunalError(
      'permission_denied',
      403,
      "Demo organizations cannot register models: they score with the server's own judge model. Ask the operator for an API key of a real organization.",
    );
  }
  const secret = secretKey(ctx);
  checkBaseUrl(ctx, input.base_url, input.provider);
  const now = new Date().toISOString();
  const id = newId('mdl');
  const record: ModelRecord = {
    id,
    org_id: ctx.caller.org.id,
    name: input.name,
    provider: input.provider,
    base_url: input.base_url ?? null,
    model: input.model,
    api_key_hint: input.api_key ? hintOf(input.api_key) : null,
    api_key_encrypted: input.api_key ? seal(secret, input.api_key, id) : null,
    max_concurrency: input.max_concurrency ?? 4,
    price: input.price ?? null,
    capabilities: null,
    supports_attachments: input.supports_attachments === true,
    verified_at: null,
    created_at: now,
    updated_at: now,
  };
  try {
    await ctx.store.createModel(record);
  } catch (err) {
    throw conflictToError(err, 'choose another name, or edit that model.');
  }
  return modelToWire(record);
}

export async function updateModel(ctx: Ctx, idOrName: string, patch: Partial<ModelInput>): Promise<Model> {
  const current = await findModel(ctx, idOrName);
  if (patch.base_url !== undefined || patch.provider !== undefined)
    checkBaseUrl(ctx, patch.base_url !== undefined ? patch.base_url : current.base_url, patch.provider ?? current.provider);
  const next: ModelRecord = { ...current, updated_at: new Date().toISOString() };
  if (patch.name !== undefined) next.name = patch.name;
  if (patch.provider !== undefined) next.provider = patch.provider;
  if (patch.base_url !== undefined) next.base_url = patch.base_url;
  if (patch.model !== undefined) next.model = patch.model;
  if (patch.max_concurrency !== undefined) next.max_concurrency = patch.max_concurrency;
  if (patch.price !== undefined) next.price = patch.price;
  if (patch.supports_attachments !== undefined) next.supports_attachments = patch.supports_attachments;
  if (patch.api_key !== undefined) {
    next.api_key_encrypted = patch.api_key === null ? null : seal(secretKey(ctx), patch.api_key, current.id);
    next.api_key_hint = patch.api_key === null ? null : hintOf(patch.api_key);
  }
  // What verify found holds for the endpoint it talked to; another endpoint must be verified again.
  if (next.provider !== current.provider || next.base_url !== current.base_url || next.model !== current.model) {
    next.capabilities = null;
    next.verified_at = null;
  }
  try {
    if (!(await ctx.store.updateModel(next))) throw notFound('model', idOrName);
  } catch (err) {
    throw conflictToError(err, 'choose another name.');
  }
  return modelToWire(next);
}

export async function deleteModel(ctx: Ctx, idOrName: string): Promise<Model> {
  const current = await findModel(ctx, idOrName);
  await ctx.store.deleteModel(current.id);
  return modelToWire(current);
}

/** The model's API key in the clear, for a call; a clear error when it cannot be opened. */
export function modelApiKey(ctx: Pick<RequestContext, 'config'>, record: ModelRecord): string | null {
  if (record.api_key_encrypted === null) return null;
  const secret = ctx.config.registry.secretKey;
  const key = secret ? open(secret, record.api_key_encrypted, record.id) : null;
  if (key === null) {
    throw new TribunalError(
      'model_unavailable',
      503,
      `The API key of model ${record.name} cannot be opened: it was stored under another TRIBUNAL_SECRET_KEY${secret ? '' : ' and none is set now'}. Restore the original secret, or PATCH the model with its api_key again.`,
    );
  }
  return key;
}

/** One tiny real call per strategy: stores and answers what the model supports, or the provider's error. */
export async function verifyModel(ctx: Ctx, idOrName: string): Promise<Model> {
  const record = await findModel(ctx, idOrName);
  checkBaseUrl(ctx, record.base_url, record.provider);
  const capabilities = await verifyRegisteredModel(ctx.config, record, modelApiKey(ctx, record));
  const next: ModelRecord = { ...record, capabilities, verified_at: new Date().toISOString() };
  await ctx.store.updateModel(next);
  return modelToWire(next);
}

/** The registered model an evaluator's `model` names in the caller's organization, or null. */
export async function registeredModelNamed(ctx: Pick<RequestContext, 'store' | 'caller'>, name: string): Promise<ModelRecord | null> {
  return ctx.store.getModelByName(ctx.caller.org.id, name);
}
