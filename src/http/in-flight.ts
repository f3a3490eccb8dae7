// The requests a server is answering, so that a shutdown can give them a bounded grace period and
// then say, one log line each, which were cut short (they did not complete; no answer was sent).
import type { Request, RequestHandler, Response } from 'express';
import type { Caller } from '../auth.ts';

interface Running {
  req: Request;
  res: Response;
  startedAt: number;
}

export class InFlightRequests {
  private readonly running = new Set<Running>();
  private drained: Array<() => void> = [];

  readonly middleware: RequestHandler = (req, res, next) => {
    const entry: Running = { req, res, startedAt: Date.now() };
    this.running.add(entry);
    res.once('close', () => {
      this.running.delete(entry);
      if (this.running.size === 0) for (const resolve of this.drained.splice(0)) resolve();
    });
    next();
  };

  get size(): number {
    return this.running.size;
  }

  /** Resolves true when every request has ended, false when `ms` passed first. */
  settle(ms: number): Promise<boolean> {
    if (this.running.size === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), ms);
      this.drained.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  /** One line per request still running; the caller then ends their connections. */
  describeCutShort(now = Date.now()): string[] {
    return [...this.running].map(({ req, res, startedAt }) => {
      const key = (res.locals.caller as Caller | undefined)?.key.prefix ?? 'no key';
      return `${req.method} ${req.originalUrl} (key ${key}, running ${Math.round((now - startedAt) / 1000)} s)`;
    });
  }
}
