// createServer(services) -> an express app. No globals: tests build their own.
// A request's way: HTTP -> auth (headers only) -> rate limit -> body within limits -> (REST route | MCP)
// -> one definition through invokeTool. Each door (rest.ts, mcp.ts, web/router.ts) owns its routes;
// the HTTP helpers they share live in src/http/.
import express, { type NextFunction, type Request, type Response } from 'express';
import type { Store as RateLimitStore } from 'express-rate-limit';
import { Authenticator } from './auth.ts';
import { datasetStreamRoutes } from './http/dataset-stream.ts';
import { judgeFileRoutes } from './surface/routes.ts';
import { fileUploadRoute } from './files/routes.ts';
import { authenticate } from './http/authenticate.ts';
import { jsonBody } from './http/body.ts';
import type { InFlightRequests } from './http/in-flight.ts';
import { frontDoor } from './http/front-door.ts';
import { hotRoutes, RUN_PATH } from './http/hot-route.ts';
import { inSeries, onlyFor, type GuardedRouter } from './http/mount.ts';
import { noRoute, sendProblem } from './http/problem.ts';
import { demoRateLimit, keyRateLimit } from './http/rate-limits.ts';
import { mcpRouter } from './mcp.ts';
import { observabilityRouter } from './observability/http.ts';
import { quietObservability, type Observability } from './observability/index.ts';
import { openApiDocument } from './openapi.ts';
import { proxyRouter } from './proxy/router.ts'; // h-proxy
import { refineStreamRoute } from './proxy/refine-stream.ts'; // h-proxy
import { demoUserRoute, restHandler, restRouter, runRoutes } from './rest.ts';
import type { Services } from './tool.ts';
import { webRouter, webSessionAuth } from './web/router.ts';
import { otlpReceiver, TRACES_PATH, TRACES_URL } from './traces/receiver.ts'; // h-traces
import { otlpLogsReceiver } from './traces/logs-receiver.ts'; // h-otellogs

export interface ServerOptions {
  /** Shared rate-limit counters (Redis) for several instances; default in memory, per instance. */
  rateLimitStore?: () => RateLimitStore;
  /** Tracks the requests in flight, so that a shutdown can wait for them and log what it cut short. */
  inFlight?: InFlightRequests;
  /** Logs, metrics, traces, readiness (src/observability); default: no log output. false: none of it (the overhead bench). */
  observability?: Observability | false;
}

/** express `trust proxy` from TRUST_PROXY: false (default: no proxy), true, a hop count, or addresses/subnets. */
export function trustProxySetting(value: string): boolean | number | string {
  if (value === 'true' || value === 'false') return value === 'true';
  if (/^\d+$/.test(value)) return Number(value);
  return value;
}

export function createServer(services: Services, opts: ServerOptions = {}): express.Express {
  const { config, store } = services;
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', trustProxySetting(config.trustProxy));
  app.set('json spaces', 0);
  const authenticator = new Authenticator(store);
  const observe = opts.observability === false ? [] : [observabilityRouter(opts.observability ?? quietObservability(config), store)];
  for (const layer of observe) app.use(layer);

  // The routers entered by path before the REST routes (below), and the /v1 layers, made once: the
  // front door's routes (src/http/hot-route.ts) run the same layers and step aside for the routers
  // mounted before their own.
  const perKeyLimit = keyRateLimit(config, opts.rateLimitStore);
  const guard = (paths: RegExp, router: express.Router): GuardedRouter => {
    const guarded = onlyFor(paths, router);
    guards.push(guarded.paths);
    return guarded;
  };
  const guards: RegExp[] = [];
  const v1Auth = [webSessionAuth(services, authenticator), authenticate(authenticator), perKeyLimit.middleware];
  const v1Body = jsonBody(config.limits.bodyBytes);
  const demo = guard(/^\/create-demo-user/i, demoUserRoute(services, demoRateLimit(config, opts.rateLimitStore)));
  const mcpPath = /^\/mcp(?:[/?]|$)/i; // as app.use('/mcp') enters it
  const beforeOtlp = [demo.paths, mcpPath];
  const traces = otlpReceiver(config, store, authenticator);
  const otlp = [guard(/^\/otel\//i, traces.router), guard(/^\/otel\//i, otlpLogsReceiver(config, store, authenticator))];
  const proxy = guard(/\/openai(?:[/?]|$)/i, proxyRouter(services, authenticator, perKeyLimit));
  const datasetStreams = guard(/^\/v1\/datasets\//i, datasetStreamRoutes(services));
  const judgeFiles = guard(/^\/v1\/(?:judges|evaluators)\/.*(?:export|import)/i, judgeFileRoutes(services));
  const uploads = guard(/^\/v1\/files/i, fileUploadRoute(services));
  const refineStream = guard(/^\/v1\/judges\/.*\/refine/i, refineStreamRoute(services));
  const hotPaths = runRoutes().map((r) => ({ path: r.path, handler: restHandler(services, r) }));

  const nosniff: express.RequestHandler = (_req, res, next) => {
    // No answer is ever sniffed into something it is not (problem+json, JSON-RPC, static files alike).
    res.setHeader('X-Content-Type-Options', 'nosniff');
    next();
  };
  // What every request passes, then the front door's routes: one layer of the app, not three.
  const first = [nosniff, ...(opts.inFlight ? [opts.inFlight.middleware] : [])];
  const hot = hotRoutes([
    { pretest: RUN_PATH, routes: hotPaths, layers: [v1Auth, v1Body], passBy: guards },
    { pretest: TRACES_URL, routes: [{ path: TRACES_PATH, handler: traces.handler }], layers: [[traces.authenticate]], passBy: beforeOtlp },
  ]);
  app.use(inSeries(...first, hot));
  // The requests the hot routes take skip app.handle and the app router altogether (src/http/front-door.ts).
  frontDoor(app, hot, [...observe, ...first]);

  app.get('/healthz', async (_req, res) => {
    try {
      await store.ping();
      res.json({ status: 'ok', store: { kind: store.kind, status: 'up' }, model: { configured: Boolean(config.model.apiKey) } });
    } catch {
      res.status(503).json({ status: 'degraded', store: { kind: store.kind, status: 'down' }, model: { configured: Boolean(config.model.apiKey) } });
    }
  });

  // Each door's router below is entered only for the paths it answers (src/http/mount.ts): a
  // judged call no longer walks every one of them on its way to /v1 (issue 33).
  app.use(demo);

  // One limiter for REST and MCP alike (perKeyLimit): a key limited to N requests a minute gets N in total.
  app.use('/mcp', mcpRouter(services, authenticator, perKeyLimit)); // the paths mcpPath (above) steps aside for

  // h-traces: the OTLP/HTTP receiver reads its own body (protobuf or JSON, gzip), within its own limits.
  app.use(otlp[0]);
  app.use(otlp[1]); // h-otellogs: GenAI events sent as OTLP log records

  app.get('/v1/openapi.json', (_req, res) => {
    res.json(openApiDocument());
  });

  // h-proxy: the judge proxy's OpenAI-compatible paths answer in OpenAI's protocol, errors included (src/proxy/).
  app.use(proxy);

  // The caller is known from the headers (a key, or the web app's session cookie with its CSRF
  // checks) before a byte of the body is read: an unauthenticated upload is refused unread.
  app.use('/v1', inSeries(...v1Auth));
  // Dataset import and export stream their bodies (JSONL/CSV, any size): before the JSON body parser.
  app.use(datasetStreams);
  app.use(judgeFiles); // room surface: judges as files (YAML or JSON bodies)
  app.use(uploads); // h-attach: attachments (multipart)
  app.use('/v1', inSeries(...v1Body));
  app.use(refineStream); // h-proxy: refine with stream: true (SSE)
  app.use(restRouter(services));

  app.get('/', (_req, res) => res.redirect(302, '/app/'));
  app.use('/app', webRouter(services, authenticator));

  app.use((req, res) => {
    sendProblem(res, noRoute(req));
  });
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    sendProblem(res, err);
  });
  return app;
}
