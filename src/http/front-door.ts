// The front door (issue 33): a request one of the hot routes takes (src/http/hot-route.ts: the
// judged call, the OTLP traces receiver) is served without express's app.handle and app router.
// Per request those made a final handler (finalhandler's closures, the env setting read), entered
// the app router (its closures, the restore of baseUrl/next/params) and tried its first layers in
// turn, before the route was reached; the floor's one express route pays that once, the judged
// call and the traces export paid it on top of their own series (a traces export that stores
// nothing: 108 -> 92 us of server CPU, same sitting). Here the request gets what app.handle gives
// every request (the circular req/res links, express's request and response prototypes,
// res.locals, X-Powered-By when enabled) and what the app router gives it (baseUrl, originalUrl),
// then the very layers the app runs first, in the same order (`first`: observability, nosniff,
// in-flight tracking), then the hot route's own series.
//
// Which requests: only those `hot.find` takes, decided from the method and URL alone before anything
// runs, and only when the app is the server's own request listener (no `callback`: an app mounted
// in another app keeps the ordinary way). Everything else goes to express's app.handle untouched.
import http from 'node:http';
import type { Express, NextFunction, Request, RequestHandler, Response } from 'express';
import { enterRoute, type HotRoutes } from './hot-route.ts';
import { inSeries } from './mount.ts';
import { noRoute, sendProblem } from './problem.ts';

type Handle = (req: Request, res: Response, callback?: NextFunction) => void;
type App = Express & { handle: Handle; request: object; response: object };

/**
 * Where the hot route's series ends when it did not answer: an error goes where the app's last
 * layer sends it (problem+json); nothing answered is the app's 404. (Neither happens on the way of a
 * run: its handler always answers; this keeps the app's own outcomes if a layer ever passes.)
 */
function finish(req: Request, res: Response, err: unknown): void {
  if (err && err !== 'route' && err !== 'router') return sendProblem(res, err);
  sendProblem(res, noRoute(req));
}

export function frontDoor(app: Express, hot: HotRoutes, first: RequestHandler[]): void {
  const door = app as App;
  const handle: Handle = door.handle.bind(door);
  const before = inSeries(...first);
  door.handle = (req, res, callback) => {
    const match = callback === undefined ? hot.find(req) : undefined;
    if (!match) return handle(req, res, callback);
    // What express's app.handle does for every request (express 5.x lib/application.js).
    if (door.enabled('x-powered-by')) res.setHeader('X-Powered-By', 'Express');
    req.res = res;
    res.req = req;
    // Born with them when the server was made with expressMessages (below): nothing to change then.
    if (Object.getPrototypeOf(req) !== door.request) Object.setPrototypeOf(req, door.request);
    if (Object.getPrototypeOf(res) !== door.response) Object.setPrototypeOf(res, door.response);
    if (!res.locals) res.locals = Object.create(null);
    // What the app router sets before its first layer (its mount path is '/').
    req.baseUrl = '';
    req.originalUrl = req.originalUrl || req.url;
    enterRoute(req, match);
    before(req, res, (err?: unknown) => (err ? finish(req, res, err) : match.run(req, res, (out?: unknown) => finish(req, res, out))));
  };
}

/**
 * node:http's request and response classes, their objects born with the app's express prototypes
 * (app.request, app.response) instead of given them by app.handle: Object.setPrototypeOf on a fresh
 * IncomingMessage or ServerResponse costs about 3 us (measured on Node 20: 3.1-3.4 us against
 * 0.2-0.6 us for one born with it), twice per request. For http.createServer's options; app.handle
 * and the front door then find the prototype already set (V8 returns at once for the same one).
 */
export function expressMessages(app: Express): { IncomingMessage: typeof http.IncomingMessage; ServerResponse: typeof http.ServerResponse } {
  const door = app as App;
  // Plain functions, as node:http's own are: called with the object `new` made, their prototype the app's.
  function AppRequest(this: http.IncomingMessage, socket: unknown) {
    (http.IncomingMessage as unknown as (this: unknown, socket: unknown) => void).call(this, socket);
  }
  AppRequest.prototype = door.request;
  function AppResponse(this: http.ServerResponse, req: unknown, options: unknown) {
    (http.ServerResponse as unknown as (this: unknown, req: unknown, options: unknown) => void).call(this, req, options);
  }
  AppResponse.prototype = door.response;
  return { IncomingMessage: AppRequest as unknown as typeof http.IncomingMessage, ServerResponse: AppResponse as unknown as typeof http.ServerResponse };
}
