// The proxy's upstream: a registered model of the caller's organization (SPEC section 11), called
// with its own stored key (never the caller's), over a keep-alive undici pool. The body comes back as
// a stream so that SSE chunks can be passed on as they arrive; what is read whole is bounded.
import type { Readable } from 'node:stream';
import { Agent, request } from 'undici';
import type { RequestContext } from '../context.ts';
import { checkBaseUrl, modelApiKey, registeredModelNamed } from '../domain/models.ts';
import { TribunalError, validationError } from '../errors.ts';
import type { ModelRecord } from '../store/types.ts';

/** The most of an upstream answer read whole (a JSON answer; one SSE event): 16 MiB. */
export const MAX_UPSTREAM_BYTES = 16 * 1024 * 1024;
const OPENAI_BASE_URL = 'https://api.openai.com/v1';

const openedKeys = new Map<string, string | null>();
const dispatcher = new Agent({ keepAliveTimeout: 30_000, headersTimeout: 300_000, bodyTimeout: 300_000 });

export interface UpstreamTarget {
  record: ModelRecord;
  url: string;
  apiKey: string | null;
}

/** The registered model `model` names; refused with a clear error when it is none of the caller's. */
export async function resolveUpstream(ctx: RequestContext, model: unknown, api: 'chat/completions' | 'responses'): Promise<UpstreamTarget> {
  if (typeof model !== 'string' || model === '') {
    throw validationError('`model` is required: the name of a model registered in your organization (GET /v1/models/), which the proxy forwards to.', [
      { field: 'model', message: 'required' },
    ]);
  }
  const record = await registeredModelNamed(ctx, model);
  if (!record) {
    throw new TribunalError(
      'not_found',
      404,
      `The model ${JSON.stringify(model)} is not registered in your organization; the judge proxy forwards only to registered models (POST /v1/models/ with provider "openai", base_url and api_key), using their stored key.`,
      { errors: [{ field: 'model', message: 'not a registered model' }] },
    );
  }
  if (record.provider !== 'openai') {
    throw validationError(
      `The model ${record.name} is registered with provider ${record.provider}; the OpenAI-compatible proxy forwards only to models with provider "openai" (any Chat Completions server).`,
      [{ field: 'model', message: 'not an OpenAI-compatible model' }],
    );
  }
  checkBaseUrl(ctx, record.base_url);
  const base = (record.base_url ?? OPENAI_BASE_URL).replace(/\/+$/, '');
  // Opening a sealed key costs a cipher set-up per call; it is kept per model version (as the
  // engine's model pool keeps its clients), so an edited key is opened afresh.
  const version = `${record.id}@${record.updated_at}`;
  let apiKey = openedKeys.get(version);
  if (apiKey === undefined) {
    apiKey = modelApiKey(ctx, record);
    if (openedKeys.size >= 1000) openedKeys.delete(openedKeys.keys().next().value!);
    openedKeys.set(version, apiKey);
  }
  return { record, url: `${base}/${api}`, apiKey };
}

export interface UpstreamAnswer {
  status: number;
  contentType: string;
  requestId: string | undefined;
  retryAfter: string | undefined;
  body: Readable;
}

/** Sends the request body as JSON; answers as soon as the headers arrive. Throws when unreachable. */
export async function callUpstream(target: UpstreamTarget, body: unknown, signal: AbortSignal): Promise<UpstreamAnswer> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  if (target.apiKey) headers.authorization = `Bearer ${target.apiKey}`;
  const res = await request(target.url, { method: 'POST', headers, body: JSON.stringify(body), signal, dispatcher });
  const header = (name: string) => {
    const v = res.headers[name];
    return Array.isArray(v) ? v[0] : v;
  };
  return {
    status: res.statusCode,
    contentType: header('content-type') ?? 'application/json',
    requestId: header('x-request-id'),
    retryAfter: header('retry-after'),
    body: res.body as unknown as Readable,
  };
}

/** Reads a whole body, at most `max` bytes; past that the body is dropped and an error says so. */
export async function readBounded(body: Readable, max = MAX_UPSTREAM_BYTES): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += (chunk as Buffer).length;
    if (size > max) {
      body.destroy();
      throw new TribunalError('model_unavailable', 502, `The upstream answer is over ${max} bytes; the proxy does not read it whole.`);
    }
    chunks.push(chunk as Buffer);
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}

/** A failure to reach the upstream at all, as a 502 (a timeout as a 504) that names the model, not its key. */
export function unreachable(target: UpstreamTarget, err: unknown): TribunalError {
  const e = err as { code?: string; message?: string };
  const timedOut = e.code === 'UND_ERR_HEADERS_TIMEOUT' || e.code === 'UND_ERR_BODY_TIMEOUT';
  return new TribunalError('model_unavailable', timedOut ? 504 : 502, `The upstream model ${target.record.name} could not be reached (${e.code ?? e.message ?? 'network error'}).`);
}
