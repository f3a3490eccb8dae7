// A lean HTTP/1.1 client for the CLI's requests to a plain http:// server (issue 33). `tribunal eval`
// makes thousands of small JSON requests; node:http's client spends most of a row's client CPU on
// its machinery (ClientRequest and IncomingMessage streams, the agent's bookkeeping, the parser's
// callbacks), while a request here is one string written and one answer read (docs/BENCHMARKS.md).
//
// It speaks only what the CLI needs: one exchange at a time on a kept-alive connection (no
// pipelining), a body given whole, an answer framed by Content-Length, by the chunked transfer coding
// or by the connection's end, interim 1xx answers skipped. https:// and URLs with a user name keep
// node:http(s) (client.ts). Like node:http, a request is never sent twice: a kept connection the
// server closed just as a request left fails that request, and the batch's retry takes it from there.
import net from 'node:net';

export interface Http1Answer {
  status: number;
  /** Names in lower case; a repeated header's values joined with ", " (as node:http does). */
  headers: Record<string, string>;
  text: string;
}

export type Http1Callback = (err: Error | undefined, answer?: Http1Answer) => void;

/** What a caller holds while an exchange is on its way: destroy() ends it with that error. */
export interface Http1Exchange {
  destroy(err: Error): void;
}

const HEAD_END = Buffer.from('\r\n\r\n');
const MAX_HEAD_BYTES = 64 * 1024;
// node:http's rule for a header value: no control character but tab (no CR or LF to split a request).
const BAD_VALUE = /[^\t\x20-\x7e\x80-\xff]/;
const PLAIN_PATH = /^[\x21-\x7e]+$/;
const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})/;

const CHUNKED = -1;
const UNTIL_END = -2;

const fault = (message: string, code: string) => Object.assign(new Error(message), { code });
const hangUp = () => fault('socket hang up: the connection closed before the answer ended', 'ECONNRESET');

/** Whether a header can carry `value` (node:http's rule, BAD_VALUE): the CLI checks its API key with it. */
export function fitsInHeader(value: string): boolean {
  return !BAD_VALUE.test(value);
}

/** One connection to the server; it carries at most one exchange at a time. */
class Connection {
  exchange?: Exchange;
  constructor(
    readonly socket: net.Socket,
    private readonly pool: Http1Pool,
  ) {
    socket.on('data', (chunk: Buffer) => (this.exchange ? this.exchange.read(chunk) : socket.destroy()));
    socket.on('end', () => (this.exchange ? this.exchange.ended() : socket.destroy()));
    // An idle connection's error only retires it; an exchange's is that exchange's failure.
    socket.on('error', (err) => this.exchange?.finish(err));
    socket.on('close', () => {
      this.exchange?.finish(hangUp());
      this.pool.forget(this);
    });
  }
}

/** One request and the parse of its answer, read as it comes (a large body is never copied whole per read). */
class Exchange implements Http1Exchange {
  /** The answer's head so far, or a partial chunk-size line, CRLF or trailer section. */
  private pending?: Buffer;
  private status = 0;
  private headers: Record<string, string> = {};
  private keepAlive = true;
  /** Content-Length's bytes, CHUNKED, or UNTIL_END (the connection's end); undefined before the head. */
  private length?: number;
  private chunkState: 'size' | 'data' | 'crlf' | 'trailers' = 'size';
  private chunkLeft = 0;
  private readonly body: Buffer[] = [];
  private bodyBytes = 0;
  private done = false;

  constructor(
    private readonly connection: Connection,
    private readonly pool: Http1Pool,
    private readonly callback: Http1Callback,
  ) {}

  destroy(err: Error): void {
    this.connection.socket.destroy();
    this.finish(err);
  }

  finish(err: Error | undefined, answer?: Http1Answer): void {
    if (this.done) return;
    this.done = true;
    this.connection.exchange = undefined;
    if (err) this.connection.socket.destroy();
    else if (this.keepAlive) this.pool.release(this.connection);
    else this.connection.socket.end();
    this.callback(err, answer);
  }

  read(chunk: Buffer): void {
    try {
      if (this.length === undefined) {
        const rest = this.head(this.pending ? Buffer.concat([this.pending, chunk]) : chunk);
        if (!rest) return;
        chunk = rest;
      }
      // A fixed length is checked even with nothing more read: an empty body (0, 204) ends here.
      if (this.length !== CHUNKED && this.length !== UNTIL_END) this.fixed(chunk, this.length!);
      else if (!chunk.length) return;
      else if (this.length === CHUNKED) this.chunked(chunk);
      else this.take(chunk);
    } catch (err) {
      if (this.done) throw err; // the caller's callback threw, not the parse: not this exchange's failure
      this.finish(err as Error);
    }
  }

  ended(): void {
    if (this.length === UNTIL_END) {
      this.keepAlive = false;
      this.answer();
    } else this.finish(hangUp());
  }

  /** Parses the head once it is all here (skipping interim 1xx answers); what follows it, or undefined. */
  private head(buf: Buffer): Buffer | undefined {
    for (;;) {
      const end = buf.indexOf(HEAD_END);
      if (end < 0) {
        if (buf.length > MAX_HEAD_BYTES) throw fault('the answer\u2019s headers are too large', 'HPE_HEADER_OVERFLOW');
        this.pending = buf;
        return undefined;
      }
      this.pending = undefined;
      const lines = buf.toString('latin1', 0, end).split('\r\n');
      const status = STATUS_LINE.exec(lines[0]!);
      if (!status) throw fault('the server did not answer in HTTP/1.1', 'HPE_INVALID_CONSTANT');
      const rest = buf.subarray(end + 4);
      const code = Number(status[2]);
      if (code >= 100 && code < 200) {
        buf = rest; // 100 Continue, 103 Early Hints: the real answer follows
        continue;
      }
      const headers: Record<string, string> = {};
      for (let i = 1; i < lines.length; i++) {
        const line = lines[i]!;
        const colon = line.indexOf(':');
        if (colon <= 0) throw fault('the answer has a malformed header line', 'HPE_INVALID_HEADER_TOKEN');
        const name = line.slice(0, colon).trim().toLowerCase();
        const value = line.slice(colon + 1).trim();
        headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
      }
      const connection = (headers.connection ?? '').toLowerCase();
      this.keepAlive = status[1] === '1' ? !connection.includes('close') : connection.includes('keep-alive');
      this.status = code;
      this.headers = headers;
      if (/chunked/i.test(headers['transfer-encoding'] ?? '')) this.length = CHUNKED;
      else if (headers['content-length'] !== undefined) {
        const length = Number(headers['content-length']);
        if (!Number.isSafeInteger(length) || length < 0) throw fault('the answer has an invalid Content-Length', 'HPE_INVALID_CONTENT_LENGTH');
        this.length = length;
      } else if (code === 204 || code === 304) this.length = 0;
      else {
        this.length = UNTIL_END;
        this.keepAlive = false;
      }
      return rest;
    }
  }

  private fixed(chunk: Buffer, length: number): void {
    const left = length - this.bodyBytes;
    if (chunk.length < left) {
      if (chunk.length) this.take(chunk);
      return;
    }
    // Bytes past the answer's end belong to no request: the connection is not used again.
    if (chunk.length > left) this.keepAlive = false;
    this.take(chunk.subarray(0, left));
    this.answer();
  }

  /** The chunked transfer coding: size lines, data, and the trailer section after the last (size 0). */
  private chunked(chunk: Buffer): void {
    let buf = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    this.pending = undefined;
    while (buf.length && !this.done) {
      if (this.chunkState === 'data') {
        const n = Math.min(this.chunkLeft, buf.length);
        this.take(buf.subarray(0, n));
        buf = buf.subarray(n);
        this.chunkLeft -= n;
        if (!this.chunkLeft) this.chunkState = 'crlf';
        continue;
      }
      if (this.chunkState === 'crlf') {
        if (buf.length < 2) break;
        if (buf[0] !== 13 || buf[1] !== 10) throw fault('the answer has a malformed chunk', 'HPE_INVALID_CHUNK_SIZE');
        buf = buf.subarray(2);
        this.chunkState = 'size';
        continue;
      }
      if (this.chunkState === 'size') {
        const end = buf.indexOf('\r\n');
        if (end < 0) break;
        const size = Number.parseInt(buf.toString('latin1', 0, end), 16); // a chunk extension (";...") ends the number
        if (!Number.isSafeInteger(size) || size < 0) throw fault('the answer has an invalid chunk size', 'HPE_INVALID_CHUNK_SIZE');
        buf = buf.subarray(end + 2);
        this.chunkLeft = size;
        this.chunkState = size ? 'data' : 'trailers';
        continue;
      }
      // The trailer section ends with an empty line: at once, or after trailer fields.
      const end = buf[0] === 13 && buf[1] === 10 ? 0 : buf.indexOf(HEAD_END);
      if (end < 0 || buf.length < 2) break;
      if (buf.length > end + (end === 0 ? 2 : 4)) this.keepAlive = false;
      this.answer();
      return;
    }
    if (buf.length && !this.done) {
      if (buf.length > MAX_HEAD_BYTES) throw fault('the answer has a malformed chunk', 'HPE_INVALID_CHUNK_SIZE');
      this.pending = buf;
    }
  }

  private take(bytes: Buffer): void {
    this.body.push(bytes);
    this.bodyBytes += bytes.length;
  }

  private answer(): void {
    const text = this.body.length === 1 ? this.body[0]!.toString('utf8') : Buffer.concat(this.body, this.bodyBytes).toString('utf8');
    this.finish(undefined, { status: this.status, headers: this.headers, text });
  }
}

/** The kept-alive connections to one server (host and port), reused newest first. */
export class Http1Pool {
  private readonly idle: Connection[] = [];
  private readonly hostHeader: string;

  /** `url`: the server's http:// URL (its path is the caller's business). */
  constructor(private readonly url: URL) {
    this.hostHeader = url.host;
  }

  /**
   * Sends one request; `callback` gets the answer or the failure, never synchronously. The body's
   * Content-Length is written here (not one of `headers`). Throws at once for a path or header value a
   * request line cannot carry (as node:http does).
   */
  request(method: string, path: string, headers: Record<string, string>, body: string | Buffer | undefined, callback: Http1Callback): Http1Exchange {
    if (!PLAIN_PATH.test(path)) throw fault('Request path contains unescaped characters', 'ERR_UNESCAPED_CHARACTERS');
    let head = `${method} ${path} HTTP/1.1\r\nhost: ${this.hostHeader}\r\n`;
    for (const name in headers) {
      const value = headers[name]!;
      if (!fitsInHeader(value)) throw fault(`Invalid character in header content ["${name}"]`, 'ERR_INVALID_CHAR');
      head += `${name}: ${value}\r\n`;
    }
    if (body !== undefined) head += `content-length: ${Buffer.byteLength(body)}\r\n`;
    head += '\r\n';
    let connection = this.idle.pop();
    // One the server closed a moment ago is gone, though its 'close' has not come yet.
    while (connection?.socket.destroyed) connection = this.idle.pop();
    connection ??= this.connect();
    connection.socket.ref();
    const exchange = new Exchange(connection, this, callback);
    connection.exchange = exchange;
    if (body === undefined || typeof body === 'string') connection.socket.write(body ? head + body : head);
    else {
      connection.socket.cork();
      connection.socket.write(head);
      connection.socket.write(body);
      connection.socket.uncork();
    }
    return exchange;
  }

  release(connection: Connection): void {
    if (connection.socket.destroyed) return;
    // An idle connection keeps no command alive: the process ends when its work does.
    connection.socket.unref();
    this.idle.push(connection);
  }

  forget(connection: Connection): void {
    const at = this.idle.indexOf(connection);
    if (at >= 0) this.idle.splice(at, 1);
  }

  private connect(): Connection {
    const socket = net.connect({ host: this.url.hostname.replace(/^\[|\]$/g, ''), port: Number(this.url.port || 80), noDelay: true });
    return new Connection(socket, this);
  }
}
