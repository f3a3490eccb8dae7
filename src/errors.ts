// One error type for the whole server. REST turns it into application/problem+json, MCP into a
// tool result with isError: true. The `detail` is written for the caller: it says what to fix.
import { z } from 'zod';
import { unknownFieldErrors } from './unknown-fields.ts';

export type ErrorCode =
  | 'not_authenticated'
  | 'permission_denied'
  | 'not_found'
  | 'validation_error'
  | 'missing_field'
  | 'conflict'
  | 'rate_limited'
  | 'payload_too_large'
  | 'model_unavailable'
  | 'not_available'
  | 'store_unavailable'
  | 'internal_error'
  // Budgets (room h-cost): a cost cap is spent until its reset (429 with Retry-After).
  | 'budget_exceeded';

/** Finer reasons within a code where the caller's next step differs. */
export type ErrorReason = 'model_not_configured' | 'edited_concurrently' | 'too_many_keys';

const TITLES: Record<ErrorCode, string> = {
  not_authenticated: 'Not authenticated',
  permission_denied: 'Permission denied',
  not_found: 'Not found',
  validation_error: 'Invalid request',
  missing_field: 'Missing required input',
  conflict: 'Conflict',
  rate_limited: 'Too many requests',
  payload_too_large: 'Payload too large',
  model_unavailable: 'Judge model unavailable',
  not_available: 'Not available yet',
  store_unavailable: 'Store unavailable',
  internal_error: 'Internal error',
  budget_exceeded: 'Budget exceeded',
};

export interface FieldError {
  field: string;
  message: string;
}

export class TribunalError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly errors?: FieldError[];
  readonly headers?: Record<string, string>;
  /** Extra members merged into the problem body (e.g. generation outcomes). */
  readonly extra?: Record<string, unknown>;
  /** Why, for a program (a door's hint) rather than a person: e.g. `model_not_configured`. */
  readonly reason?: ErrorReason;

  constructor(
    code: ErrorCode,
    status: number,
    detail: string,
    opts: { errors?: FieldError[]; headers?: Record<string, string>; extra?: Record<string, unknown>; reason?: ErrorReason } = {},
  ) {
    super(detail);
    this.name = 'TribunalError';
    this.code = code;
    this.status = status;
    this.errors = opts.errors;
    this.headers = opts.headers;
    this.extra = opts.extra;
    this.reason = opts.reason;
  }

  toProblem(): Record<string, unknown> {
    return {
      type: `https://tribunal.dev/problems/${this.code.replace(/_/g, '-')}`,
      title: TITLES[this.code],
      status: this.status,
      detail: this.message,
      code: this.code,
      ...(this.errors ? { errors: this.errors } : {}),
      ...(this.extra ?? {}),
    };
  }
}

export const notFound = (what: string, id: string) => new TribunalError('not_found', 404, `${what} ${JSON.stringify(id)} was not found (or is not visible to your organization)`);

export const permissionDenied = (detail: string) => new TribunalError('permission_denied', 403, detail);

export const validationError = (detail: string, errors?: FieldError[]) => new TribunalError('validation_error', 400, detail, { errors });

export const notAuthenticated = (detail: string) =>
  new TribunalError('not_authenticated', 401, detail, {
    headers: { 'WWW-Authenticate': 'Bearer realm="tribunal", Api-Key realm="tribunal"' },
  });

/** Turns a zod failure into a validation error that lists each offending field. */
export function fromZodError(err: z.ZodError, where = 'request'): TribunalError {
  const errors = err.issues.flatMap((issue) => unknownFieldErrors(issue) ?? [{ field: issue.path.length ? issue.path.map(String).join('.') : '(body)', message: issue.message }]);
  const summary = errors.map((e) => `${e.field}: ${e.message}`).join('; ');
  return validationError(`Invalid ${where}: ${summary}`, errors);
}

/** Anything thrown that is not a TribunalError is a bug or an outage; never leak its internals. */
export function asTribunalError(err: unknown): TribunalError {
  if (err instanceof TribunalError) return err;
  if (err instanceof z.ZodError) return fromZodError(err);
  return new TribunalError('internal_error', 500, 'An unexpected error occurred; it has been logged on the server.');
}
