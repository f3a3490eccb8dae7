// POST /otel/v1/traces: the OTLP/HTTP receiver (OTLP specification, "OTLP/HTTP"). The caller is known
// from the headers (Api-Key or Bearer, as on /v1) before a byte is read; the body is refused by its
// declared length, then counted as it arrives (compressed), then bounded as it is gunzipped; only then
// decoded. Answers in the request's encoding: an ExportTraceServiceResponse (with partial_success for
// rejected spans), or a google.rpc.Status on failure. Spans are stored and handed to the evaluation
// rules (which queue work); nothing here waits for a model.
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import express, { type Request, type RequestHandler, type Response } from 'express';
import type { Authenticator, Caller } from '../auth.ts';
import type { Config } from '../config.ts';
import { authenticate } from '../http/authenticate.ts';
import type { Store } from '../store/types.ts';
import { notifySpansStored } from './hooks.ts';
import { countReceived } from './metrics.ts';
import { type Normalized, normalizeMessage, normalizeRequest, OtlpShapeError } from './normalize.ts';
import { decodeExportMessage, encodeExportResponse, encodeStatus } from './proto.ts';
import { traceStoreOf } from './store.ts';
import { log } from '../log.ts';
import { isoOfMs } from '../iso-time.ts';

const gunzip = promisify(zlib.gunzip);
const inflate = promisify(zlib.inflate);

export type Encoding = 'protobuf' | 'json';

export class OtlpError extends Error {
  constructor(
    readonly status: number,
    /** google.rpc.Code: 3 INVALID_ARGUMENT, 8 RESOURCE_EXHAUSTED, 14 UNAVAILABLE. */
    readonly grpcCode: number,
    message: string,
  ) {
    super(message);
  }
}

/** The answer to a wholly accepted protobuf export, encoded once (it is the same every time). */
let accepted: Buffer | undefined;

function send(res: Response, encoding: Encoding, status: number, body: { partial?: { rejected_spans: number; error_message: string }; error?: { code: number; message: string } }) {
  // Set directly: express's res.status() checks the code, and these are the few above (issue 33).
  res.statusCode = status;
  if (encoding === 'protobuf') {
    const bytes = body.error
      ? Buffer.from(encodeStatus(body.error.code, body.error.message))
      : body.partial
        ? Buffer.from(encodeExportResponse(body.partial))
        : (accepted ??= Buffer.from(encodeExportResponse()));
    // Written directly: express's send would hash the bytes for an ETag no exporter reads (issue 33).
    res.setHeader('Content-Type', 'application/x-protobuf');
    res.setHeader('Content-Length', bytes.length);
    // A wholly accepted export's answer is empty (proto3, no field set): ended without a chunk, the
    // headers go out in one write, where an empty chunk made it a two-buffer writev (issue 33:
    // about 4 µs of server CPU a response, in a loop of 30,000 each way).
    if (bytes.length) res.end(bytes);
    else res.end();
  } else {
    res.type('application/json');
    if (body.error) res.send(JSON.stringify({ code: body.error.code, message: body.error.message }));
    else res.send(JSON.stringify(body.partial ? { partialSuccess: { rejectedSpans: body.partial.rejected_spans, errorMessage: body.partial.error_message } } : {}));
  }
}

/** The encoding an OTLP request's Content-Type asks for (its answer is sent the same way). */
export function encodingOf(req: Request): { type: string; encoding: Encoding } {
  const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  return { type, encoding: type === 'application/json' ? 'json' : 'protobuf' };
}

/**
 * The checks and reading both OTLP doors (traces and logs) share: the content type, the content
 * encoding, the body limit as sent (before reading) and after decompression. Throws OtlpError.
 */
export async function readOtlpBody(req: Request, res: Response, type: string, traces: Config['traces']): Promise<Buffer> {
  if (type !== 'application/x-protobuf' && type !== 'application/protobuf' && type !== 'application/json') {
    throw new OtlpError(415, 3, `Send OTLP as Content-Type application/x-protobuf or application/json (got ${JSON.stringify(type || '(none)')}).`);
  }
  const contentEncoding = String(req.headers['content-encoding'] ?? 'identity')
    .trim()
    .toLowerCase();
  if (!['identity', '', 'gzip', 'deflate'].includes(contentEncoding)) {
    throw new OtlpError(415, 3, `Content-Encoding ${JSON.stringify(contentEncoding)} is not supported; send gzip or no encoding.`);
  }
  if (Number(req.headers['content-length'] ?? 0) > traces.maxBodyBytes) {
    res.setHeader('Connection', 'close');
    throw new OtlpError(413, 8, `The body is over the limit of ${traces.maxBodyBytes} bytes as sent (TRIBUNAL_OTLP_MAX_BODY); export smaller batches.`);
  }
  return decompress(await readBody(req, traces.maxBodyBytes), contentEncoding, traces.maxDecompressedBytes);
}

/**
 * A failed export as OTLP says: the OtlpError's status and code; 503 (retryable: a batch is one
 * write, nothing stored half) when the store is unreachable; else 500, logged.
 */
export function answerFailure(req: Request, res: Response, err: unknown, what: string, sendError: (status: number, error: { code: number; message: string }) => void): void {
  if (err instanceof OtlpError) {
    if (!req.complete) res.setHeader('Connection', 'close');
    return sendError(err.status, { code: err.grpcCode, message: err.message });
  }
  const unavailable = (err as Error).name === 'StoreUnavailableError';
  if (!unavailable) log.error(`traces: unexpected error receiving ${what}`, { err });
  sendError(unavailable ? 503 : 500, { code: unavailable ? 14 : 13, message: unavailable ? 'The store is unreachable; the exporter will retry.' : 'Internal error.' });
}

/** Reads the body, at most `limit` bytes as sent; throws 413 beyond. */
export function readBody(req: Request, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    req.on('data', (c: Buffer) => {
      if (done) return;
      size += c.length;
      if (size > limit) {
        done = true;
        req.pause();
        reject(
          new OtlpError(413, 8, `The body is over the limit of ${limit} bytes as sent (TRIBUNAL_OTLP_MAX_BODY); export smaller batches (e.g. OTEL_BSP_MAX_EXPORT_BATCH_SIZE).`),
        );
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => {
      if (!done) resolve(Buffer.concat(chunks));
    });
    req.on('error', (err) => {
      if (!done) reject(new OtlpError(400, 3, `The body could not be read: ${err.message}`));
    });
    req.on('aborted', () => {
      if (!done) reject(new OtlpError(400, 3, 'The body was cut short (the connection closed before the declared length arrived).'));
    });
  });
}

export async function decompress(body: Buffer, encoding: string, max: number): Promise<Buffer> {
  if (encoding === 'identity' || encoding === '') return body;
  try {
    return encoding === 'gzip' ? await gunzip(body, { maxOutputLength: max }) : await inflate(body, { maxOutputLength: max });
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError) {
      throw new OtlpError(413, 8, `The decompressed body is over the limit of ${max} bytes (TRIBUNAL_OTLP_MAX_DECOMPRESSED); export smaller batches.`);
    }
    throw new OtlpError(400, 3, `The body is not valid ${encoding} data: ${(err as Error).message}`);
  }
}

/** The body's spans: protobuf read straight from the decoded message, OTLP/JSON from the parsed object. */
function parse(body: Buffer, encoding: Encoding): Normalized {
  if (encoding === 'protobuf') {
    let message: Record<string, unknown>;
    try {
      message = decodeExportMessage(body);
    } catch (err) {
      throw new OtlpError(400, 3, `The body is not a valid OTLP ExportTraceServiceRequest in protobuf: ${(err as Error).message}`);
    }
    return normalizeMessage(message);
  }
  let request: unknown;
  try {
    request = JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw new OtlpError(400, 3, `The body is not valid JSON: ${(err as Error).message}`);
  }
  return normalizeRequest(request);
}

function describeRejections(reasons: Map<string, number>, refused: number, cap: number): string {
  const parts = [...reasons].map(([reason, n]) => `${n} span(s): ${reason}`);
  if (refused) parts.push(`${refused} span(s): the organization holds its maximum of ${cap} spans (TRIBUNAL_TRACE_MAX_SPANS); older spans leave with the retention period`);
  return parts.join('; ');
}

/** The traces door's path, and the cheap first test the front door makes of a request's URL (the route's pattern then decides). */
export const TRACES_PATH = '/otel/v1/traces';
export const TRACES_URL = /^\/otel\/v1\/traces\/?(?:\?|$)/i;

/**
 * The traces door as its route runs it: authentication, then the handler. The router (mounted in
 * the app) and the front door (src/http/hot-route.ts, which serves POST without the app's router)
 * share these very functions, so the prune clock is one.
 */
export interface TracesDoor {
  router: express.Router;
  authenticate: RequestHandler;
  handler: RequestHandler;
}

export function otlpReceiver(config: Config, store: Store, authenticator: Authenticator): TracesDoor {
  const router = express.Router();
  const { traces } = config;
  let lastPrune = 0;
  const auth = authenticate(authenticator);
  const handler: RequestHandler = async (req, res) => {
    const { type, encoding } = encodingOf(req);
    try {
      const body = await readOtlpBody(req, res, type, traces);
      let normalized;
      try {
        normalized = parse(body, encoding);
      } catch (err) {
        if (err instanceof OtlpShapeError) throw new OtlpError(400, 3, `The body is not an OTLP ExportTraceServiceRequest: ${err.message}`);
        throw err;
      }
      const caller = res.locals.caller as Caller;
      const ts = await traceStoreOf(store);
      const now = Date.now();
      if (now - lastPrune > 60_000) {
        lastPrune = now;
        void ts.prune(isoOfMs(now - traces.retentionMs)).catch((err) => log.error('traces: pruning failed', { err }));
      }
      // Spans that started before the retention period would be pruned at once: refused, counted.
      const cutoff = isoOfMs(now - traces.retentionMs);
      const fresh = normalized.spans.every((s) => s.start_time >= cutoff) ? normalized.spans : normalized.spans.filter((s) => s.start_time >= cutoff);
      if (fresh.length < normalized.spans.length)
        normalized.reasons.set(`the span started before the retention period (TRIBUNAL_TRACE_RETENTION)`, normalized.spans.length - fresh.length);
      // The rules queue the new spans while the spans are synced (one fdatasync beside the other, not
      // one after the other: issue 33); the 200 waits for both. A store that does not call `decided`
      // (PostgreSQL) is followed by the rules after the insert, as before. A crash between the two
      // syncs may keep a unit whose span is lost: no 200 was sent, so the exporter sends the span
      // again and the unit is merged with it; a unit taken before that ends skipped as span_gone.
      // (Before, the reverse: a span kept without its unit, the retry a duplicate never queued.) A unit
      // judged before its span's sync whose enqueue line the crash also lost is judged again on retry.
      let queued: Promise<void> | undefined;
      const stored = await ts.insertSpans(caller.org.id, fresh, traces.maxSpansPerOrg, (decided) => {
        if (!decided.length) return;
        queued = notifySpansStored(store, caller, decided);
        // Awaited below; if the spans' own write fails first, nobody will: never an unhandled rejection.
        queued.catch(() => {});
      });
      const rejected = normalized.rejected + (normalized.spans.length - fresh.length) + stored.refused;
      countReceived(store, stored.inserted, rejected);
      if (stored.stored.length) await (queued ?? notifySpansStored(store, caller, stored.stored));
      send(
        res,
        encoding,
        200,
        rejected ? { partial: { rejected_spans: rejected, error_message: describeRejections(normalized.reasons, stored.refused, traces.maxSpansPerOrg) } } : {},
      );
    } catch (err) {
      answerFailure(req, res, err, 'spans', (status, error) => send(res, encoding, status, { error }));
    }
  };
  router.post(TRACES_PATH, auth, handler);
  return { router, authenticate: auth, handler };
}
