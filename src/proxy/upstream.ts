// The proxy's upstream: a registered model of the caller's organization (SPEC section 11), called
// with its own stored key (never the caller's), or else one the server's configuration offers by
// name (TRIBUNAL_PROXY_UPSTREAMS, with the key from the environment). Calls go over a keep-alive
// undici pool. The body comes back as a stream so that SSE chunks can be passed on as they arrive;
// what is read whole goes through the one bound every upstream read shares (engine/providers/bounded-body.ts).
import { Agent } from 'undici';
import type { ProxyUpstream } from '../schemas/proxy-upstreams.ts';
import type { RequestContext } from '../context.ts';
import { checkBaseUrl, modelApiKey, registeredModelNamed } from '../domain/models.ts';
import { DEFAULT_UPSTREAM_MAX_BYTES, readBoundedBody, UpstreamTooLargeError } from '../engine/providers/bounded-body.ts';
import { TribunalError, validationError } from '../errors.ts';
import type { ModelRecord } from '../store/types.ts';
import { dispatchPost, type UpstreamBody, type UpstreamCancel } from './upstream-call.ts';

/** The most of an upstream answer read whole (a JSON answer; one SSE event): the bound of every upstream read. */
export const MAX_UPSTREAM_BYTES = DEFAULT_UPSTREAM_MAX_BYTES;
const OPENAI_BASE_URL = 'https://api.openai.com/v1';

const dispatcher = new Agent({ keepAliveTimeout: 30_000, headersTimeout: 300_000, bodyTimeout: 300_000 });

export interface UpstreamTarget {
  /** What the log and errors name it by (the registered model's or the configured upstream's name); its upstream model id; its price. */
  record: Pick<ModelRecord, 'name' | 'model' | 'price'>;
  url: string;
  apiKey: string | null;
}

// Per registered model version: its base URL checked against the address policy and its key opened.
// Both cost real CPU on every call (a cipher set-up, a URL parse and a block-list walk) and neither
// changes until the model is edited (a new updated_at), so a proxy call pays them once per version.
const checked = new Map<string, { base: string; apiKey: string | null }>();

function openedModel(ctx: RequestContext, record: ModelRecord): { base: string; apiKey: string | null } {
  const version = `${record.id}@${record.updated_at}`;
  let hit = checked.get(version);
  if (!hit) {
    checkBaseUrl(ctx, record.base_url);
    hit = { base: (record.base_url ?? OPENAI_BASE_URL).replace(/\/+$/, ''), apiKey: modelApiKey(ctx, record) };
    if (checked.size >= 1000) checked.delete(checked.keys().next().value!);
    checked.set(version, hit);
  }
  return hit;
}

/** A configured upstream, when the caller's organization may use it (demo organizations only when allowed). */
function serverUpstream(ctx: RequestContext, upstream: ProxyUpstream, api: 'chat/completions' | 'responses'): UpstreamTarget {
  if (ctx.caller.org.is_demo && !upstream.allowDemo) {
    throw new TribunalError(
      'permission_denied',
      403,
      `The server's upstream ${upstream.name} is not offered to demo organizations (its operator pays for every call). Register a model of your own (POST /v1/models/) with a real organization's key.`,
    );
  }
  return { record: { name: upstream.name, model: upstream.model, price: upstream.price ?? null }, url: `${upstream.baseUrl}/${api}`, apiKey: upstream.apiKey };
}

/**
 * The upstream `model` names: the caller's registered model of that name first (the organization's
 * own choice), else the server's configured upstream; refused with a clear error when it is neither.
 */
export async function resolveUpstream(ctx: RequestContext, model: unknown, api: 'chat/completions' | 'responses'): Promise<UpstreamTarget> {
  if (typeof model !== 'string' || model === '') {
    throw validationError('`model` is required: the name of a model registered in your organization (GET /v1/models/), which the proxy forwards to.', [
      { field: 'model', message: 'required' },
    ]);
  }
  const record = await registeredModelNamed(ctx, model);
  const configured = ctx.config.proxy.upstreams;
  if (!record) {
    const offered = configured.get(model);
    if (offered) return serverUpstream(ctx, offered, api);
    const names = [...configured.keys()];
    throw new TribunalError(
      'not_found',
      404,
      `The model ${JSON.stringify(model)} is not registered in your organization${names.length ? ` nor one of the server's upstreams (${names.slice(0, 20).join(', ')})` : ', and the server offers no upstreams of its own (TRIBUNAL_PROXY_UPSTREAMS)'}; the judge proxy forwards only to registered models (POST /v1/models/ with provider "openai", base_url and api_key), using their stored key, or to the server's configured upstreams.`,
      { errors: [{ field: 'model', message: 'not a registered model' }] },
    );
  }
  if (record.provider !== 'openai') {
    throw validationError(
      `The model ${record.name} is registered with provider ${record.provider}; the OpenAI-compatible proxy forwards only to models with provider "openai" (any Chat Completions server).`,
      [{ field: 'model', message: 'not an OpenAI-compatible model' }],
    );
  }
  const { base, apiKey } = openedModel(ctx, record);
  return { record, url: `${base}/${api}`, apiKey };
}

export interface UpstreamAnswer {
  status: number;
  contentType: string;
  contentEncoding: string | undefined;
  requestId: string | undefined;
  retryAfter: string | undefined;
  body: UpstreamBody;
}

/** Sends the request body as JSON; answers as soon as the headers arrive. Throws when unreachable or cancelled first. */
export async function callUpstream(target: UpstreamTarget, body: unknown, cancel: UpstreamCancel): Promise<UpstreamAnswer> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  if (target.apiKey) headers.authorization = `Bearer ${target.apiKey}`;
  const res = await dispatchPost(dispatcher, target.url, headers, JSON.stringify(body), cancel);
  return {
    status: res.status,
    contentType: res.headers['content-type'] ?? 'application/json',
    contentEncoding: res.headers['content-encoding'],
    requestId: res.headers['x-request-id'],
    retryAfter: res.headers['retry-after'],
    body: res.body,
  };
}

/**
 * Reads a whole upstream answer through readBoundedBody (bounded on the wire and after
 * decompression; past the bound the body is dropped): a body too large, or in an encoding that
 * cannot be read, is a 502 in the caller's protocol that says so.
 */
export async function readUpstream(up: UpstreamAnswer, maxBytes = MAX_UPSTREAM_BYTES): Promise<Buffer> {
  try {
    return await readBoundedBody(up.body, { encoding: up.contentEncoding ?? null, maxWireBytes: maxBytes, maxBytes });
  } catch (err) {
    up.body.destroy();
    if (err instanceof UpstreamTooLargeError)
      throw new TribunalError('model_unavailable', 502, `The upstream answer is over ${err.limitBytes} bytes; the proxy does not read it whole.`);
    if (err instanceof Error && /content-encoding/.test(err.message)) throw new TribunalError('model_unavailable', 502, `The upstream answer could not be read: ${err.message}.`);
    throw err;
  }
}

/** A failure to reach the upstream at all, as a 502 (a timeout as a 504) that names the model, not its key. */
export function unreachable(target: UpstreamTarget, err: unknown): TribunalError {
  const e = err as { code?: string; message?: string };
  const timedOut = e.code === 'UND_ERR_HEADERS_TIMEOUT' || e.code === 'UND_ERR_BODY_TIMEOUT';
  return new TribunalError('model_unavailable', timedOut ? 504 : 502, `The upstream model ${target.record.name} could not be reached (${e.code ?? e.message ?? 'network error'}).`);
}
