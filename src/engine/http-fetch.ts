// A fetch for the Anthropic SDK over node:http / node:https with keep-alive agents. The SDK takes
// any fetch (its documented `fetch` option); Node's built-in fetch (undici) costs about three times
// the CPU of node:http per call, which at high request rates is most of a run's CPU time
// (bench/execute.bench.ts). Bodies are buffered: judge-model answers are small JSON, never streams
// here. Anything this cannot send as is (a stream body) goes to the built-in fetch.
import http from 'node:http';
import https from 'node:https';
import zlib from 'node:zlib';

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

export function createHttpFetch(opts: { maxSockets?: number } = {}): typeof fetch {
  const agents = {
    'http:': new http.Agent({ keepAlive: true, maxSockets: opts.maxSockets ?? Infinity }),
    'https:': new https.Agent({ keepAlive: true, maxSockets: opts.maxSockets ?? Infinity }),
  };

  return (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const body = init.body;
    if (input instanceof Request || (body != null && typeof body !== 'string' && !(body instanceof Uint8Array) && !(body instanceof ArrayBuffer))) {
      return fetch(input, init);
    }
    const url = typeof input === 'string' ? new URL(input) : input;
    const agent = agents[url.protocol as 'http:' | 'https:'];
    if (!agent) return fetch(input, init);
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, key) => {
      headers[key] = value;
    });
    const payload = body == null ? undefined : typeof body === 'string' ? Buffer.from(body) : Buffer.from(body as ArrayBuffer);
    if (payload) headers['content-length'] = String(payload.length);
    headers['accept-encoding'] ??= 'gzip, deflate, br';

    return new Promise<Response>((resolve, reject) => {
      const request = (url.protocol === 'https:' ? https : http).request(
        url,
        { method: init.method ?? 'GET', headers, agent, signal: init.signal ?? undefined },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', reject);
          res.on('end', () => {
            try {
              let data = Buffer.concat(chunks);
              const encoding = String(res.headers['content-encoding'] ?? '').toLowerCase();
              if (encoding === 'gzip') data = zlib.gunzipSync(data);
              else if (encoding === 'deflate') data = zlib.inflateSync(data);
              else if (encoding === 'br') data = zlib.brotliDecompressSync(data);
              const responseHeaders = new Headers();
              for (const [key, value] of Object.entries(res.headers)) {
                if (value === undefined || (encoding && (key === 'content-encoding' || key === 'content-length'))) continue;
                for (const v of Array.isArray(value) ? value : [value]) responseHeaders.append(key, v);
              }
              const status = res.statusCode ?? 500;
              const init = { status, statusText: res.statusMessage, headers: responseHeaders };
              resolve(NULL_BODY_STATUSES.has(status) ? new Response(null, init) : new BufferedResponse(data, init));
            } catch (err) {
              reject(err);
            }
          });
        },
      );
      // An abort surfaces as an error named AbortError, which the SDK turns into its timeout or abort error.
      request.on('error', reject);
      request.end(payload);
    });
  };
}
