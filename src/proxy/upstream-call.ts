// One call to the proxy's upstream over undici's dispatch API, the leanest way undici offers: the
// target's origin and path are split once per URL (not parsed again on every call), a client's
// disconnect cancels through UpstreamCancel (an AbortController and its AbortSignal cost more CPU
// than the rest of the call set-up together), only the four response headers the proxy reads are
// decoded, and the body arrives as chunks on an async iterator with backpressure (undici stops
// reading the socket while the consumer is behind) instead of a stream object per answer.
import type { Dispatcher } from 'undici';

/** Cancels an upstream call, whether it is still queued, waiting for headers or mid-body. */
export class UpstreamCancel {
  cancelled = false;
  private abort: ((err: Error) => void) | null = null;

  cancel(reason: Error = new Error('client disconnected')): void {
    if (this.cancelled) return;
    this.cancelled = true;
    this.abort?.(reason);
  }

  /** undici's abort for the call, once it has a socket (a cancel that came first applies now). */
  attach(abort: (err: Error) => void): void {
    this.abort = abort;
    if (this.cancelled) abort(new Error('client disconnected'));
  }
}

/** How many bytes may wait unread before undici is told to stop reading the socket. */
const HIGH_WATER = 64 * 1024;

/** An upstream answer's body: chunks in arrival order, read once by one consumer. */
export class UpstreamBody implements AsyncIterable<Buffer> {
  private chunks: Buffer[] = [];
  private queued = 0;
  private done = false;
  private error: Error | null = null;
  private wake: (() => void) | null = null;
  private resume: (() => void) | null = null;

  constructor(
    private readonly abort: (err: Error) => void,
    private readonly resumeReading: () => void,
  ) {}

  /** A chunk from the socket; false asks undici to pause until the consumer has caught up. */
  push(chunk: Buffer): boolean {
    this.chunks.push(chunk);
    this.queued += chunk.length;
    this.wake?.();
    if (this.queued < HIGH_WATER) return true;
    this.resume = this.resumeReading;
    return false;
  }

  end(): void {
    this.done = true;
    this.wake?.();
  }

  /** The call failed mid-body: the consumer's next read throws (what was queued is dropped, as a destroyed stream's). */
  fail(err: Error): void {
    if (this.error) return;
    this.error = err;
    this.chunks = [];
    this.wake?.();
  }

  /** Stops the call unless it ended already (the answer is not wanted after all). */
  destroy(): void {
    if (this.done || this.error) return;
    this.error = new Error('the upstream answer was not read to its end');
    this.chunks = [];
    this.abort(this.error);
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Buffer> {
    try {
      for (;;) {
        if (this.error) throw this.error;
        const chunk = this.chunks.shift();
        if (chunk) {
          this.queued -= chunk.length;
          if (this.resume && this.queued < HIGH_WATER) {
            const resume = this.resume;
            this.resume = null;
            resume();
          }
          yield chunk;
          continue;
        }
        if (this.done) return;
        await new Promise<void>((resolve) => {
          this.wake = resolve;
        });
        this.wake = null;
      }
    } finally {
      // The consumer stopped before the end (a bound passed, the client left): stop the call too.
      this.destroy();
    }
  }
}

/** The response headers the proxy reads (the first of each); the others are never decoded. */
export interface UpstreamHeaders {
  'content-type'?: string;
  'content-encoding'?: string;
  'x-request-id'?: string;
  'retry-after'?: string;
}

const WANTED = new Set<string>(['content-type', 'content-encoding', 'x-request-id', 'retry-after']);
const WANTED_LENGTHS = new Set([...WANTED].map((name) => name.length));

function wantedHeaders(raw: Buffer[] | string[] | null): UpstreamHeaders {
  const picked: Record<string, string> = {};
  if (!raw) return picked;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    if (!WANTED_LENGTHS.has(name.length)) continue;
    const lower = name.toString().toLowerCase();
    if (WANTED.has(lower) && picked[lower] === undefined) picked[lower] = raw[i + 1]!.toString();
  }
  return picked;
}

/** An origin and path as undici's dispatch takes them, split once per URL. */
const splitUrls = new Map<string, { origin: string; path: string }>();
export function splitUrl(url: string): { origin: string; path: string } {
  let hit = splitUrls.get(url);
  if (!hit) {
    const u = new URL(url);
    hit = { origin: u.origin, path: `${u.pathname}${u.search}` };
    if (splitUrls.size >= 1000) splitUrls.delete(splitUrls.keys().next().value!);
    splitUrls.set(url, hit);
  }
  return hit;
}

/** The upstream's answer as soon as its headers arrive. */
export interface UpstreamResponse {
  status: number;
  headers: UpstreamHeaders;
  body: UpstreamBody;
}

/**
 * undici's handler for one call, a class rather than an object of closures: the server runs under
 * tsx, whose keepNames wraps every function made per call in a naming helper.
 */
class CallHandler implements Dispatcher.DispatchHandlers {
  private answer: UpstreamBody | null = null;
  private abort: (err: Error) => void = () => {};

  constructor(
    private readonly cancel: UpstreamCancel,
    private readonly resolve: (answer: UpstreamResponse) => void,
    private readonly reject: (err: Error) => void,
  ) {}

  onConnect(abort: (err?: Error) => void): void {
    this.abort = abort;
    this.cancel.attach(abort);
  }

  onHeaders(status: number, raw: Buffer[] | string[] | null, resume: () => void): boolean {
    if (status < 200) return true; // 1xx: the answer is still to come
    this.answer = new UpstreamBody(this.abort, resume);
    this.resolve({ status, headers: wantedHeaders(raw), body: this.answer });
    return true;
  }

  onData(chunk: Buffer): boolean {
    return this.answer ? this.answer.push(chunk) : true;
  }

  onComplete(): void {
    this.answer?.end();
  }

  onError(err: Error): void {
    if (this.answer) this.answer.fail(err);
    else this.reject(err);
  }
}

/** POSTs `body` to `url`; answers with the status, the wanted headers and the body as soon as the headers arrive. */
export function dispatchPost(dispatcher: Dispatcher, url: string, headers: Record<string, string>, body: string, cancel: UpstreamCancel): Promise<UpstreamResponse> {
  return new Promise((resolve, reject) => {
    dispatcher.dispatch({ ...splitUrl(url), method: 'POST', headers, body }, new CallHandler(cancel, resolve, reject));
  });
}
