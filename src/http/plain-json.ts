// The body of nearly every API call, read directly: JSON in UTF-8 with a declared length and no
// content-encoding. body-parser reads it through layers it needs for the general case (parsing the
// Content-Type for its charset, type-is, an iconv decoder, raw-body's stream handling with an
// async resource per request, http-errors, debug checks): about a tenth of the door's own CPU on a
// judged call (issue 33's profile). Only the reading changes: the same bytes give the same value
// (a leading BOM dropped, invalid UTF-8 replaced, an empty body {}), and every fault is an error of
// the same `type` and status body-parser gives, so body.ts's bodyErrors answers it alike.
import { AsyncResource } from 'node:async_hooks';
import type { NextFunction, Request } from 'express';
import { requestContext } from '../observability/request-context.ts';

/** The Content-Type values JSON clients send, known without parsing the header (body-parser parses it for the charset). */
export const PLAIN_JSON_TYPES: ReadonlySet<string> = new Set(['application/json', 'application/json; charset=utf-8', 'application/json;charset=utf-8']);

/**
 * Whether the request's body is the plain case: one of the known JSON Content-Type values, no
 * Content-Encoding or Transfer-Encoding, a declared Content-Length, and a body still to be read
 * (body-parser's own test for a request it would skip, else it is left to body-parser).
 */
export function takesPlainJson(req: Request): boolean {
  const { headers } = req;
  if (!PLAIN_JSON_TYPES.has(headers['content-type'] ?? '') || headers['content-encoding'] !== undefined || headers['transfer-encoding'] !== undefined) return false;
  if (headers['content-length'] === undefined) return false;
  const socket = req.socket;
  // on-finished's isFinished(req), which makes body-parser skip the body: never taken here.
  return !((req as { upgrade?: boolean }).upgrade || !socket || !socket.readable || (req.complete && !req.readable));
}

/** An error as body-parser (http-errors) makes it: what bodyErrors reads is `type`, `status` and the message. */
const bodyError = (err: Error, status: number, type: string, extra: object = {}) => Object.assign(err, { status, statusCode: status, expose: true, type }, extra);

/**
 * Reads the body, parses it into req.body and calls `next` (with the error, as body-parser would,
 * when it cannot). `limitBytes`: a body never grows past the declared length (node:http stops
 * there), which requireJson already held to the limit; checked again as the bytes arrive.
 */
export function readPlainJson(req: Request, limitBytes: number, next: NextFunction): void {
  const expected = Number(req.headers['content-length']);
  const chunks: Buffer[] = [];
  let received = 0;
  let done = false;
  // Continue in the request's async context, as raw-body does (its AsyncResource per request): only
  // needed, and paid, when one is entered (tracing: observability/request-context.ts).
  const finish = requestContext.getStore() === undefined ? next : AsyncResource.bind(next);
  const settle = (err?: Error) => {
    if (done) return;
    done = true;
    req.removeListener('data', onData);
    req.removeListener('end', onEnd);
    req.removeListener('aborted', onAborted);
    req.removeListener('error', onError);
    req.removeListener('close', onAborted);
    // A body left unread (a fault before its end) is not drained: the problem answer closes the
    // connection (problem.ts), as for a request refused before its body.
    finish(err);
  };
  const onData = (chunk: Buffer) => {
    received += chunk.length;
    if (received > limitBytes) settle(bodyError(new Error('request entity too large'), 413, 'entity.too.large', { limit: limitBytes, received }));
    else chunks.push(chunk);
  };
  const onEnd = () => {
    if (done) return;
    if (received !== expected) return settle(bodyError(new Error('request size did not match content length'), 400, 'request.size.invalid', { expected, received }));
    let text = (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received)).toString('utf8');
    // body-parser's UTF-8 decoder (iconv-lite) drops a leading byte order mark.
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    try {
      // strict: false, as the parser is configured (body.ts): any JSON value; an empty body is {}.
      req.body = text.length === 0 ? {} : JSON.parse(text);
    } catch (err) {
      return settle(bodyError(err as Error, 400, 'entity.parse.failed', { body: text }));
    }
    settle();
  };
  const onAborted = () => settle(bodyError(new Error('request aborted'), 400, 'request.aborted', { code: 'ECONNABORTED', expected, received }));
  // A stream error: as body-parser, a 400 "could not be read" (bodyErrors' answer for a client fault).
  const onError = (err: Error) => settle(Object.assign(err, { status: 400, statusCode: 400, expose: true }));
  req.on('data', onData);
  req.on('end', onEnd);
  req.on('aborted', onAborted);
  req.on('error', onError);
  req.on('close', onAborted);
}
