// The front door's routes (issue 33): requests served right after the layers every request passes
// (observability, nosniff, in-flight tracking), through their own layers and handler, instead of
// walking every layer of the app before them. Each kind of hot route keeps exactly the way the app
// gives it:
// - the judged call (POST /v1/judges/{id}/execute/ and the evaluator's): the same /v1 handlers in the
//   same order (session cookie, API key, rate limit, JSON body with its limits and error mapping),
//   where it used to walk health, demo user, MCP, OTLP, OpenAPI, proxy, the /v1 mounts, the stream
//   and upload guards and about thirty POST route patterns before its own;
// - the OTLP traces receiver (POST /otel/v1/traces): its own authentication, then its handler, where
//   it used to walk the demo guard, the /mcp mount and the guarded OTLP router.
//
// A request is taken only when no other layer could have answered it first: its method is POST, its
// path is one of the kind's routes' paths and none of the routers mounted before that kind's routes
// would have been entered (`passBy`: their own path patterns, tested as they test them). Anything
// else (another method, another path) goes on through the app as before, untouched.
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

/** One kind of hot route: POST routes that share their layers and the routers they step aside for. */
export interface HotKind {
  /** A cheap first test of req.url (the routes' own patterns then decide); never /g or /y. */
  pretest: RegExp;
  routes: HotRoute[];
  /**
   * The layers the app runs before these routes' handlers, each a list run by inSeries; kept apart
   * here so that an error leaving one layer skips the next as express would (the body's error
   * mapping never sees an authentication failure).
   */
  layers: Array<Array<RequestHandler | ErrorRequestHandler>>;
  /** The path patterns of the routers the app enters before these routes: a request one of them matches is left to the app. */
  passBy: RegExp[];
}

/** The hot route that takes a request: its series (its kind's layers, then the handler), its route and path parameters. */
export interface HotMatch {
  run: RequestHandler;
  route: unknown;
  params: Record<string, string>;
}

/** The hot routes as one middleware, and `find`, the same test alone (src/http/front-door.ts asks it first). */
export interface HotRoutes extends RequestHandler {
  find(req: Request): HotMatch | undefined;
}

/** The judged call's first test: a run path of a judge or an evaluator. */
export const RUN_PATH = /^\/v1\/(?:judges|evaluators)\/[^/?#]+\/execute\/?(?:\?|$)/i;

/** Gives the request what the router gives a matched route: its path parameters and req.route (the request's metric and log label). */
export function enterRoute(req: Request, match: HotMatch): void {
  req.params = match.params;
  (req as Request & { route: unknown }).route = match.route;
}

type Compiled = { layer: { match(path: string): MatchedPath }; route: unknown; run: RequestHandler };

function compile(kind: HotKind): { pretest: RegExp; passBy: RegExp[]; hot: Compiled[] } {
  if (kind.pretest.global || kind.pretest.sticky) throw new Error('hotRoutes: a /g or /y pretest keeps state between requests');
  const door = kind.layers.map((handlers) => inSeries(...handlers));
  const hot = kind.routes.map((r) => ({
    layer: new Layer(r.path, { sensitive: false, strict: false, end: true }, r.handler),
    // req.route as express sets it: the request's metric and log label is the route's pattern.
    route: new Route(r.path),
    run: inSeries(...door, r.handler),
  }));
  return { pretest: kind.pretest, passBy: kind.passBy, hot };
}

/** The given kinds' routes; a request goes to the first kind whose pretest takes it. */
export function hotRoutes(kinds: HotKind[]): HotRoutes {
  const compiled = kinds.map(compile);
  const find = (req: Request): HotMatch | undefined => {
    if (req.method !== 'POST') return undefined;
    let kind: (typeof compiled)[number] | undefined;
    for (const k of compiled) {
      if (!k.pretest.test(req.url)) continue;
      kind = k;
      break;
    }
    if (!kind) return undefined;
    for (const p of kind.passBy) if (p.test(req.url)) return undefined;
    const path = parseurl(req)?.pathname;
    if (typeof path !== 'string') return undefined;
    for (const h of kind.hot) {
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
