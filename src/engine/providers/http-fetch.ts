// A fetch for the Anthropic SDK over undici's low-level dispatcher API: keep-alive connection
// pools per origin, and a handler of our own that collects the answer as it arrives, without the
// WHATWG streams of a fetch or the Readable body of undici's request(). The SDK takes any fetch (its
// documented `fetch` option). Measured per judge-model call: Node's built-in fetch cost about three
// times the CPU of node:http; node:http cost the server about 8% more CPU per judge run than
// undici's request() (bench/execute.bench.ts, paired rounds); this handler saves about 8% of a model
// call's CPU over request(). Bodies are buffered: judge-model answers are small JSON, never streams
// here. Anything this cannot send as is (a stream body) goes to the built-in fetch.
// Bounded (bounded-body.ts): at most maxBytes on the wire (the connection is cut at once past it) and
// at most maxBytes after decompression (streamed, stopped at the cap), else an UpstreamTooLargeError.
import { type Dispatcher, Pool } from 'undici';
import { bodyBytes } from './kept-json.ts';
import { DEFAULT_UPSTREAM_MAX_BYTES, decompressBounded, UpstreamTooLargeError } from './bounded-body.ts';
import { type AddressPolicy, guardedLookup, refuseLiteral } from './address-policy.ts';

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
  } else if (init && !Array.isArray(init) && Object.getPrototypeOf(init) === Object.prototype) {
    // A plain object (what Tribunal's own callers pass): copied without a Headers object in between.
    for (const [key, value] of Object.entries(init)) out[key.toLowerCase()] = String(value).trim();
  } else if (init) {
    new Headers(init).forEach((value, key) => {
      out[key] = value;
    });
  }
  return out;
}

/** The error an aborted exchange fails with: named AbortError (the SDK's test for an abort), citing the reason. */
function abortError(signal: AbortSignal): Error {
  return Object.assign(new Error('This operation was aborted', { cause: signal.reason }), { name: 'AbortError', code: 'ABORT_ERR' });
}

/** True when a raw header name is `name` (lower case), ignoring case: a string is made only for a name of the right length. */
const isHeader = (raw: Buffer, name: string) => raw.length === name.length && raw.toString('latin1').toLowerCase() === name;

/**
 * An answer read whole: status, body decoded per content-encoding, and its headers as the server
 * sent them (names in lower case), content-encoding and content-length left out once the body was
 * decoded. The headers are turned into strings only when asked for: a model call reads two of the
 * twenty-odd a provider sends, and making a string of each name and value, a pair of each, cost
 * some sixty allocations a call.
 */
export class BufferedAnswer {
  #headers: Array<[string, string]> | undefined;

  constructor(
    readonly status: number,
    readonly statusText: string,
    /** Name, value, name, value... as undici collected them. */
    private readonly raw: Buffer[],
    readonly data: Buffer,
    /** The answer named a content-encoding: its content-encoding and content-length are not the body's. */
    private readonly encoded: boolean,
  ) {}

  get headers(): Array<[string, string]> {
    if (this.#headers) return this.#headers;
    const pairs: Array<[string, string]> = [];
    for (let i = 0; i < this.raw.length; i += 2) {
      const key = this.raw[i]!.toString('latin1').toLowerCase();
      if (this.encoded && (key === 'content-encoding' || key === 'content-length')) continue;
      pairs.push([key, this.raw[i + 1]!.toString('latin1')]);
    }
    this.#headers = pairs;
    return pairs;
  }

  /** The first value of one header (`name` in lower case), as `headers` has it, without making the others. */
  header(name: string): string | undefined {
    if (this.encoded && (name === 'content-encoding' || name === 'content-length')) return undefined;
    for (let i = 0; i < this.raw.length; i += 2) if (isHeader(this.raw[i]!, name)) return this.raw[i + 1]!.toString('latin1');
    return undefined;
  }
}

/** The collected answer: decoded per content-encoding (a promise only then). */
function decodedAnswer(status: number, statusText: string, rawHeaders: Buffer[], chunks: Buffer[], maxBytes: number): BufferedAnswer | Promise<BufferedAnswer> {
  const data = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
  let encoding = '';
  // The last content-encoding named counts.
  for (let i = 0; i < rawHeaders.length; i += 2) if (isHeader(rawHeaders[i]!, 'content-encoding')) encoding = rawHeaders[i + 1]!.toString('latin1').trim().toLowerCase();
  if (encoding === 'gzip' || encoding === 'deflate' || encoding === 'br') {
    return decompressBounded(data, encoding, maxBytes).then((decoded) => new BufferedAnswer(status, statusText, rawHeaders, decoded, true));
  }
  return new BufferedAnswer(status, statusText, rawHeaders, data, encoding !== '');
}

/** The answer as a Response for a fetch caller (an SDK). */
function asResponse({ status, statusText, headers, data }: BufferedAnswer): Response {
  const init = { status, statusText, headers };
  return NULL_BODY_STATUSES.has(status) ? new Response(null, init) : new BufferedResponse(data, init);
}

export interface HttpFetchOptions {
  maxSockets?: number;
  /** Cap on the answer's bytes, on the wire and after decompression (default DEFAULT_UPSTREAM_MAX_BYTES). */
  maxBytes?: number;
  /** Which addresses may be called (registered models): checked after DNS, on every connection. */
  policy?: AddressPolicy;
}

/** What an exchange sends: a parsed URL, headers as a plain object (lower-case names), a string or bytes. */
export interface ExchangeRequest {
  method: string;
  headers: Record<string, string>;
  body?: string | Uint8Array | null;
  signal?: AbortSignal;
  /** Cut the exchange after this long (a TimeoutError), without an AbortController of the caller's. */
  timeoutMs?: number;
}

/** The error an exchange over its timeoutMs fails with (its message says "timed out", which the SDK's classification reads). */
export class ExchangeTimeoutError extends Error {
  override name = 'TimeoutError';
  constructor(ms: number) {
    super(`The request timed out after ${ms} ms`);
  }
}

export type HttpExchange = (url: URL, request: ExchangeRequest) => Promise<BufferedAnswer>;

/**
 * One HTTP exchange read whole, without a fetch Request or Response around it: the Messages API
 * call (messages-request.ts) uses this directly; createHttpFetch wraps it for the SDKs.
 */
export function createHttpExchange(opts: HttpFetchOptions = {}): HttpExchange {
  const maxBytes = opts.maxBytes ?? DEFAULT_UPSTREAM_MAX_BYTES;
  const policy = opts.policy;
  // No undici-level timeouts (its defaults would cut a call off at 300 s): the SDK's timeout and the
  // retry layer's per-attempt timeout (TRIBUNAL_MODEL_TIMEOUT) apply, through the abort signal.
  const poolOptions: Pool.Options = {
    connections: opts.maxSockets ?? null,
    headersTimeout: 0,
    bodyTimeout: 0,
    ...(policy ? { connect: { lookup: guardedLookup(policy) } } : {}),
  };
  // One keep-alive pool per origin, kept here rather than in an undici Agent: the Agent's layer (its
  // dispatch checks, its redirect interceptor, a 'drain' event re-emitted with a new array for every
  // answer) cost a few microseconds a call and did nothing else for us (h-provider).
  const pools = new Map<string, Pool>();
  const poolFor = (origin: string): Pool => {
    let pool = pools.get(origin);
    if (!pool) {
      pool = new Pool(origin, poolOptions);
      pools.set(origin, pool);
    }
    return pool;
  };

  return (url, { method, headers, body, signal, timeoutMs }) => {
    if (policy) {
      // An IP literal never goes through DNS lookup: checked here instead.
      const refused = refuseLiteral(url.hostname, policy);
      if (refused) return Promise.reject(refused);
    }
    headers['accept-encoding'] ??= 'gzip, deflate, br';
    if (signal?.aborted) return Promise.reject(abortError(signal));

    return new Promise<BufferedAnswer>((resolve, reject) => {
      const exchange = new Exchange(resolve, reject, signal, maxBytes);
      if (timeoutMs !== undefined) exchange.timer = setTimeout(timedOut, timeoutMs, exchange, timeoutMs);
      signal?.addEventListener('abort', exchange, { once: true });
      try {
        // A string body goes as its UTF-8 bytes from the shared slab (kept-json.ts), not as a Buffer undici allocates per call.
        const bytes = typeof body === 'string' ? bodyBytes(body) : (body ?? null);
        const origin = url.origin;
        poolFor(origin).dispatch({ origin, path: url.pathname + url.search, method: method as Dispatcher.HttpMethod, headers, body: bytes }, exchange);
      } catch (err) {
        exchange.settle();
        reject(err);
      }
    });
  };
}

/** The timer of an exchange over its timeoutMs: cut it, and fail with an ExchangeTimeoutError. */
function timedOut(exchange: Exchange, timeoutMs: number): void {
  exchange.aborted = new ExchangeTimeoutError(timeoutMs);
  exchange.abort?.(exchange.aborted);
  exchange.reject(exchange.aborted);
}

/**
 * One exchange in flight: undici's handler, and the abort signal's listener (handleEvent). A class,
 * not an object of closures made per call: under tsx (esbuild keepNames) every named closure made
 * per call is also given its name by a defineProperty, which cost a few microseconds a call.
 */
class Exchange implements Dispatcher.DispatchHandlers {
  timer: NodeJS.Timeout | undefined = undefined;
  abort: ((err?: Error) => void) | undefined = undefined;
  aborted: Error | undefined = undefined;
  private status = 0;
  private statusText = '';
  private rawHeaders: Buffer[] = [];
  private readonly chunks: Buffer[] = [];
  private received = 0;

  constructor(
    private readonly resolve: (answer: BufferedAnswer) => void,
    readonly reject: (err: unknown) => void,
    private readonly signal: AbortSignal | undefined,
    private readonly maxBytes: number,
  ) {}

  /** The caller's signal aborted: cut the exchange (undici then calls onError). */
  handleEvent(): void {
    this.aborted = abortError(this.signal!);
    this.abort?.(this.aborted);
  }

  settle(): void {
    clearTimeout(this.timer);
    this.signal?.removeEventListener('abort', this);
  }

  onConnect(abortFn: (err?: Error) => void): void {
    this.abort = abortFn;
    if (this.aborted) abortFn(this.aborted);
  }

  onHeaders(statusCode: number, headerList: Buffer[], _resume: () => void, text: string): boolean {
    this.status = statusCode;
    this.statusText = text;
    this.rawHeaders = headerList;
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.received += chunk.length;
    if (this.received > this.maxBytes) {
      // Cut the connection at once: the rest is never read.
      this.chunks.length = 0;
      this.aborted = new UpstreamTooLargeError(this.maxBytes, 'wire');
      this.abort?.(this.aborted);
      return false;
    }
    this.chunks.push(chunk);
    return true;
  }

  onComplete(): void {
    this.settle();
    // An answer that needs no decoding resolves now, not after a promise of its own.
    try {
      const answer = decodedAnswer(this.status, this.statusText, this.rawHeaders, this.chunks, this.maxBytes);
      if (answer instanceof Promise) answer.then(this.resolve, this.reject);
      else this.resolve(answer);
    } catch (err) {
      this.reject(err);
    }
  }

  onError(err: Error): void {
    this.settle();
    this.reject(this.aborted ?? err);
  }
}

export function createHttpFetch(opts: HttpFetchOptions = {}): typeof fetch {
  const exchange = createHttpExchange(opts);
  return (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const body = init.body;
    if (input instanceof Request || (body != null && typeof body !== 'string' && !(body instanceof Uint8Array) && !(body instanceof ArrayBuffer))) {
      return fetch(input, init);
    }
    const url = typeof input === 'string' ? new URL(input) : input;
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return fetch(input, init);
    const request: ExchangeRequest = {
      method: init.method ?? 'GET',
      headers: plainHeaders(init.headers),
      body: body == null ? null : body instanceof ArrayBuffer ? new Uint8Array(body) : (body as string | Uint8Array),
      signal: init.signal ?? undefined,
    };
    return exchange(url, request).then(asResponse);
  };
}
