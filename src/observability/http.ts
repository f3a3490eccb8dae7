// The HTTP side of observability: a request id and one log line, metric and span per request,
// and the /readyz and /metrics routes. Mounted first in createServer, as one plain middleware: an
// express Router entered by every request cost about as much as the request's log line (issue 33),
// so the router of the two routes is entered only for their paths.
import { randomUUID, timingSafeEqual, createHash } from 'node:crypto';
import express, { type Request, type RequestHandler, type Response } from 'express';
import { onlyFor } from '../http/mount.ts';
import type { Store } from '../store/types.ts';
import type { Observability } from './index.ts';
import { readyzHandler } from './readiness.ts';
import { requestContext } from './request-context.ts';
import { requestLog } from './request-line.ts';
import { registerTraceMetrics } from '../traces/metrics.ts'; // h-traces
import { watchBudgets } from './budget-metrics.ts';

/** A caller's id is echoed back and logged, so only a short, plain one is taken; else we make one. */
const ACCEPTED_REQUEST_ID = /^[A-Za-z0-9._:@-]{1,128}$/;

function requestIdOf(req: Request): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && ACCEPTED_REQUEST_ID.test(given) ? given : randomUUID();
}

/** The route pattern, never the raw path: ids in paths would blow up the metric labels. */
function routeOf(req: Request, res: Response): string {
  const route = (req as Request & { route?: { path?: unknown } }).route;
  if (route?.path !== undefined) return `${req.baseUrl}${String(route.path)}`;
  return res.statusCode === 404 ? '(unmatched)' : req.baseUrl || '(other)';
}

export function observabilityRouter(obs: Observability, store: Store): RequestHandler {
  const router = express.Router();
  watchBudgets(obs.metrics.registry, store); // room h-cost: spend per org in /metrics
  router.get('/readyz', readyzHandler(store, obs.readiness));
  router.get('/metrics', metricsHandler(obs, obs.metricsToken));
  registerTraceMetrics(obs.metrics.registry, store); // h-traces: spans received, rule status
  // Wider than the routes (any case, a trailing slash, a query): the router still decides.
  const ownRoutes = onlyFor(/^\/(?:readyz|metrics)/i, router);
  const logRequest = requestLog(obs.logger);
  return (req, res, next) => {
    const started = performance.now();
    const requestId = requestIdOf(req);
    res.setHeader('X-Request-Id', requestId);
    res.locals.requestId = requestId;
    const span = obs.tracing.startRequestSpan(req.method);
    // 'close' comes once per response: `on`, without the wrapper `once` allocates per request.
    res.on('close', () => {
      const route = routeOf(req, res);
      const status = res.writableFinished ? res.statusCode : 499; // 499: the client went away first
      const latencyMs = performance.now() - started;
      const orgId = (res.locals.caller as { org?: { id?: string } } | undefined)?.org?.id;
      obs.metrics.request(req.method, route, status, latencyMs / 1000, res.locals.problemCode as string | undefined);
      if (span) obs.tracing.endRequestSpan(span, req.method, route, status, orgId);
      // issue 26: not_available (a setting the operator has not made) is a warning, not a fault.
      logRequest(status >= 500 ? (res.locals.problemCode === 'not_available' ? 'warn' : 'error') : 'info', {
        req_id: requestId,
        method: req.method,
        route,
        status,
        latency_ms: Math.round(latencyMs * 10) / 10,
        org_id: orgId,
        code: res.locals.problemCode,
        trace_id: span?.spanContext().traceId,
      });
    });
    // AsyncLocalStorage makes every promise of the process about 4x dearer on Node 20 (measured:
    // 50 awaits 4.2 -> 16.3 us), a fifth of a judge run's CPU: entered only when tracing needs it.
    if (span) requestContext.run({ requestId, span }, ownRoutes, req, res, next);
    else ownRoutes(req, res, next);
  };
}

function metricsHandler(obs: Observability, token: string | undefined): express.RequestHandler {
  const expected = token ? createHash('sha256').update(`Bearer ${token}`).digest() : undefined;
  return async (req, res, next) => {
    // Without a token the path does not exist: metrics are never open to the internet by accident.
    if (!expected) return next();
    const given = createHash('sha256')
      .update(req.headers.authorization ?? '')
      .digest();
    if (!timingSafeEqual(given, expected)) {
      res.status(401).setHeader('WWW-Authenticate', 'Bearer realm="tribunal-metrics"');
      res.type('application/problem+json').send(
        JSON.stringify({
          type: 'https://tribunal.dev/problems/not-authenticated',
          title: 'Not authenticated',
          status: 401,
          detail: 'Send Authorization: Bearer <TRIBUNAL_METRICS_TOKEN> to read /metrics.',
          code: 'not_authenticated',
          request_id: res.locals.requestId,
        }),
      );
      return;
    }
    res.setHeader('Cache-Control', 'no-store');
    res.type(obs.metrics.registry.contentType).send(await obs.metrics.registry.metrics());
  };
}
