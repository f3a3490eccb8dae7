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
// or a path the hot routes do not match, goes on through the app as before, untouched.
import { createRequire } from 'node:module';
import type { ErrorRequestHandler, Request, RequestHandler } from 'express';
import { inSeries } from './mount.ts';

// express's own router parts: a route's path is matched by the same Layer (path-to-regexp, its
// param decoding) with the options express.Router({ strict: false }) gives its routes, and the
// path is the one the router matches (parseurl, cached on the request).
const require = createRequire(import.meta.url);
type MatchedPath = { params: Record<string, string> } | false;
const Layer = require('router/lib/layer.js') as new (path: string, options: object, fn: RequestHandler) => { match(path: string): MatchedPath };
const Route = require('router/lib/route.js') as new (path: string) => { path: string };
const parseurl = require('parseurl') as (req: Request) => { pathname?: string | null } | undefined;

export interface HotRoute {
  path: string;
  handler: RequestHandler;
}

/** The hot route that takes a request: its series (the /v1 layers, then the handler), its route and path parameters. */
export interface HotMatch {
  run: RequestHandler;
  route: unknown;
  params: Record<string, string>;
}

/** The hot routes as one middleware, and `find`, the same test alone (src/http/front-door.ts asks it first). */
export interface HotRoutes extends RequestHandler {
  find(req: Request): HotMatch | undefined;
}

/** A cheap first test: a run path of a judge or an evaluator (the route's own pattern then decides). */
const RUN_PATH = /^\/v1\/(?:judges|evaluators)\/[^/?#]+\/execute\/?(?:\?|$)/i;

/** Gives the request what the router gives a matched route: its path parameters and req.route (the request's metric and log label). */
export function enterRoute(req: Request, match: HotMatch): void {
  req.params = match.params;
  (req as Request & { route: unknown }).route = match.route;
}

/**
 * `layers`: the /v1 layers as the app mounts them, each a list run by inSeries; kept apart here so
 * that an error leaving one layer skips the next as express would (the body's error mapping never
 * sees an authentication failure).
 */
export function hotRoutes(routes: HotRoute[], layers: Array<Array<RequestHandler | ErrorRequestHandler>>, passBy: RegExp[]): HotRoutes {
  const door = layers.map((handlers) => inSeries(...handlers));
  const hot = routes.map((r) => ({
    layer: new Layer(r.path, { sensitive: false, strict: false, end: true }, r.handler),
    // req.route as express sets it: the request's metric and log label is the route's pattern.
    route: new Route(r.path),
    run: inSeries(...door, r.handler),
  }));
  const find = (req: Request): HotMatch | undefined => {
    if (req.method !== 'POST' || !RUN_PATH.test(req.url)) return undefined;
    for (const p of passBy) if (p.test(req.url)) return undefined;
    const path = parseurl(req)?.pathname;
    if (typeof path !== 'string') return undefined;
    for (const h of hot) {
      let matched: MatchedPath;
      try {
        matched = h.layer.match(path);
      } catch {
        // A path segment that does not decode: the app's own way answers it, after authentication, as before.
        return undefined;
      }
      if (matched) return { run: h.run, route: h.route, params: matched.params };
    }
    return undefined;
  };
  const middleware: RequestHandler = (req, res, next) => {
    const match = find(req);
    if (!match) return next();
    enterRoute(req, match);
    return match.run(req, res, next);
  };
  return Object.assign(middleware, { find });
}
