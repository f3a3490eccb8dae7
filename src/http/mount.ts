// A door's router entered only for the paths it can answer. express enters every router mounted
// with app.use and tries each of its routes' patterns in turn, so a judged call used to walk the
// demo-user, OTLP, proxy, dataset-stream, judge-file, upload and refine-stream routers before
// reaching its own route (issue 33). `paths` must match every path its router answers; a wider
// pattern is harmless (the router still decides). test/http-mount.test.ts checks every guard
// against its router's own routes.
import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response, Router } from 'express';

export interface GuardedRouter extends RequestHandler {
  readonly paths: RegExp;
  readonly router: Router;
}

/** `paths` is tested against req.url as the app sees it (path and query): case-insensitive like express, never /g. */
export function onlyFor(paths: RegExp, router: Router): GuardedRouter {
  if (paths.global || paths.sticky) throw new Error('onlyFor: a /g or /y pattern keeps state between requests');
  const guarded: RequestHandler = (req, res, next) => {
    if (paths.test(req.url)) router(req, res, next);
    else next();
  };
  return Object.assign(guarded, { paths, router });
}

/**
 * Middlewares run one after another as one layer: express matches a mount path and trims and
 * restores the URL once for the layer instead of once for each of them. It runs them as a router
 * would: an error handler (4 parameters) runs only after a failure, a thrown error or a rejected
 * promise is passed on as a failure, and what is left goes to the router's own `next`.
 */
export function inSeries(...handlers: Array<RequestHandler | ErrorRequestHandler>): RequestHandler {
  return (req, res, done) => new Series(handlers, req, res, done).next();
}

/**
 * One request's way through a series. A class, not a closure made per request: tsx compiles with
 * esbuild's keepNames, which gives every named closure its name with Object.defineProperty each
 * time one is made (about 0.4 µs, a hundred times the closure itself; issue 33).
 */
class Series {
  private i = 0;
  readonly next: (err?: unknown) => void;

  constructor(
    private readonly handlers: Array<RequestHandler | ErrorRequestHandler>,
    private readonly req: Request,
    private readonly res: Response,
    private readonly done: NextFunction,
  ) {
    this.next = this.step.bind(this);
  }

  private step(err?: unknown): void {
    if (err === 'route' || err === 'router') return this.done(err);
    const { handlers, req, res, next } = this;
    while (this.i < handlers.length) {
      const handler = handlers[this.i++]!;
      // As express: a truthy err is a failure; error handlers are skipped without one, the others with one.
      if (Boolean(err) !== (handler.length === 4)) continue;
      try {
        const out: unknown = err ? (handler as ErrorRequestHandler)(err, req, res, next) : (handler as RequestHandler)(req, res, next);
        if (out instanceof Promise) out.catch((failure: unknown) => next(failure ?? new Error('Rejected promise')));
      } catch (failure) {
        return next(failure);
      }
      return;
    }
    this.done(err);
  }
}
