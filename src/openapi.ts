// GET /v1/openapi.json: OpenAPI 3.1, generated from the route table and the zod schemas the routes
// validate with, so the document cannot drift from the code.
import { z } from 'zod';
import { routes } from './rest.ts';

const Problem = {
  type: 'object',
  description: 'application/problem+json',
  properties: {
    type: { type: 'string' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string', description: 'what went wrong and what to do about it' },
    code: { type: 'string', description: 'machine-readable error code' },
    errors: { type: 'array', items: { type: 'object', properties: { field: { type: 'string' }, message: { type: 'string' } } } },
    request_id: { type: 'string', description: 'the X-Request-Id of this request, as in the server logs' },
  },
  required: ['type', 'title', 'status', 'detail', 'code'],
};

const jsonSchema = (schema: z.ZodType, io: 'input' | 'output') => {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
};

let cached: unknown;

export function openApiDocument(): unknown {
  if (cached) return cached;
  const paths: Record<string, Record<string, unknown>> = {};
  const problem = (description: string) => ({ description, content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } });
  for (const route of routes) {
    const path = route.path.replace(/:([a-z_]+)/g, '{$1}');
    const pathParams = [...route.path.matchAll(/:([a-z_]+)/g)].map((m) => m[1]);
    const input = jsonSchema(route.input, 'input') as { properties?: Record<string, unknown>; required?: string[] };
    const props = { ...(input.properties ?? {}) };
    for (const p of pathParams) delete props[p];
    const parameters: unknown[] = pathParams.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } }));
    const op: Record<string, unknown> = {
      summary: route.summary,
      operationId: `${route.method}_${route.path.replace(/[/:]+/g, '_').replace(/^_|_$/g, '')}`,
      security: [{ ApiKey: [] }, { Bearer: [] }],
      parameters,
      responses: {
        [String(route.status)]: { description: 'OK', content: { 'application/json': { schema: route.output ? jsonSchema(route.output, 'output') : {} } } },
        ...Object.fromEntries(
          (route.otherStatuses ?? []).map((o) => [String(o.status), { description: o.description, content: { 'application/json': { schema: route.output ? jsonSchema(route.output, 'output') : {} } } }]),
        ),
        '400': problem('invalid input (validation_error, missing_field)'),
        '401': problem('missing, malformed, unknown, revoked or expired key'),
        '404': problem('not found, or not visible to your organization'),
        '429': problem('rate limited; see Retry-After'),
      },
    };
    if (route.method === 'get' || route.method === 'delete') {
      for (const [name, schema] of Object.entries(props)) {
        parameters.push({ name, in: 'query', required: false, schema, description: (schema as { description?: string }).description });
      }
    } else {
      const required = (input.required ?? []).filter((r) => !pathParams.includes(r));
      op.requestBody = {
        required: true,
        content: { 'application/json': { schema: { ...input, properties: props, ...(required.length ? { required } : {}) } } },
      };
    }
    (paths[path] ??= {})[route.method] = op;
  }
  paths['/create-demo-user/'] = {
    post: {
      summary: 'Create a demo organization with its default project and a temporary key (no auth; rate limited per address)',
      operationId: 'create_demo_user',
      security: [],
      responses: {
        '201': {
          description: 'Created',
          content: {
            'application/json': {
              schema: {
                type: 'object',
                properties: {
                  api_key: { type: 'string' },
                  expires_at: { type: 'string' },
                  organization_id: { type: 'string' },
                  project_id: { type: 'string' },
                },
                required: ['api_key', 'expires_at', 'organization_id', 'project_id'],
              },
            },
          },
        },
        '429': problem('too many demo users from this address'),
      },
    },
  };
  paths['/healthz'] = { get: { summary: 'Liveness and store reachability (no auth)', operationId: 'healthz', security: [], responses: { '200': { description: 'up' }, '503': { description: 'store down' } } } };
  cached = {
    openapi: '3.1.0',
    info: { title: 'Tribunal', version: '0.1.0', description: 'Self-hostable, MCP-first LLM-as-a-judge evaluation server. MCP endpoint: /mcp.' },
    servers: [{ url: '/' }],
    components: {
      securitySchemes: {
        ApiKey: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'Authorization: Api-Key <key>' },
        Bearer: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <key>' },
      },
      schemas: { Problem },
    },
    paths,
  };
  return cached;
}
