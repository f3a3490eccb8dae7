// Errors on the proxy paths speak OpenAI's protocol: `{error: {message, type, param, code}}` with the
// status an OpenAI client maps to its usual exception (AuthenticationError, NotFoundError,
// RateLimitError, ...). The message is Tribunal's own (it says what to fix); `code` is Tribunal's code.
import type { Response } from 'express';
import { problemOf } from '../http/problem.ts';
import { log } from '../log.ts';

const TYPE_BY_STATUS: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  405: 'invalid_request_error',
  409: 'invalid_request_error',
  413: 'invalid_request_error',
  415: 'invalid_request_error',
  429: 'rate_limit_error',
};

export function openAIErrorBody(status: number, message: string, code: string | null, param: string | null = null) {
  return { error: { message, type: TYPE_BY_STATUS[status] ?? (status >= 500 ? 'server_error' : 'invalid_request_error'), param, code } };
}

/** Anything thrown, as OpenAI's error shape (never a bare 500 with a stack); `code` names a finer code than the error's. */
export function sendOpenAIError(res: Response, err: unknown, code?: string): void {
  const error = problemOf(err);
  if (error.code === 'internal_error') log.error('unexpected error on the judge proxy', { err });
  if (res.headersSent) return;
  const req = res.req;
  const hasBody = req && (req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0);
  if (hasBody && !req.complete) res.setHeader('Connection', 'close');
  res.locals.problemCode = code ?? error.code;
  for (const [k, v] of Object.entries(error.headers ?? {})) res.setHeader(k, v);
  const param = error.errors?.[0]?.field ?? null;
  res.status(error.status).json(openAIErrorBody(error.status, error.message, code ?? error.code, param));
}
