// The judged call's own way through the app (issue 33). POST /v1/judges/{id}/execute/ (and the
// evaluator's) used to walk every layer of the app (health, demo user, MCP, OTLP, OpenAPI, proxy,
// the /v1 mounts, the stream and upload guards) and then about thirty POST route patterns before
// its own. Here it is taken right after the layers every request passes (observability, nosniff,
// in-flight tracking), through the very same /v1 handlers in the same order (session cookie, API
// key, rate limit, JSON body with its limits and error mapping) and the same route handler.
//
// A request is taken only when no other layer could have answered it first: its path is one of
// the given routes' paths and none of the guarded routers mounted before the REST routes would
// have been entered (`passBy`: their own path patterns, tested as they test them). Anything else,
// or a path the hot router does not match, goes on through the app as before, untouched.
import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import { inSeries } from './mount.ts';

export interface HotRoute {
  path: string;
  handler: RequestHandler;
}

/** A cheap first test: a run path of a judge or an evaluator (the router then matches exactly). */
const RUN_PATH = /^\/v1\/(?:judges|evaluators)\/[^/?#]+\/execute\/?(?:\?|$)/i;

/**
 * `layers`: the /v1 layers as the app mounts them, each a list run by inSeries; kept apart here so
 * that an error leaving one layer skips the next as express would (the body's error mapping never
 * sees an authentication failure).
 */
export function hotRoutes(routes: HotRoute[], layers: Array<Array<RequestHandler | ErrorRequestHandler>>, passBy: RegExp[]): RequestHandler {
  // strict: false and case-insensitive paths, as the REST routers match them.
  const router = express.Router({ strict: false });
  const door = layers.map((handlers) => inSeries(...handlers));
  for (const r of routes) router.post(r.path, inSeries(...door, r.handler));
  return (req, res, next) => {
    if (req.method !== 'POST' || !RUN_PATH.test(req.url)) return next();
    for (const p of passBy) if (p.test(req.url)) return next();
    router(req, res, next);
  };
}
