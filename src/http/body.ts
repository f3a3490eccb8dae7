// JSON request bodies: parsed only after the caller is known (see server.ts), within the size limit,
// and every body fault answered with a problem that says what to fix.
import express, { type NextFunction, type Request, type Response } from 'express';
import { TribunalError } from '../errors.ts';
import { PLAIN_JSON_TYPES, readPlainJson, takesPlainJson } from './plain-json.ts';
import { sendProblem } from './problem.ts';

export const bodyTooLarge = (limitBytes: number) => new TribunalError('payload_too_large', 413, `The request body is over the limit of ${limitBytes} bytes (TRIBUNAL_MAX_BODY).`);

/** Body-parser failures become problems that say what to fix. */
function bodyErrors(limitBytes: number) {
  return (err: unknown, _req: Request, res: Response, next: NextFunction) => {
    const type = (err as { type?: string }).type;
    if (type === 'entity.too.large') return sendProblem(res, bodyTooLarge(limitBytes));
    if (type === 'entity.parse.failed') {
      return sendProblem(
        res,
        new TribunalError('validation_error', 400, `The request body is not valid JSON: ${(err as Error).message}`, { errors: [{ field: '(body)', message: 'invalid JSON' }] }),
      );
    }
    if (type === 'encoding.unsupported' || type === 'charset.unsupported') {
      return sendProblem(res, new TribunalError('validation_error', 415, 'Send the body as UTF-8 JSON (Content-Type: application/json).'));
    }
    if (type === 'request.aborted') return;
    // Any other client-side body fault (a broken gzip stream, a size mismatch...) is the client's to fix.
    const status = (err as { status?: number }).status;
    if (status !== undefined && status >= 400 && status < 500) {
      return sendProblem(
        res,
        new TribunalError('validation_error', 400, `The request body could not be read: ${(err as Error).message}`, { errors: [{ field: '(body)', message: 'unreadable body' }] }),
      );
    }
    next(err);
  };
}

const isJsonType = (req: Request) => PLAIN_JSON_TYPES.has(req.headers['content-type'] ?? '') || Boolean(req.is('application/json'));

export function jsonBody(limitBytes: number): express.RequestHandler[] {
  // type: the same test body-parser makes (type-is against application/json), known values first.
  const parse = express.json({ limit: limitBytes, strict: false, type: (req) => isJsonType(req as Request) });
  const requireJson: express.RequestHandler = (req, res, next) => {
    const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
    if (hasBody && ['POST', 'PATCH', 'PUT'].includes(req.method) && !isJsonType(req)) {
      return sendProblem(res, new TribunalError('validation_error', 415, 'Send the body as JSON with Content-Type: application/json.'));
    }
    // A declared length over the limit is refused before a byte of the body is read.
    if (Number(req.headers['content-length'] ?? 0) > limitBytes) return sendProblem(res, bodyTooLarge(limitBytes));
    next();
  };
  // The common body (plain UTF-8 JSON of a declared length, not compressed) is read directly
  // (plain-json.ts); any other goes through body-parser, as every body did before.
  const read: express.RequestHandler = (req, res, next) => (takesPlainJson(req) ? readPlainJson(req, limitBytes, next) : parse(req, res, next));
  return [requireJson, read, bodyErrors(limitBytes) as unknown as express.RequestHandler];
}
