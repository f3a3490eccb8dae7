// The operational doors in the OpenAPI document (issue 26): /healthz, /readyz, /metrics and the
// document itself, with the bodies they answer (src/server.ts, src/observability/). No key needed
// for any of them; /metrics takes its own bearer token (TRIBUNAL_METRICS_TOKEN) and is absent
// (404) without one.
type Problem = (description: string) => unknown;

const storeState = (statuses: string[]) => ({
  type: 'object',
  properties: {
    kind: { type: 'string', enum: ['json', 'postgres'], description: 'the store this instance uses' },
    status: { type: 'string', enum: statuses, description: 'whether the store answered a ping' },
  },
  required: ['kind'],
});

const json = (schema: unknown, description: string) => ({ description, content: { 'application/json': { schema } } });

const health = {
  type: 'object',
  properties: {
    status: { type: 'string', enum: ['ok', 'degraded'], description: 'ok: up and the store answers; degraded: the store does not' },
    store: storeState(['up', 'down']),
    model: {
      type: 'object',
      properties: { configured: { type: 'boolean', description: 'whether the server has its own judge model (ANTHROPIC_API_KEY)' } },
      required: ['configured'],
    },
  },
  required: ['status', 'store', 'model'],
};

const readiness = {
  type: 'object',
  properties: {
    status: { type: 'string', enum: ['ready', 'unready', 'shutting_down'], description: 'ready: send traffic; unready: the store is down; shutting_down: draining' },
    store: {
      ...storeState(['up', 'down']),
      properties: { ...storeState(['up', 'down']).properties, migrations: { type: 'string', enum: ['applied'], description: 'present when ready' } },
    },
  },
  required: ['status', 'store'],
};

export function operationalPaths(problem: Problem): Record<string, unknown> {
  return {
    '/healthz': {
      get: {
        summary: 'Liveness and store reachability (no auth)',
        operationId: 'healthz',
        security: [],
        responses: { '200': json(health, 'up, the store answers'), '503': json(health, 'the store is down (status degraded)') },
      },
    },
    '/readyz': {
      get: {
        summary: 'Readiness for a load balancer: 503 while the store is down or the instance shuts down (no auth)',
        operationId: 'readyz',
        security: [],
        responses: { '200': json(readiness, 'ready'), '503': json(readiness, 'unready or shutting_down') },
      },
    },
    '/metrics': {
      get: {
        summary: 'Prometheus metrics (Authorization: Bearer <TRIBUNAL_METRICS_TOKEN>; 404 when the server has no token)',
        operationId: 'metrics',
        security: [{ MetricsToken: [] }],
        responses: {
          '200': { description: 'the Prometheus text exposition format', content: { 'text/plain': { schema: { type: 'string' } } } },
          '401': problem('not_authenticated: the bearer token is missing or not TRIBUNAL_METRICS_TOKEN'),
          '404': { description: 'metrics are off: TRIBUNAL_METRICS_TOKEN is not set' },
        },
      },
    },
    '/v1/openapi.json': {
      get: {
        summary: 'This document: OpenAPI 3.1 (no auth)',
        operationId: 'openapi',
        security: [],
        responses: {
          '200': json(
            {
              type: 'object',
              properties: { openapi: { type: 'string', const: '3.1.0' }, info: { type: 'object' }, paths: { type: 'object' }, components: { type: 'object' } },
              required: ['openapi', 'info', 'paths'],
            },
            'the OpenAPI document',
          ),
        },
      },
    },
  };
}

/** The security scheme /metrics names. */
export const METRICS_SECURITY_SCHEME = { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <TRIBUNAL_METRICS_TOKEN> (a setting of the server, not an API key)' };
