// GET /v1/openapi.json: OpenAPI 3.1, generated from the route table and the zod schemas the routes
// validate with, so the document cannot drift from the code.
import { METRICS_SECURITY_SCHEME, operationalPaths } from './openapi-ops.ts';
import { z } from 'zod';
import { datasetStreamOpenApi } from './http/dataset-stream.ts';
import { judgeFileOpenApi } from './surface/routes.ts';
import { fileUploadOpenApi } from './files/routes.ts';
import { routes, type RestRoute } from './rest.ts';
import { strictInput } from './unknown-fields.ts';
import { VERSION } from './version.ts';

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

type Problem = (description: string) => unknown;

/**
 * The error answers each operation can give, by what it does: every call can be refused (400), be
 * unauthenticated (401), rate limited (429) or meet an outage (500, 503); a body can be too large
 * (413) or not JSON (415); edits meet others' resources (403) and conflicts (409); runs and
 * generation meet the judge model (502/503/504). Kept here beside the route table they read.
 */
function errorResponses(route: RestRoute, problem: Problem): Record<string, unknown> {
  const hasBody = route.method === 'post' || route.method === 'patch';
  const runsModel = /\/(execute|generate)\/$/.test(route.path);
  const edits = route.method === 'patch' || route.method === 'delete' || route.path.endsWith('/generate/');
  const creates = route.method === 'post' && !runsModel;
  const keys = route.path.startsWith('/v1/api-keys/'); // a key's own operations meet neither others' keys nor conflicts
  const out: Record<string, unknown> = {
    '400': problem('invalid input (validation_error: each bad or unknown field named; missing_field: an evaluator needs contexts or expected_output)'),
    '401': problem('missing, malformed, unknown, revoked or expired key (not_authenticated)'),
  };
  if (edits && !keys) out['403'] = problem("permission_denied: the resource is a preset or another organization's (public to read and run, not to edit)");
  out['404'] = problem('not_found: not found, or not visible to your organization');
  if ((edits || creates || runsModel) && !keys) {
    out['409'] = problem(
      runsModel
        ? 'conflict: the judge is a generation draft waiting for answers, or refers to an evaluator that no longer exists'
        : route.path.endsWith('/cancel/') // issue 26: a run that has ended
          ? 'conflict: the run has already ended (completed, failed or cancelled); only a queued or running run can be cancelled'
          : 'conflict: the name is taken in your organization, the resource is in use, or it was edited concurrently (retry)',
    );
  }
  if (hasBody) {
    out['413'] = problem('payload_too_large: the body is over the limit (TRIBUNAL_MAX_BODY, default 1 MiB)');
    out['415'] = problem('validation_error: the body is not UTF-8 JSON sent with Content-Type: application/json');
  }
  out['429'] = problem('rate_limited: too many requests for this key; see Retry-After');
  out['500'] = problem('internal_error: a bug; details are logged on the server, never sent');
  if (runsModel) {
    out['502'] = problem('model_unavailable: the judge model failed after retries');
    out['503'] = problem('model_unavailable: no judge model configured, or the model is overloaded or rate limited; or store_unavailable');
    out['504'] = problem('model_unavailable: the judge model timed out');
  } else {
    out['503'] = problem('store_unavailable: the store is unreachable; retry shortly');
  }
  return out;
}

/**
 * Input properties that a REST path makes moot: with `{judge_id}` in the path, `judge_name` in the
 * body or query would be ignored, so it is not offered.
 */
function mootProperties(pathParams: string[]): string[] {
  return [...pathParams, ...pathParams.filter((p) => p.endsWith('_id')).map((p) => p.replace(/_id$/, '_name'))];
}

export function openApiDocument(): unknown {
  if (cached) return cached;
  const paths: Record<string, Record<string, unknown>> = {};
  const problem = (description: string) => ({ description, content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } });
  for (const route of routes) {
    const path = route.path.replace(/:([a-z_]+)/g, '{$1}');
    const pathParams = [...route.path.matchAll(/:([a-z_]+)/g)].map((m) => m[1]);
    // The schema the route validates with: strict, so unknown fields show as additionalProperties: false.
    const { required: inputRequired = [], ...input } = jsonSchema(strictInput(route.input), 'input') as { properties?: Record<string, unknown>; required?: string[] };
    const props = { ...(input.properties ?? {}) };
    const moot = mootProperties(pathParams);
    for (const p of moot) delete props[p];
    const parameters: unknown[] = pathParams.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } }));
    const op: Record<string, unknown> = {
      summary: route.summary,
      operationId: `${route.method}_${route.path.replace(/[/:]+/g, '_').replace(/^_|_$/g, '')}`,
      security: [{ ApiKey: [] }, { Bearer: [] }],
      parameters,
      responses: {
        [String(route.status)]: { description: 'OK', content: { 'application/json': { schema: route.output ? jsonSchema(route.output, 'output') : {} } } },
        ...Object.fromEntries(
          (route.otherStatuses ?? []).map((o) => [
            String(o.status),
            { description: o.description, content: { 'application/json': { schema: route.output ? jsonSchema(route.output, 'output') : {} } } },
          ]),
        ),
        ...errorResponses(route, problem),
      },
    };
    if (route.method === 'get' || route.method === 'delete') {
      for (const [name, schema] of Object.entries(props)) {
        parameters.push({ name, in: 'query', required: false, schema, description: (schema as { description?: string }).description });
      }
    } else {
      const required = inputRequired.filter((r) => !moot.includes(r));
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
        '500': problem('internal_error'),
        '503': problem('store_unavailable: the store is unreachable; retry shortly'),
      },
    },
  };
  Object.assign(paths, datasetStreamOpenApi(problem));
  Object.assign(paths, operationalPaths(problem)); // issue 26: /healthz, /readyz, /metrics, /v1/openapi.json
  Object.assign(paths, judgeFileOpenApi(problem)); // room surface
  // h-attach: the multipart upload beside the route table's GET of the same path.
  for (const [path, methods] of Object.entries(fileUploadOpenApi(problem))) paths[path] = { ...paths[path], ...(methods as Record<string, unknown>) };
  cached = {
    openapi: '3.1.0',
    info: { title: 'Tribunal', version: VERSION, description: 'Self-hostable, MCP-first LLM-as-a-judge evaluation server. MCP endpoint: /mcp.' },
    servers: [{ url: '/' }],
    components: {
      securitySchemes: {
        ApiKey: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'Authorization: Api-Key <key>' },
        Bearer: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <key>' },
        MetricsToken: METRICS_SECURITY_SCHEME,
      },
      schemas: { Problem },
    },
    paths,
  };
  return cached;
}
