// What can go wrong on a judge-model call, classified so the retry layer and the engine can decide
// what to do without looking at HTTP details. Messages are written for the caller of Tribunal: they
// say what happened and what to change, and never contain the API key.

import type { ModelUsage } from './model.ts';

export type ModelErrorKind =
  /** 429: the provider's rate limit. Retried, honouring retry-after. */
  | 'rate_limited'
  /** 529 (or 503): the provider is overloaded. Retried. */
  | 'overloaded'
  /** Other 5xx, 408, 409: a provider-side failure. Retried. */
  | 'server_error'
  /** No answer within TRIBUNAL_MODEL_TIMEOUT. Retried. */
  | 'timeout'
  /** The connection failed or dropped. Retried. */
  | 'connection'
  /** 401/403: the key was refused. Not retried. */
  | 'auth'
  /** Other 4xx (unknown model, bad request). Not retried. */
  | 'rejected'
  /** The model answered, but not through the tool or not in its schema. The engine retries it. */
  | 'malformed'
  /** The caller (or the server shutting down) cancelled the call. Not retried. */
  | 'aborted';

const RETRYABLE = new Set<ModelErrorKind>(['rate_limited', 'overloaded', 'server_error', 'timeout', 'connection']);

export class ModelCallError extends Error {
  readonly kind: ModelErrorKind;
  readonly status?: number;
  /** The provider's retry-after, in ms, when it sent one. */
  readonly retryAfterMs?: number;
  /** Tokens the failed attempt still spent (a malformed answer is billed). */
  readonly usage: ModelUsage;
  /** The model that answered, when one did. */
  readonly model?: string;
  /** How many attempts were made before giving up (set by the retry layer). */
  attempts = 1;

  constructor(kind: ModelErrorKind, message: string, opts: { status?: number; retryAfterMs?: number; usage?: ModelUsage; model?: string; cause?: unknown } = {}) {
    super(message, { cause: opts.cause });
    this.name = 'ModelCallError';
    this.kind = kind;
    this.status = opts.status;
    this.retryAfterMs = opts.retryAfterMs;
    this.usage = opts.usage ?? { input_tokens: 0, output_tokens: 0 };
    this.model = opts.model;
  }

  get retryable(): boolean {
    return RETRYABLE.has(this.kind);
  }
}

/** retry-after-ms (Anthropic's precise header), else retry-after in seconds or as an HTTP date. */
export function parseRetryAfter(headers: { get(name: string): string | null } | undefined | null, now = Date.now()): number | undefined {
  if (!headers) return undefined;
  const ms = headers.get('retry-after-ms');
  if (ms !== null && ms.trim() !== '' && Number.isFinite(Number(ms)) && Number(ms) >= 0) return Number(ms);
  const value = headers.get('retry-after');
  if (value === null || value.trim() === '') return undefined;
  if (Number.isFinite(Number(value)) && Number(value) >= 0) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** A status code to a kind. */
export function kindForStatus(status: number): ModelErrorKind {
  if (status === 429) return 'rate_limited';
  if (status === 529 || status === 503) return 'overloaded';
  if (status === 401 || status === 403) return 'auth';
  if (status >= 500 || status === 408 || status === 409) return 'server_error';
  return 'rejected';
}

/** The HTTP status for failed calls: 504 when all timed out, 503 when all were throttled, else 502. */
export function failureStatus(kinds: ModelErrorKind[]): 502 | 503 | 504 {
  if (kinds.length && kinds.every((k) => k === 'timeout')) return 504;
  if (kinds.length && kinds.every((k) => k === 'rate_limited' || k === 'overloaded')) return 503;
  return 502;
}
