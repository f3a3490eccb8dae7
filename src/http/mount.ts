// A door's router entered only for the paths it can answer. express enters every router mounted
// with app.use and tries each of its routes' patterns in turn, so a judged call used to walk the
// demo-user, OTLP, proxy, dataset-stream, judge-file, upload and refine-stream routers before
// reaching its own route (issue 33). `paths` must match every path its router answers; a wider
// pattern is harmless (the router still decides). test/http-mount.test.ts checks every guard
// against its router's own routes.
import type { ErrorRequestHandler, RequestHandler, Router } from 'express';

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
  return (req, res, done) => {
    let i = 0;
    const next = (err?: unknown): void => {
      if (err === 'route' || err === 'router') return done(err);
      while (i < handlers.length) {
        const handler = handlers[i++]!;
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
      done(err);
    };
    next();
  };
}
