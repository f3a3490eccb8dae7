// The one place where anything thrown becomes the error a caller sees: REST and the web app send it
// as application/problem+json (sendProblem), MCP as a tool result with isError (mcp.ts). An outage or
// a malformed request never surfaces as a bare 500.
import type { Request, Response } from 'express';
import { asTribunalError, TribunalError, validationError } from '../errors.ts';
import { StoreUnavailableError } from '../store/types.ts';
import { log } from '../log.ts';

export function problemOf(err: unknown): TribunalError {
  if (err instanceof TribunalError) return err;
  if (err instanceof StoreUnavailableError) return new TribunalError('store_unavailable', 503, 'The store is unreachable; try again shortly.');
  // express's router throws URIError for a path segment that is not valid percent-encoding (/v1/judges/%FF/).
  if (err instanceof URIError) {
    return validationError('The request path is not valid percent-encoding (a % must be followed by two hex digits of UTF-8); fix the address.', [
      { field: '(path)', message: 'malformed percent-encoding' },
    ]);
  }
  // Middleware errors made with http-errors that are the client's to fix (a bad Range, a malformed path...).
  const status = (err as { status?: unknown; expose?: unknown } | null)?.status;
  if (typeof status === 'number' && status >= 400 && status < 500 && (err as { expose?: unknown }).expose === true) {
    return new TribunalError('validation_error', 400, `The request could not be served: ${(err as Error).message}`);
  }
  return asTribunalError(err);
}

export function sendProblem(res: Response, err: unknown): void {
  const error = problemOf(err);
  if (error.code === 'internal_error') log.error('unexpected error', { err });
  if (res.headersSent) return;
  // A body the server never read (refused before parsing: no key, over a limit) is not drained:
  // the connection closes after this answer instead.
  const req = res.req;
  const hasBody = req && (req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0);
  if (hasBody && !req.complete) res.setHeader('Connection', 'close');
  res.locals.problemCode = error.code; // for the request log line and the store-error metric
  res.status(error.status);
  for (const [k, v] of Object.entries(error.headers ?? {})) res.setHeader(k, v);
  res.type('application/problem+json').send(JSON.stringify({ ...error.toProblem(), request_id: res.locals.requestId }));
}

/** What a request no route answers gets (the app's last layer, and the front door's). */
export const noRoute = (req: Request) =>
  new TribunalError('not_found', 404, `No route ${req.method} ${req.path}. The API lives under /v1/ (see /v1/openapi.json) and MCP at /mcp.`);
