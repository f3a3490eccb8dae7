// A door's router entered only for the paths it can answer. express enters every router mounted
// with app.use and tries each of its routes' patterns in turn, so a judged call used to walk the
// demo-user, OTLP, proxy, dataset-stream, judge-file, upload and refine-stream routers before
// reaching its own route (issue 33). `paths` must match every path its router answers; a wider
// pattern is harmless (the router still decides). test/http-mount.test.ts checks every guard
// against its router's own routes.
import type { RequestHandler, Router } from 'express';

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
