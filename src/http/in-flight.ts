// The requests a server is answering, so that a shutdown can give them a bounded grace period and
// then say, one log line each, which were cut short (they did not complete; no answer was sent).
import type { RequestHandler, Response } from 'express';
import type { Caller } from '../auth.ts';

export class InFlightRequests {
  /** Each answer still open, with when its request came in (its request is res.req). */
  private readonly running = new Map<Response, number>();
  private drained: Array<() => void> = [];
  /**
   * One 'close' listener for every answer, made once: not a closure and a once() wrapper per
   * request (issue 33: every judged call passes here). 'close' comes once per answer.
   */
  private readonly ended: (this: Response) => void;

  constructor() {
    const running = this.running;
    const drained = () => {
      if (running.size === 0) for (const resolve of this.drained.splice(0)) resolve();
    };
    this.ended = function (this: Response) {
      running.delete(this);
      drained();
    };
  }

  readonly middleware: RequestHandler = (_req, res, next) => {
    this.running.set(res, Date.now());
    res.on('close', this.ended);
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
    return [...this.running].map(([res, startedAt]) => {
      const req = res.req;
      const key = (res.locals.caller as Caller | undefined)?.key.prefix ?? 'no key';
      return `${req.method} ${req.originalUrl} (key ${key}, running ${Math.round((now - startedAt) / 1000)} s)`;
    });
  }
}
