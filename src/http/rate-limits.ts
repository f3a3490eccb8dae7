// Rate limits: per API key for REST and MCP together, per client address for demo users. Counters
// live in the given store (Redis, shared by every instance) or in this instance's memory.
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { rateLimit, type IncrementResponse, type Options, type Store as RateLimitStore } from 'express-rate-limit';
import type { Caller } from '../auth.ts';
import type { Config } from '../config.ts';
import { TribunalError } from '../errors.ts';
import { log } from '../log.ts';
import { sendProblem } from './problem.ts';
import { WindowCounter } from './window-counter.ts';

const retryAfterSeconds = (resetTime: Date | undefined, windowMs: number) => Math.max(1, Math.ceil(((resetTime?.getTime() ?? Date.now() + windowMs) - Date.now()) / 1000));

const limited = (detail: string, retryAfter: number) => new TribunalError('rate_limited', 429, detail, { headers: { 'Retry-After': String(retryAfter) } });

function rateLimitedHandler(windowMs: number, detail: string) {
  return (req: Request, res: Response) => {
    const resetTime = (req as Request & { rateLimit?: { resetTime?: Date } }).rateLimit?.resetTime;
    sendProblem(res, limited(detail, retryAfterSeconds(resetTime, windowMs)));
  };
}

export interface KeyRateLimit {
  /** Counts the request once; answers 429 when the key is over its budget. */
  middleware: RequestHandler;
  /**
   * Counts `units` more against the caller's key (a JSON-RPC batch costs one unit per message).
   * Answers 429 itself and resolves false when that goes over the budget.
   */
  charge(res: Response, units: number, send?: (res: Response, err: unknown) => void): Promise<boolean>; // send: h-proxy (OpenAI's error shape)
}

/** Rate limit per API key (after auth). One limiter for REST and MCP: a key limited to N gets N in total. */
export function keyRateLimit(config: Config, makeStore?: () => RateLimitStore): KeyRateLimit {
  const { limit, windowMs } = config.rateLimit;
  const store = makeStore?.() ?? new WindowCounter();
  // What express-rate-limit does when it builds a limiter: the store learns the window (memory expiry, Redis keys).
  const initFailed = (err: unknown) => log.error('rate limit: the store failed to start; requests are let through while it fails', { err });
  try {
    const started = store.init?.({ windowMs, limit } as Options);
    if (started instanceof Promise) started.catch(initFailed);
  } catch (err) {
    initFailed(err);
  }
  const detail = `This API key is limited to ${limit} requests per ${windowMs / 1000} s (TRIBUNAL_RATE_LIMIT); wait and retry.`;
  const keyOf = (res: Response) => `key:${(res.locals.caller as Caller).key.id}`;
  const policy = `${limit};w=${Math.ceil(windowMs / 1000)}`;
  // A count, or the promise of one: the memory counter answers at once (window-counter.ts), Redis
  // later. A store that throws is a failure like a rejected promise.
  const count = (res: Response): IncrementResponse | Promise<IncrementResponse> => {
    try {
      return store.increment(keyOf(res));
    } catch (err) {
      return Promise.reject(err);
    }
  };
  // Every authenticated request passes here. express-rate-limit's middleware (kept for the demo
  // users) awaited five promises and ran its development checks on each one; this counts the
  // request in the same store and sets the same IETF draft-7 headers, and a key over its limit gets
  // the same 429 problem with Retry-After (issue 33).
  const counted = (res: Response, next: NextFunction, { totalHits, resetTime }: IncrementResponse) => {
    if (!res.headersSent) {
      const reset = resetTime ? Math.max(0, Math.ceil((resetTime.getTime() - Date.now()) / 1000)) : Math.ceil(windowMs / 1000);
      res.setHeader('RateLimit-Policy', policy);
      res.setHeader('RateLimit', `limit=${limit}, remaining=${Math.max(limit - totalHits, 0)}, reset=${reset}`);
    }
    if (totalHits > limit) sendProblem(res, limited(detail, retryAfterSeconds(resetTime, windowMs)));
    else next();
  };
  const storeFailed = (next: NextFunction, err: unknown) => {
    // A Redis outage must not take the API down: fail open (the shared store already falls back to memory).
    log.error('rate limit: the store failed; the request is let through', { err });
    next();
  };
  const middleware: RequestHandler = (_req, res, next) => {
    const hits = count(res);
    // Any thenable is a promise of a count (a store's own promise type included).
    if (typeof (hits as Partial<Promise<IncrementResponse>>).then === 'function') {
      (hits as Promise<IncrementResponse>).then(
        (h) => counted(res, next, h),
        (err) => storeFailed(next, err),
      );
    } else counted(res, next, hits as IncrementResponse);
  };
  async function charge(res: Response, units: number, send: (res: Response, err: unknown) => void = sendProblem): Promise<boolean> {
    for (let i = 0; i < units; i++) {
      let hits: { totalHits: number; resetTime?: Date };
      try {
        hits = await count(res);
      } catch {
        return true; // fail open, as the middleware does
      }
      if (hits.totalHits > limit) {
        send(res, limited(`${detail} A JSON-RPC batch counts every message in it.`, retryAfterSeconds(hits.resetTime, windowMs)));
        return false;
      }
    }
    return true;
  }
  return { middleware, charge };
}

/** Demo users per client address (the address express derives under TRUST_PROXY). */
export function demoRateLimit(config: Config, makeStore?: () => RateLimitStore) {
  const { limit, windowMs } = config.demoRateLimit;
  return rateLimit({
    windowMs,
    limit,
    standardHeaders: 'draft-7',
    legacyHeaders: false,
    store: makeStore?.(),
    passOnStoreError: true,
    // X-Forwarded-For from a proxy not named in TRUST_PROXY is ignored on purpose, not a misconfiguration.
    validate: { xForwardedForHeader: false },
    handler: rateLimitedHandler(windowMs, `Too many demo users from your address (limit ${limit} per ${windowMs / 60000} min); wait and retry.`),
  });
}
