// A fetch for the Anthropic SDK over undici's dispatcher API (`Agent.request`): keep-alive
// connection pools per origin, without the WHATWG streams of a fetch. The SDK takes any fetch (its
// documented `fetch` option). Per judge-model call, Node's built-in fetch cost about three times
// the CPU of node:http; node:http in turn cost the server about 8% more CPU per judge run than this
// (bench/execute.bench.ts, paired rounds). Bodies are buffered: judge-model answers are small
// JSON, never streams here. Anything this cannot send as is (a stream body) goes to the built-in
// fetch.
import zlib from 'node:zlib';
import { Agent } from 'undici';

const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/**
 * A Response whose body is already in memory. Reading a web Response body goes through a
 * ReadableStream, which for a small JSON answer costs more than the parse; the SDK reads
 * non-streaming answers only with json() or text(), so those answer from the buffer directly.
 */
class BufferedResponse extends Response {
  readonly #data: Buffer;
  constructor(data: Buffer, init: ResponseInit) {
    super(null, init);
    this.#data = data;
  }
  override async text(): Promise<string> {
    return this.#data.toString('utf8');
  }
  override async json(): Promise<any> {
    return JSON.parse(this.#data.toString('utf8'));
  }
  override async arrayBuffer(): Promise<ArrayBuffer> {
    return this.#data.buffer.slice(this.#data.byteOffset, this.#data.byteOffset + this.#data.byteLength) as ArrayBuffer;
  }
  override async blob(): Promise<Blob> {
    return new Blob([new Uint8Array(this.#data)]);
  }
}

/** The request headers as a plain object, read straight from the HeadersInit the SDK passed. */
function plainHeaders(init: RequestInit['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  if (init instanceof Headers) {
    init.forEach((value, key) => {
      out[key] = value;
    });
  } else if (init) {
    new Headers(init).forEach((value, key) => {
      out[key] = value;
    });
  }
  return out;
}

export function createHttpFetch(opts: { maxSockets?: number } = {}): typeof fetch {
  // No undici-level timeouts (its defaults would cut a call off at 300 s): the SDK's timeout and the
  // retry layer's per-attempt timeout (TRIBUNAL_MODEL_TIMEOUT) apply, through the abort signal.
  const dispatcher = new Agent({ connections: opts.maxSockets ?? null, headersTimeout: 0, bodyTimeout: 0 });

  return async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const body = init.body;
    if (input instanceof Request || (body != null && typeof body !== 'string' && !(body instanceof Uint8Array) && !(body instanceof ArrayBuffer))) {
      return fetch(input, init);
    }
    const url = typeof input === 'string' ? new URL(input) : input;
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return fetch(input, init);
    const headers = plainHeaders(init.headers);
    headers['accept-encoding'] ??= 'gzip, deflate, br';
    const res = await dispatcher.request({
      origin: url.origin,
      path: url.pathname + url.search,
      method: (init.method ?? 'GET') as 'GET',
      headers,
      body: body == null ? null : body instanceof ArrayBuffer ? new Uint8Array(body) : (body as string | Uint8Array),
      // An abort rejects with an error named AbortError, which the SDK turns into its timeout or abort error.
      signal: init.signal ?? undefined,
    });
    let data = Buffer.from(await res.body.arrayBuffer());
    const encoding = String(res.headers['content-encoding'] ?? '').toLowerCase();
    if (encoding === 'gzip') data = zlib.gunzipSync(data);
    else if (encoding === 'deflate') data = zlib.inflateSync(data);
    else if (encoding === 'br') data = zlib.brotliDecompressSync(data);
    const pairs: Array<[string, string]> = [];
    for (const [key, value] of Object.entries(res.headers)) {
      if (value === undefined || (encoding && (key === 'content-encoding' || key === 'content-length'))) continue;
      if (Array.isArray(value)) for (const v of value) pairs.push([key, v]);
      else pairs.push([key, value]);
    }
    const responseInit = { status: res.statusCode, statusText: '', headers: pairs };
    return NULL_BODY_STATUSES.has(res.statusCode) ? new Response(null, responseInit) : new BufferedResponse(data, responseInit);
  };
}
