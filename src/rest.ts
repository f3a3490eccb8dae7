// The /v1 REST facade: a route table. Each route either calls a tool handler (the same one MCP
// calls) or a small domain function for what has no tool (deletes, keys, projects create). The
// OpenAPI document is generated from this same table (openapi.ts).
import express, { type Request, type Response } from 'express';
import { z } from 'zod';
import { deleteEvaluator, evaluatorToWire, listVisibleEvaluatorVersions } from './domain/evaluators.ts';
import { deleteJudge, judgeToWire, listVisibleJudgeVersions } from './domain/judges.ts';
import { createProject } from './domain/projects.ts';
import { createApiKey, listApiKeys, revokeApiKey } from './domain/api-keys.ts';
import { fromZodError, validationError } from './errors.ts';
import { ApiKey, Evaluator, Judge, PageParams, Project, page } from './schemas.ts';
import { invokeTool, type ToolContext, type ToolDefinition } from './tool.ts';
import { tools } from '../tools/index.ts';

export interface RestRoute {
  method: 'get' | 'post' | 'patch' | 'delete';
  /** Express path; `:name` segments are path parameters that become input fields of the same name. */
  path: string;
  summary: string;
  /** Input (path params + query or body) and output schemas, for validation and OpenAPI. */
  input: z.ZodObject;
  output?: z.ZodType;
  status: number;
  /** For routes whose status depends on the outcome: the status of this answer (default `status`). */
  statusFor?: (output: unknown) => number;
  /** The other statuses statusFor may answer with, for the OpenAPI document. */
  otherStatuses?: Array<{ status: number; description: string }>;
  run: (input: Record<string, unknown>, ctx: ToolContext) => Promise<unknown>;
}

const toolRoute = (method: RestRoute['method'], path: string, tool: ToolDefinition, status = 200, summary?: string): RestRoute => ({
  method,
  path,
  summary: summary ?? tool.title,
  input: tool.input,
  output: tool.output,
  status,
  run: (input, ctx) => invokeTool(tool, input, ctx),
});

const parsed = <S extends z.ZodObject>(schema: S, input: unknown): z.infer<S> => {
  const result = schema.safeParse(input);
  if (!result.success) throw fromZodError(result.error);
  return result.data;
};

const ById = (name: string) => z.object({ [name]: z.string().describe(`id of the resource`) });

const CreateProject = z.object({
  name: z.string().min(1).max(200).describe('project name, unique in your organization'),
  description: z.string().max(2000).optional().describe('what the project is for'),
});
export const CreateApiKey = z.object({
  name: z.string().min(1).max(200).describe('a label to recognise the key by'),
  expires_in_days: z.number().int().min(1).max(3650).optional().describe('days until the key expires; default never (demo organizations: the demo key lifetime)'),
});
const ListApiKeys = z.object({ ...PageParams });
const Deleted = z.object({ deleted: z.literal(true), id: z.string() });

/** The one path parameter of a route, e.g. `judge_id` in `/v1/judges/:judge_id/versions/`. */
const paramOf = (path: string) => /:([a-z_]+)/.exec(path)![1];

/** GET every version of a resource, newest first (readable wherever the resource is). */
function versionsRoute(path: string, what: string, item: z.ZodType, list: (ctx: ToolContext, id: string) => Promise<unknown[]>): RestRoute {
  const param = paramOf(path);
  return {
    method: 'get',
    path,
    summary: `Every version of a ${what}, newest first`,
    input: ById(param),
    output: z.object({ results: z.array(item) }),
    status: 200,
    run: async (input, ctx) => ({ results: await list(ctx, parsed(ById(param), input)[param] as string) }),
  };
}

/** DELETE a resource: REST and the web app only, never MCP. */
function deleteRoute(path: string, summary: string, remove: (ctx: ToolContext, id: string) => Promise<void>): RestRoute {
  const param = paramOf(path);
  return {
    method: 'delete',
    path,
    summary,
    input: ById(param),
    output: Deleted,
    status: 200,
    async run(input, ctx) {
      const id = parsed(ById(param), input)[param] as string;
      await remove(ctx, id);
      return { deleted: true, id };
    },
  };
}

export const routes: RestRoute[] = [
  toolRoute('get', '/v1/judges/', tools.listJudges),
  toolRoute('post', '/v1/judges/', tools.createJudge, 201),
  {
    ...toolRoute('post', '/v1/judges/generate/', tools.generateJudge, 201),
    // 201 when a judge is ready; 200 for the outcomes that ask for another call (multiple_stages, missing context).
    statusFor: (output) => (output && typeof output === 'object' && 'error_code' in output ? 200 : 201),
    otherStatuses: [{ status: 200, description: 'generation needs another call: multiple_stages or missing_context_from_system_goal (see error_code)' }],
  },
  versionsRoute('/v1/judges/:judge_id/versions/', 'judge', Judge, async (ctx, id) => {
    return (await listVisibleJudgeVersions(ctx, id)).map(judgeToWire);
  }),
  toolRoute('get', '/v1/judges/:judge_id/', tools.getJudge),
  toolRoute('patch', '/v1/judges/:judge_id/', tools.updateJudge),
  deleteRoute('/v1/judges/:judge_id/', 'Delete a judge (REST and web only; never MCP). Its execution logs stay.', deleteJudge),
  toolRoute('post', '/v1/judges/:judge_id/execute/', tools.runJudge),
  toolRoute('get', '/v1/evaluators/', tools.listEvaluators),
  toolRoute('post', '/v1/evaluators/', tools.createEvaluator, 201),
  versionsRoute('/v1/evaluators/:evaluator_id/versions/', 'evaluator', Evaluator, async (ctx, id) => {
    return (await listVisibleEvaluatorVersions(ctx, id)).map(evaluatorToWire);
  }),
  toolRoute('get', '/v1/evaluators/:evaluator_id/', tools.getEvaluator),
  toolRoute('patch', '/v1/evaluators/:evaluator_id/', tools.updateEvaluator),
  deleteRoute('/v1/evaluators/:evaluator_id/', 'Delete an evaluator that no judge uses (REST and web only; never MCP)', deleteEvaluator),
  toolRoute('post', '/v1/evaluators/:evaluator_id/execute/', tools.runEvaluator),
  toolRoute('get', '/v1/projects/', tools.listProjects),
  {
    method: 'post',
    path: '/v1/projects/',
    summary: 'Create a project',
    input: CreateProject,
    output: Project,
    status: 201,
    run: (input, ctx) => createProject(ctx, parsed(CreateProject, input)),
  },
  toolRoute('get', '/v1/execution-logs/', tools.listExecutionLogs),
  toolRoute('get', '/v1/execution-logs/:log_id/', tools.getExecutionLog),
  {
    method: 'get',
    path: '/v1/api-keys/',
    summary: "List your organization's API keys (never their secrets)",
    input: ListApiKeys,
    output: page(ApiKey),
    status: 200,
    run: (input, ctx) => listApiKeys(ctx, parsed(ListApiKeys, input)),
  },
  {
    method: 'post',
    path: '/v1/api-keys/',
    summary: 'Create an API key; its secret (api_key) is in this answer only',
    input: CreateApiKey,
    output: ApiKey.extend({ api_key: z.string().describe('the secret key: shown once, store it now') }),
    status: 201,
    run: (input, ctx) => createApiKey(ctx, parsed(CreateApiKey, input)),
  },
  {
    method: 'delete',
    path: '/v1/api-keys/:key_id/',
    summary: 'Revoke an API key: it stops working at once',
    input: ById('key_id'),
    output: ApiKey,
    status: 200,
    run: (input, ctx) => revokeApiKey(ctx, parsed(ById('key_id'), input).key_id as string),
  },
];

// Query strings are text; turn them into the types the input schema declares so that one schema
// validates REST and MCP alike. `tags=a,b` and repeated keys both make arrays.
function coerceQuery(schema: z.ZodObject, query: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, raw] of Object.entries(query)) {
    const field = schema.shape[key] as z.ZodType | undefined;
    if (!field) continue;
    const kind = baseKind(field);
    const value = Array.isArray(raw) && kind !== 'array' ? raw[raw.length - 1] : raw;
    if (kind === 'number' && typeof value === 'string' && value.trim() !== '' && !Number.isNaN(Number(value))) out[key] = Number(value);
    else if (kind === 'boolean' && (value === 'true' || value === 'false')) out[key] = value === 'true';
    else if (kind === 'array') out[key] = (Array.isArray(value) ? value : [value]).flatMap((v) => String(v).split(',')).filter(Boolean);
    else out[key] = value;
  }
  return out;
}

function baseKind(field: z.ZodType): string {
  let t: z.ZodType = field;
  while (t instanceof z.ZodOptional || t instanceof z.ZodNullable || t instanceof z.ZodDefault) t = t.unwrap() as z.ZodType;
  if (t instanceof z.ZodNumber) return 'number';
  if (t instanceof z.ZodBoolean) return 'boolean';
  if (t instanceof z.ZodArray) return 'array';
  return 'other';
}

export function requestInput(route: RestRoute, req: Request): Record<string, unknown> {
  let base: Record<string, unknown>;
  if (route.method === 'get' || route.method === 'delete') {
    base = coerceQuery(route.input, req.query as Record<string, unknown>);
  } else {
    const body: unknown = req.body ?? {};
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw validationError('The request body must be a JSON object.', [{ field: '(body)', message: 'expected a JSON object' }]);
    }
    base = { ...(body as Record<string, unknown>) };
  }
  return { ...base, ...req.params };
}

export function restRouter(handle: (route: RestRoute) => (req: Request, res: Response) => Promise<void>): express.Router {
  const router = express.Router({ strict: false });
  for (const route of routes) router[route.method](route.path, handle(route));
  return router;
}
