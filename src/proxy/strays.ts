// Requests under the judge proxy's path prefixes that no proxy route takes: a wrong method, a path
// with an empty judge id, a sub-path the proxy does not serve (an OpenAI client's `models.list()`),
// a judge id that is not valid percent-encoding. They would otherwise fall through to the REST
// answers (problem+json), which an OpenAI client cannot read as an API error; here they answer in
// OpenAI's shape with the status a client maps to its usual exception. The prefixes are the bases
// an OpenAI client is given: /v1/judges/openai (judge by header), /v1/judges/{judge_id}/openai and
// /v1/judges/{judge_id}/refine/openai. /v1/judges/openai/ itself stays REST's (GET /v1/judges/{judge_id}/).
import type { NextFunction, Request, Response } from 'express';
import { TribunalError, validationError } from '../errors.ts';
import { sendOpenAIError } from './errors.ts';

// Case-insensitive as express's routing is; the judge id segment may be empty (`/v1/judges//openai/`).
const PROXY_PREFIX = /^\/v1\/judges\/(?:openai\/.|[^/]*\/(?:refine\/)?openai(?:\/|$))/i;
const EMPTY_JUDGE = /^\/v1\/judges\/\/(?:refine\/)?openai(?:\/|$)/i;

/** True for a path under one of the proxy's bases. */
export const isProxyPath = (path: string) => PROXY_PREFIX.test(path);

const SERVED =
  'POST {base}/chat/completions and POST {base}/responses, with base /v1/judges/{judge_id}/openai (or /v1/judges/openai and the X-Judge-Id header), and POST /v1/judges/{judge_id}/refine/openai/chat/completions';

/** A proxy path asked with another method than POST: 405 with Allow. */
export function methodNotAllowed(req: Request, res: Response): void {
  const error = new TribunalError('validation_error', 405, `${req.method} is not allowed on ${req.path}: the judge proxy takes POST here.`, { headers: { Allow: 'POST' } });
  sendOpenAIError(res, error, 'method_not_allowed');
}

/** Anything else under the proxy's prefixes: an empty judge id (400) or a path the proxy does not serve (404). */
export function unknownProxyPath(req: Request, res: Response, next: NextFunction): void {
  if (!isProxyPath(req.path)) return next();
  if (EMPTY_JUDGE.test(req.path)) {
    return sendOpenAIError(
      res,
      validationError(
        'The path names no judge (/v1/judges//...): put the judge id or name between /v1/judges/ and /openai, or use /v1/judges/openai/... with the X-Judge-Id header.',
        [{ field: 'judge_id', message: 'empty' }],
      ),
    );
  }
  sendOpenAIError(res, new TribunalError('not_found', 404, `The judge proxy has no path ${req.method} ${req.path}. It serves ${SERVED}.`));
}

/** Errors on the proxy's prefixes (a judge id that is not valid percent-encoding is a 400) in OpenAI's shape; others pass on. */
export function proxyPathErrors(err: unknown, req: Request, res: Response, next: NextFunction): void {
  if (!isProxyPath(req.path)) return next(err);
  sendOpenAIError(res, err);
}
