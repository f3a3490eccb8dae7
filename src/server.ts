// createServer(services) -> an express app. No globals: tests build as many as they like.
// A request's way: HTTP -> body limits -> auth -> rate limit -> (REST route | MCP) -> tool handler.
import express, { type NextFunction, type Request, type Response } from 'express';
import { rateLimit, type Store as RateLimitStore } from 'express-rate-limit';
import { Authenticator, type Caller } from './auth.ts';
import { createOrganization } from './domain/orgs.ts';
import { asTribunalError, TribunalError } from './errors.ts';
import { mcpRouter } from './mcp.ts';
import { observabilityRouter } from './observability/http.ts';
import { quietObservability, type Observability } from './observability/index.ts';
import { openApiDocument } from './openapi.ts';
import { requestInput, restRouter, type RestRoute } from './rest.ts';
import { StoreUnavailableError } from './store/types.ts';
import type { Services } from './tool.ts';
import { webRouter, webSessionAuth } from './web/router.ts';

export interface ServerOptions {
  /** Shared rate-limit counters (Redis) for several instances; default in memory, per instance. */
  rateLimitStore?: () => RateLimitStore;
  /** Extra routers mounted before the 404 handler (the web app). */
  extraRouters?: Array<{ path: string; router: express.Router }>;
  /** Logs, metrics, traces, readiness (src/observability); default: no log output. false: none of it (the overhead bench). */
  observability?: Observability | false;
}

export function sendProblem(res: Response, err: unknown): void {
  const error = err instanceof StoreUnavailableError ? new TribunalError('store_unavailable', 503, 'The store is unreachable; try again shortly.') : asTribunalError(err);
  if (error.code === 'internal_error') console.error('[tribunal] unexpected error:', err);
  if (res.headersSent) return;
  res.locals.problemCode = error.code; // for the request log line and the store-error metric
  res.status(error.status);
  for (const [k, v] of Object.entries(error.headers ?? {})) res.setHeader(k, v);
  res.type('application/problem+json').send(JSON.stringify({ ...error.toProblem(), request_id: res.locals.requestId }));
}

/** Body-parser failures become problems that say what to fix. */
function bodyErrors(limitBytes: number) {
  return (err: unknown, _req: Request, res: Response, next: NextFunction) => {
    const type = (err as { type?: string }).type;
    if (type === 'entity.too.large') {
      return sendProblem(res, new TribunalError('payload_too_large', 413, `The request body is over the limit of ${limitBytes} bytes (TRIBUNAL_MAX_BODY).`));
    }
    if (type === 'entity.parse.failed') {
      return sendProblem(res, new TribunalError('validation_error', 400, `The request body is not valid JSON: ${(err as Error).message}`, { errors: [{ field: '(body)', message: 'invalid JSON' }] }));
    }
    if (type === 'encoding.unsupported' || type === 'charset.unsupported') {
      return sendProblem(res, new TribunalError('validation_error', 415, 'Send the body as UTF-8 JSON (Content-Type: application/json).'));
    }
    if (type === 'request.aborted') return;
    // Any other client-side body fault (a broken gzip stream, a size mismatch...) is the client's to fix.
    const status = (err as { status?: number }).status;
    if (status !== undefined && status >= 400 && status < 500) {
      return sendProblem(res, new TribunalError('validation_error', 400, `The request body could not be read: ${(err as Error).message}`, { errors: [{ field: '(body)', message: 'unreadable body' }] }));
    }
    next(err);
  };
}

export function jsonBody(limitBytes: number): express.RequestHandler[] {
  const parse = express.json({ limit: limitBytes, strict: false });
  const requireJson: express.RequestHandler = (req, res, next) => {
    const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
    if (hasBody && ['POST', 'PATCH', 'PUT'].includes(req.method) && !req.is('application/json')) {
      return sendProblem(res, new TribunalError('validation_error', 415, 'Send the body as JSON with Content-Type: application/json.'));
    }
    next();
  };
  return [requireJson, parse, bodyErrors(limitBytes) as unknown as express.RequestHandler];
}

export function authenticate(authenticator: Authenticator): express.RequestHandler {
  return (req, res, next) => {
    if (res.locals.caller) return next(); // already authenticated by the web session cookie
    authenticator.authenticate(req.headers.authorization).then(
      (caller) => {
        res.locals.caller = caller;
        next();
      },
      (err) => sendProblem(res, err),
    );
  };
}

function rateLimited(windowMs: number, detail: string) {
  return (_req: Request, res: Response) => {
    const resetTime = (_req as Request & { rateLimit?: { resetTime?: Date } }).rateLimit?.resetTime;
    const retryAfter = Math.max(1, Math.ceil(((resetTime?.getTime() ?? Date.now() + windowMs) - Date.now()) / 1000));
    sendProblem(res, new TribunalError('rate_limited', 429, detail, { headers: { 'Retry-After': String(retryAfter) } }));
  };
}

/** Rate limit per API key (after auth). Shared through Redis when configured. */
export function keyRateLimit(services: Services, opts: ServerOptions): express.RequestHandler {
  const { limit, windowMs } = services.config.rateLimit;
  return rateLimit({
    windowMs,
    limit,
    standardHeaders: 'draft-7',
    legacyHeaders: false,
    store: opts.rateLimitStore?.(),
    passOnStoreError: true, // a Redis outage must not take the API down: fail open
    keyGenerator: (_req, res) => `key:${(res.locals.caller as Caller).key.id}`,
    handler: rateLimited(windowMs, `This API key is limited to ${limit} requests per ${windowMs / 1000} s (TRIBUNAL_RATE_LIMIT); wait and retry.`),
    validate: { keyGeneratorIpFallback: false },
  });
}

export function createServer(services: Services, opts: ServerOptions = {}): express.Express {
  const { config, store } = services;
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', config.trustProxy === 'true' ? true : config.trustProxy === 'false' ? false : config.trustProxy);
  app.set('json spaces', 0);
  const authenticator = new Authenticator(store);
  if (opts.observability !== false) app.use(observabilityRouter(opts.observability ?? quietObservability(config), store));

  app.get('/healthz', async (_req, res) => {
    try {
      await store.ping();
      res.json({ status: 'ok', store: { kind: store.kind, status: 'up' }, model: { configured: Boolean(config.model.apiKey) } });
    } catch {
      res.status(503).json({ status: 'degraded', store: { kind: store.kind, status: 'down' }, model: { configured: Boolean(config.model.apiKey) } });
    }
  });

  const demoLimiter = rateLimit({
    windowMs: config.demoRateLimit.windowMs,
    limit: config.demoRateLimit.limit,
    standardHeaders: 'draft-7',
    legacyHeaders: false,
    store: opts.rateLimitStore?.(),
    passOnStoreError: true,
    handler: rateLimited(config.demoRateLimit.windowMs, `Too many demo users from your address (limit ${config.demoRateLimit.limit} per ${config.demoRateLimit.windowMs / 60000} min); wait and retry.`),
  });
  app.post('/create-demo-user/', demoLimiter, async (_req, res) => {
    try {
      const made = await createOrganization(store, { name: 'Demo organization', isDemo: true, keyTtlMs: config.demoKeyTtlMs });
      res.status(201).json({ api_key: made.api_key, expires_at: made.expires_at, organization_id: made.organization.id, project_id: made.project_id });
    } catch (err) {
      sendProblem(res, err);
    }
  });

  // One limiter for REST and MCP alike: a key limited to N requests a minute gets N in total.
  const perKeyLimit = keyRateLimit(services, opts);
  app.use('/mcp', mcpRouter(services, authenticator, { rateLimit: perKeyLimit }));

  app.get('/v1/openapi.json', (_req, res) => {
    res.json(openApiDocument());
  });

  const handle = (route: RestRoute) => async (req: Request, res: Response) => {
    try {
      const caller = res.locals.caller as Caller;
      const output = await route.run(requestInput(route, req), { ...services, caller });
      res.status(route.statusFor?.(output) ?? route.status).json(output);
    } catch (err) {
      sendProblem(res, err);
    }
  };
  // The web app's session cookie counts only without an Authorization header, with CSRF checks (src/web/session.ts).
  app.use('/v1', jsonBody(config.limits.bodyBytes), webSessionAuth(services, authenticator), authenticate(authenticator), perKeyLimit);
  app.use(restRouter(handle));

  app.get('/', (_req, res) => res.redirect(302, '/app/'));
  app.use('/app', webRouter(services, authenticator));
  for (const extra of opts.extraRouters ?? []) app.use(extra.path, extra.router);

  app.use((req, res) => {
    sendProblem(res, new TribunalError('not_found', 404, `No route ${req.method} ${req.path}. The API lives under /v1/ (see /v1/openapi.json) and MCP at /mcp.`));
  });
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    sendProblem(res, err);
  });
  return app;
}
