// The CLI's REST client: one request function that turns every way a call can fail (no server,
// wrong key, unknown resource, refused input, server failure) into a CliError with one clear line
// and its exit code. A batch makes thousands of requests, so the transport is chosen for its CPU a
// request (docs/BENCHMARKS.md): a plain http:// server goes through the lean HTTP/1.1 client of
// http1.ts, https:// (and a URL with a user name) through node:https with a keep-alive agent; fetch
// costs several times either.
import http from 'node:http';
import type https from 'node:https';
import { createRequire } from 'node:module';
import { urlToHttpOptions } from 'node:url';
import { CliError, EXIT, usageError } from './errors.ts';
import { fitsInHeader, Http1Pool, type Http1Exchange } from './http1.ts';

const DEFAULT_URL = 'http://127.0.0.1:8787';

// Keep-alive agents: a batch reuses a handful of connections instead of opening one per row.
const httpAgent = new http.Agent({ keepAlive: true });
/** Plain http:// servers go through the lean client (http1.ts), one pool of connections per server. */
const leanPools = new Map<string, Http1Pool>();
/** node:https (TLS with it) only when a server URL asks for it: loading it costs every command about 5 ms. */
let secureTransport: { https: typeof https; agent: https.Agent } | undefined;
function secure() {
  if (!secureTransport) {
    const https = createRequire(import.meta.url)('node:https') as typeof import('node:https');
    secureTransport = { https, agent: new https.Agent({ keepAlive: true }) };
  }
  return secureTransport;
}

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** The requests in flight under each abort signal, and the one listener that ends them all. */
const requestsBySignal = new WeakMap<AbortSignal, Set<Http1Exchange>>();

const abortError = () => Object.assign(new Error('The operation was aborted'), { name: 'AbortError', code: 'ABORT_ERR' });

function inFlight(signal: AbortSignal): Set<Http1Exchange> {
  let set = requestsBySignal.get(signal);
  if (!set) {
    const requests = new Set<Http1Exchange>();
    signal.addEventListener(
      'abort',
      () => {
        for (const req of requests) req.destroy(abortError());
        requests.clear();
      },
      { once: true },
    );
    requestsBySignal.set(signal, requests);
    set = requests;
  }
  return set;
}

const header = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v) ?? null;

interface ClientOptions {
  url: string;
  apiKey?: string;
  /** Per-request timeout in milliseconds. */
  timeoutMs: number;
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | string[] | undefined | null>;
  body?: unknown;
  /** A body sent as these bytes with this content type instead of JSON (the multipart file upload). */
  raw?: { data: Buffer; type: string };
  /** false for the unauthenticated endpoints (demo key, health). */
  auth?: boolean;
  signal?: AbortSignal;
}

/** An answer the server gave with an error status, kept whole for callers that look closer (429). */
export class HttpError extends CliError {
  readonly retryAfterMs?: number;
  constructor(exitCode: number, message: string, opts: { code?: string; status: number; body?: unknown; retryAfterMs?: number }) {
    super(exitCode, message, opts);
    this.retryAfterMs = opts.retryAfterMs;
  }
}

/** The server could not be reached or stopped answering (no HTTP answer at all). */
export class ConnectionError extends CliError {
  constructor(message: string) {
    super(EXIT.connection, message);
  }
}

export function resolveClientOptions(values: { url?: string; 'api-key'?: string; timeout?: string }, env: NodeJS.ProcessEnv = process.env): ClientOptions {
  const raw = (values.url ?? env.TRIBUNAL_URL ?? '').trim() || DEFAULT_URL;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw usageError(`${values.url ? '--url' : 'TRIBUNAL_URL'} is not a URL: ${JSON.stringify(raw)} (e.g. ${DEFAULT_URL})`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw usageError(`The server URL must start with http:// or https:// (got ${JSON.stringify(raw)}).`);
  let timeoutMs = 600_000;
  if (values.timeout !== undefined) {
    const seconds = Number(values.timeout);
    if (!(seconds > 0)) throw usageError('--timeout must be a positive number of seconds.');
    timeoutMs = seconds * 1000;
  }
  const apiKey = (values['api-key'] ?? env.TRIBUNAL_API_KEY ?? '').trim() || undefined;
  // A header cannot carry a control character (a line break would split the request): refused here, by name.
  if (apiKey && !fitsInHeader(apiKey)) {
    throw usageError(
      `${values['api-key'] ? '--api-key' : 'TRIBUNAL_API_KEY'} holds a control character (a line break?), which an HTTP header cannot carry: check how the key was copied.`,
    );
  }
  return { url: url.toString().replace(/\/+$/, ''), apiKey, timeoutMs };
}

const CONNECT_HINT = 'is the server running? Set TRIBUNAL_URL or pass --url.';

function describeFetchFailure(err: unknown, url: string): string {
  const e = err as { name?: string; cause?: { code?: string; message?: string }; code?: string; message?: string };
  if (e.name === 'TimeoutError' || e.code === 'ETIMEDOUT_TOTAL') return `no answer from ${url} in time (--timeout); the server may be overloaded or stuck.`;
  const code = e.cause?.code ?? e.code;
  switch (code) {
    case 'ECONNREFUSED':
      return `cannot connect to Tribunal at ${url} (connection refused): ${CONNECT_HINT}`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `cannot connect to Tribunal at ${url} (unknown host): check TRIBUNAL_URL or --url.`;
    case 'ECONNRESET':
    case 'EPIPE':
    case 'UND_ERR_SOCKET':
    case 'UND_ERR_CLOSED':
      return `the connection to ${url} was closed before an answer: the server stopped or restarted.`;
    case 'ETIMEDOUT':
    case 'UND_ERR_CONNECT_TIMEOUT':
      return `cannot connect to Tribunal at ${url} (timed out): ${CONNECT_HINT}`;
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `cannot reach ${url} (network unreachable): check TRIBUNAL_URL or --url.`;
    default:
      return `cannot talk to Tribunal at ${url} (${e.cause?.message ?? e.message ?? 'network error'}): ${CONNECT_HINT}`;
  }
}

function retryAfterMs(header: string | null): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

function exitCodeFor(status: number): number {
  if (status === 401 || status === 403) return EXIT.auth;
  if (status === 404) return EXIT.notFound;
  return EXIT.rejected;
}

export class ApiClient {
  readonly url: string;
  readonly apiKey?: string;
  readonly timeoutMs: number;
  private readonly transport: typeof http | typeof https;
  private readonly agent: http.Agent;
  /** The lean client's connections, for a plain http:// server without a user name in its URL. */
  private readonly lean?: Http1Pool;
  private base?: http.RequestOptions & { prefix: string };

  constructor(opts: ClientOptions) {
    this.url = opts.url;
    this.apiKey = opts.apiKey;
    this.timeoutMs = opts.timeoutMs;
    const tls = opts.url.startsWith('https:') ? secure() : undefined;
    this.transport = tls?.https ?? http;
    this.agent = tls?.agent ?? httpAgent;
    const url = new URL(opts.url);
    if (url.protocol === 'http:' && !url.username && !url.password) {
      let pool = leanPools.get(url.host);
      if (!pool) leanPools.set(url.host, (pool = new Http1Pool(url)));
      this.lean = pool;
    }
  }

  requireKey(): void {
    if (!this.apiKey) {
      throw new CliError(EXIT.auth, 'no API key: set TRIBUNAL_API_KEY or pass --api-key (a temporary one: tribunal demo-key).');
    }
  }

  async request<T = any>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const auth = opts.auth ?? true;
    if (auth) this.requireKey();
    let target = this.url + path;
    if (opts.query) {
      const params = new URLSearchParams();
      for (const [k, v] of Object.entries(opts.query)) {
        if (v === undefined || v === null) continue;
        params.set(k, Array.isArray(v) ? v.join(',') : String(v));
      }
      const qs = params.toString();
      if (qs) target += `?${qs}`;
    }
    const headers: Record<string, string> = { accept: 'application/json' };
    if (auth && this.apiKey) headers.authorization = `Api-Key ${this.apiKey}`;
    let body: string | Buffer | undefined;
    if (opts.raw) {
      body = opts.raw.data;
      headers['content-type'] = opts.raw.type;
    } else if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] = 'application/json';
    }
    let res: RawResponse;
    try {
      res = await this.send(method, target, headers, body, opts.signal);
    } catch (err) {
      if ((err as Error).name === 'AbortError' && opts.signal?.aborted) throw err;
      throw new ConnectionError(describeFetchFailure(err, this.url));
    }
    const text = res.text;
    let parsed: any;
    const type = header(res.headers['content-type']) ?? '';
    if (text && /json/.test(type)) {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
    }
    if (res.status >= 200 && res.status < 300) {
      if (parsed === undefined) {
        throw new ConnectionError(`${this.url} answered ${method} ${path} with something other than JSON: is it a Tribunal server? Check TRIBUNAL_URL or --url.`);
      }
      return parsed as T;
    }
    const problem = parsed && typeof parsed === 'object' && typeof parsed.code === 'string' ? parsed : undefined;
    if (!problem) {
      // An error without a Tribunal problem body: another server is listening at this address.
      if (res.status === 404 || res.status === 405) {
        throw new ConnectionError(`${this.url} has no Tribunal API (HTTP ${res.status} for ${method} ${path}): check TRIBUNAL_URL or --url.`);
      }
      throw new HttpError(exitCodeFor(res.status), `the server answered HTTP ${res.status} for ${method} ${path}.`, {
        status: res.status,
        retryAfterMs: retryAfterMs(header(res.headers['retry-after'])),
      });
    }
    let message = String(problem.detail ?? problem.title ?? `HTTP ${res.status}`);
    if (res.status === 401) message = `the server refused the API key: ${message} Check TRIBUNAL_API_KEY or --api-key (a temporary key: tribunal demo-key).`;
    if (Array.isArray(problem.errors) && problem.errors.length && problem.code === 'validation_error' && !/: /.test(message)) {
      message += ` (${problem.errors.map((e: { field: string; message: string }) => `${e.field}: ${e.message}`).join('; ')})`;
    }
    throw new HttpError(exitCodeFor(res.status), message, {
      code: problem.code,
      status: res.status,
      body: problem,
      retryAfterMs: retryAfterMs(header(res.headers['retry-after'])),
    });
  }

  private send(method: string, target: string, headers: Record<string, string>, body: string | Buffer | undefined, signal?: AbortSignal): Promise<RawResponse> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(abortError());
      // Each transport frames the body itself (node:http sets Content-Length for a body given to end()).
      const options = this.target(target);
      const done = (err: Error | undefined, answer?: RawResponse) => {
        clearTimeout(timer);
        watched?.delete(exchange);
        if (err) reject(err);
        else resolve(answer!);
      };
      const exchange = this.lean
        ? this.lean.request(method, options.path!, headers, body, done)
        : nodeExchange(this.transport, { ...options, method, headers, agent: this.agent }, body, done);
      // A limit on the whole exchange, not just idle time: a server that trickles must not hang a batch.
      const timer = setTimeout(() => exchange.destroy(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT_TOTAL' })), this.timeoutMs);
      // One abort listener per signal for all its requests (a batch's thousands share one), not one
      // per request as http.request's own `signal` option adds and removes.
      const watched = signal ? inFlight(signal) : undefined;
      watched?.add(exchange);
    });
  }

  /** http.request's options for a URL under the server's: the server's part parsed once per client, not per request. */
  private target(target: string): http.RequestOptions {
    // A path with characters a request line cannot carry goes through URL, which escapes them.
    if (!target.startsWith(this.url) || /[^\x21-\x7e]/.test(target)) return urlToHttpOptions(new URL(target));
    if (!this.base) {
      const url = new URL(this.url);
      const { protocol, hostname, port, auth } = urlToHttpOptions(url);
      this.base = { protocol, hostname, port, auth, prefix: url.pathname.replace(/\/$/, '') };
    }
    const { prefix, ...server } = this.base;
    return { ...server, path: prefix + target.slice(this.url.length) };
  }

  get<T = any>(path: string, query?: RequestOptions['query']) {
    return this.request<T>('GET', path, { query });
  }
  post<T = any>(path: string, body?: unknown, opts: Omit<RequestOptions, 'body'> = {}) {
    return this.request<T>('POST', path, { ...opts, body: body ?? {} });
  }
  patch<T = any>(path: string, body: unknown) {
    return this.request<T>('PATCH', path, { body });
  }
  delete<T = any>(path: string) {
    return this.request<T>('DELETE', path);
  }

  /** Every page of a list, up to `max` items. */
  async listAll<T = any>(path: string, query: RequestOptions['query'] = {}, max = Infinity, signal?: AbortSignal): Promise<T[]> {
    const items: T[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.request<{ results: T[]; next_cursor: string | null }>('GET', path, { query: { ...query, limit: 200, cursor }, signal });
      items.push(...page.results);
      cursor = page.next_cursor ?? undefined;
    } while (cursor && items.length < max);
    return items.slice(0, max);
  }
}

/** One exchange over node:http(s), for https:// and URLs with a user name. */
function nodeExchange(
  transport: typeof http | typeof https,
  options: http.RequestOptions,
  body: string | Buffer | undefined,
  done: (err: Error | undefined, answer?: RawResponse) => void,
): Http1Exchange {
  const req = transport.request(options, (res) => {
    let text = '';
    res.setEncoding('utf8');
    res.on('data', (c: string) => (text += c));
    res.on('end', () => done(undefined, { status: res.statusCode ?? 0, headers: res.headers, text }));
    res.on('error', (err) => done(err));
  });
  req.on('error', (err) => done(err));
  req.end(body);
  return req;
}

const ID_PATTERNS = {
  judge: /^jdg_[0-9a-f]{32}$/,
  evaluator: /^(evl_[0-9a-f]{32}|preset_[a-z0-9_]+)$/,
} as const;

/**
 * A judge or evaluator given by id or exact name -> its id. Names are looked up with the list
 * endpoint's `search` and matched exactly (case-sensitive, like run_judge's judge_name); the
 * caller's own resources win over public ones of the same name.
 */
export async function resolveId(client: ApiClient, kind: 'judge' | 'evaluator', ref: string, signal?: AbortSignal): Promise<string> {
  if (ID_PATTERNS[kind].test(ref)) return ref;
  const path = kind === 'judge' ? '/v1/judges/' : '/v1/evaluators/';
  const exact = async (includePublic: boolean) =>
    (await client.listAll<{ id: string; name: string; is_preset?: boolean }>(path, { search: ref, include_public: includePublic }, Infinity, signal)).filter((r) => r.name === ref);
  let matches = await exact(false);
  // The caller's own lists hold the presets too (issue 26): its own evaluator wins over a preset's name.
  if (matches.length > 1 && matches.filter((m) => !m.is_preset).length === 1) matches = matches.filter((m) => !m.is_preset);
  if (!matches.length) matches = await exact(true);
  if (!matches.length) {
    throw new CliError(
      EXIT.notFound,
      `no ${kind} with the id or exact name ${JSON.stringify(ref)} is visible to this key (names are case-sensitive; see: tribunal ${kind}s list --search ...).`,
      { code: 'not_found', status: 404 },
    );
  }
  if (matches.length > 1) {
    throw usageError(`several ${kind}s are named ${JSON.stringify(ref)} (${matches.map((m) => m.id).join(', ')}): give the id instead.`);
  }
  return matches[0].id;
}
