// The /v1 REST facade: a route table. Every route calls one definition through invokeTool: one of the
// 14 tools (the same handler MCP calls) or a REST-only operation (src/operations/: deletes, versions,
// projects create, API keys, the demo user), so validation and size limits apply to all alike. The
// OpenAPI document is generated from this same table (openapi.ts).
import express, { type Request, type Response } from 'express';
import { z } from 'zod';
import type { Caller } from './auth.ts';
import { validationError } from './errors.ts';
import { sendProblem } from './http/problem.ts';
import { restOnlyOperations as ops } from './operations/index.ts';
import { CostEstimateSchema } from './budgets/dry-run.ts';
import { invokeTool, type Services, type ToolDefinition } from './tool.ts';
import { tools } from '../tools/index.ts';
import { traceRoutes } from './traces/routes.ts'; // h-traces
import { resourceOperations, type ResourceOperations } from './operations/resource-operations.ts';
import * as review from './review/ops.ts'; // h-review: review queues (SPEC section 17)

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
  /** POST routes: input fields read from the query string (e.g. `name` of execute/by-name/). */
  queryFields?: string[];
  /** The definition this route calls. */
  operation: ToolDefinition<z.ZodObject, z.ZodObject, any>;
}

const route = (method: RestRoute['method'], path: string, operation: RestRoute['operation'], status = 200): RestRoute => ({
  method,
  path,
  summary: operation.title,
  input: operation.input,
  output: operation.output,
  status,
  operation,
});

/**
 * A resource's five routes, in the table's order: list and create on the collection, read, update and
 * delete on one member named by the `id` path parameter.
 */
const resource = (collection: string, id: string, o: ResourceOperations<RestRoute['operation']>): RestRoute[] => [
  route('get', collection, o.list),
  route('post', collection, o.create, 201),
  route('get', `${collection}:${id}/`, o.get),
  route('patch', `${collection}:${id}/`, o.update),
  route('delete', `${collection}:${id}/`, o.remove),
];

/**
 * The routes under one judge or one evaluator, in the table's order. The two kinds have the same
 * member routes, so they are written once; each kind's operations carry its name (listJudgeVersions,
 * getJudge, updateJudge, deleteJudge, runJudge, compareWithJudge; likewise for Evaluator).
 */
const versionedMemberRoutes = (kind: 'Judge' | 'Evaluator', member: string): RestRoute[] => [
  route('get', `${member}versions/`, ops[`list${kind}Versions`]),
  route('get', member, tools[`get${kind}`]),
  route('patch', member, tools[`update${kind}`]),
  route('delete', member, ops[`delete${kind}`]),
  route('post', `${member}execute/`, tools[`run${kind}`]),
  route('post', `${member}compare/`, ops[`compareWith${kind}`]),
];

/** A run that answers 202 when started, or 200 with the estimate when dry_run is given (room h-cost). */
const orDryRun = (started: RestRoute): RestRoute => ({
  ...started,
  output: started.output!.or(CostEstimateSchema),
  statusFor: (output) => (output && typeof output === 'object' && 'dry_run' in output ? 200 : started.status),
  otherStatuses: [{ status: 200, description: 'dry_run: the estimated calls, tokens and cost; nothing was run' }],
});

export const routes: RestRoute[] = [
  route('get', '/v1/judges/', tools.listJudges),
  route('post', '/v1/judges/', tools.createJudge, 201),
  {
    ...route('post', '/v1/judges/generate/', tools.generateJudge, 201),
    // 201 when a judge is ready; 200 for the outcomes that ask for another call (multiple_stages, missing context).
    statusFor: (output) => (output && typeof output === 'object' && 'error_code' in output ? 200 : 201),
    otherStatuses: [{ status: 200, description: 'generation needs another call: multiple_stages or missing_context_from_system_goal (see error_code)' }],
  },
  // Batch runs: before /v1/judges/:judge_id/, which would take `batch-executions` as a judge id
  // (and .../compare/ before .../:batch_execution_id/).
  route('get', '/v1/judges/batch-executions/', ops.listBatchExecutions),
  route('get', '/v1/judges/batch-executions/compare/', ops.compareBatches),
  route('get', '/v1/judges/batch-executions/:batch_execution_id/', ops.getBatchExecution),
  route('get', '/v1/judges/batch-executions/:batch_execution_id/results/', ops.listBatchResults),
  route('post', '/v1/judges/batch-executions/:batch_execution_id/cancel/', ops.cancelBatchExecution),
  orDryRun(route('post', '/v1/judges/:judge_id/batch-execute/', ops.batchExecute, 202)),
  ...versionedMemberRoutes('Judge', '/v1/judges/:judge_id/'),
  route('post', '/v1/judges/:judge_id/refine/', ops.refine), // h-proxy
  route('get', '/v1/evaluators/', tools.listEvaluators),
  route('post', '/v1/evaluators/', tools.createEvaluator, 201),
  route('post', '/v1/evaluators/try/', ops.tryEvaluator), // h-checks: before :evaluator_id
  ...versionedMemberRoutes('Evaluator', '/v1/evaluators/:evaluator_id/'),
  route('get', '/v1/projects/', tools.listProjects),
  route('post', '/v1/projects/', ops.createProject, 201),
  route('get', '/v1/execution-logs/', tools.listExecutionLogs),
  // Before :log_id, which would otherwise take these names as log ids.
  route('get', '/v1/execution-logs/session-ids/', ops.listSessionIds),
  route('get', '/v1/execution-logs/user-ids/', ops.listUserIds),
  route('get', '/v1/execution-logs/:log_id/', tools.getExecutionLog),
  route('get', '/v1/api-keys/', ops.listApiKeys),
  route('post', '/v1/api-keys/', ops.createApiKey, 201),
  route('delete', '/v1/api-keys/:key_id/', ops.revokeApiKey),
  ...resource('/v1/datasets/', 'dataset_id', resourceOperations(ops, 'Dataset')),
  route('get', '/v1/datasets/:dataset_id/items/', ops.listDatasetItems),
  route('post', '/v1/datasets/:dataset_id/items/', ops.addDatasetItems, 201),
  // Before :item_id, which would otherwise take the name as an item id.
  route('post', '/v1/datasets/:dataset_id/items/from-annotations/', ops.itemsFromAnnotations, 201),
  route('get', '/v1/datasets/:dataset_id/items/:item_id/', ops.getDatasetItem),
  route('patch', '/v1/datasets/:dataset_id/items/:item_id/', ops.updateDatasetItem),
  route('delete', '/v1/datasets/:dataset_id/items/:item_id/', ops.deleteDatasetItem),
  ...resource('/v1/models/', 'model_id', resourceOperations(ops, 'Model')),
  route('post', '/v1/models/:model_id/verify/', ops.verifyModel),
  route('get', '/v1/model-registry/', ops.getModelRegistry), // issue 26 item 12: can this server keep model API keys
  // Budgets (room h-cost)
  route('get', '/v1/budgets/', ops.getBudgets),
  route('post', '/v1/budgets/evaluators/:evaluator_id/', ops.setEvaluatorBudget),
  ...resource('/v1/annotations/', 'annotation_id', resourceOperations(ops, 'Annotation')),
  route('get', '/v1/calibration-runs/', ops.listCalibrationRuns),
  orDryRun(route('post', '/v1/calibration-runs/', ops.startCalibrationRun, 202)),
  route('get', '/v1/calibration-runs/:calibration_run_id/', ops.getCalibrationRun),
  route('get', '/v1/calibration-runs/:calibration_run_id/items/', ops.listCalibrationItems),
  route('post', '/v1/calibration-runs/:calibration_run_id/demonstrations/', ops.calibrationDemonstrations),
  // room surface (issue 30): duplicate, run by name, claim
  route('post', '/v1/judges/:judge_id/duplicate/', ops.duplicateJudge, 201),
  route('post', '/v1/evaluators/:evaluator_id/duplicate/', ops.duplicateEvaluator, 201),
  { ...route('post', '/v1/judges/execute/by-name/', ops.executeJudgeByName), queryFields: ['name'] },
  route('post', '/v1/judges/claim/', ops.claimJudge),
  route('post', '/v1/judges/:judge_id/synthetic-data/', ops.startSyntheticData, 202),
  route('get', '/v1/judges/:judge_id/synthetic-data/', ops.getSyntheticData),
  route('post', '/v1/judges/:judge_id/synthetic-data/dataset/', ops.saveSyntheticDataset, 201),
  // h-attach: attachments (the multipart upload, POST /v1/files/, is src/files/routes.ts)
  route('get', '/v1/files/', ops.listFiles),
  route('get', '/v1/files/:file_id/', ops.getFile),
  route('delete', '/v1/files/:file_id/', ops.deleteFile),
  // h-traces: received traces and evaluation rules (src/traces/routes.ts).
  ...traceRoutes(route, resource),
  // h-review: review queues (SPEC section 17, src/review/)
  ...resource('/v1/review-queues/', 'queue_id', resourceOperations(review, 'ReviewQueue')),
  route('get', '/v1/review-queues/:queue_id/items/', review.listReviewItems),
  route('post', '/v1/review-queues/:queue_id/items/', review.addReviewItems, 201),
  {
    ...route('post', '/v1/review-queues/:queue_id/next/', review.nextReviewItem),
    statusFor: (output) => (output && typeof output === 'object' && 'item_id' in output ? 200 : 204),
    otherStatuses: [{ status: 204, description: 'no item is left for you in this queue' }],
  },
  route('post', '/v1/review-queues/:queue_id/items/:item_id/annotations/', review.submitReviewItem, 201),
  route('post', '/v1/review-queues/:queue_id/items/:item_id/skip/', review.skipReviewItem),
  route('post', '/v1/review-queues/:queue_id/items/:item_id/adjudicate/', review.adjudicateReviewItem),
  route('get', '/v1/review-queues/:queue_id/disagreements/', review.listReviewDisagreements),
  route('post', '/v1/review-queues/:queue_id/calibrate/', review.calibrateFromReviewQueue, 202),
];

// Query strings are text; turn them into the types the input schema declares so that one schema
// validates REST and MCP alike. `tags=a,b` and repeated keys both make arrays.
function coerceQuery(schema: z.ZodObject, query: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, raw] of Object.entries(query)) {
    const field = schema.shape[key] as z.ZodType | undefined;
    // An unknown parameter goes through as it is, so the strict input schema refuses it by name.
    const kind = field ? baseKind(field) : 'other';
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
    // One copy of the body with the path parameters over it (a run's path); a second only when the
    // route reads fields from the query string too.
    if (!route.queryFields) return { ...(body as Record<string, unknown>), ...req.params };
    base = { ...(body as Record<string, unknown>) };
    for (const f of route.queryFields) if (req.query[f] !== undefined) base[f] = req.query[f];
  }
  return { ...base, ...req.params };
}

/**
 * A write's answer, as res.json() writes it (same bytes and Content-Type) without what only a GET
 * uses: express hashes every body into an ETag for conditional requests, which a POST, PATCH or
 * DELETE never answers with 304 (a per-call cost of the execute path, issue 33).
 */
function sendJson(res: Response, status: number, output: unknown): void {
  const body = JSON.stringify(output) ?? '';
  if (status === 204) {
    res.status(204).end();
    return;
  }
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}

/** One route's handler, for a caller already authenticated (res.locals.caller) with the body parsed. */
export const restHandler =
  (services: Services, r: RestRoute) =>
  async (req: Request, res: Response): Promise<void> => {
    try {
      const caller = res.locals.caller as Caller;
      // Not { ...services, caller }: on Node 20 (V8 11.3) a spread then a field gets a map of its own
      // every time, and every ctx read of the run (store, config, caller) went megamorphic.
      const output = await invokeTool(r.operation, requestInput(r, req), Object.assign({ caller }, services));
      const status = r.statusFor?.(output) ?? r.status;
      if (r.method === 'get') res.status(status).json(output);
      else sendJson(res, status, output);
    } catch (err) {
      sendProblem(res, err);
    }
  };

/** The runs of one judge or one evaluator: the routes the app takes first (src/http/hot-route.ts). */
export const runRoutes = (): RestRoute[] => routes.filter((r) => r.method === 'post' && /^\/v1\/(?:judges|evaluators)\/:[a-z_]+\/execute\/$/.test(r.path));

/** The /v1 routes, for a caller already authenticated (res.locals.caller) with the body parsed. */
export function restRouter(services: Services): express.RequestHandler {
  const handlerOf = (r: RestRoute) => restHandler(services, r);
  // express tries every route's path pattern in turn until one matches, whatever its method: with
  // about a hundred routes that was a measurable share of a judge run's CPU (issue 33). One router
  // per method, each with that method's routes in table order, answers exactly as one router would
  // (only routes of the request's method could answer it); HEAD goes where GET does, as express does.
  // Any other method (OPTIONS: express answers it with the Allow header of every matching route)
  // still goes through one router of every route.
  const all = express.Router({ strict: false });
  const byMethod = new Map<string, express.Router>();
  for (const r of routes) {
    const handler = handlerOf(r);
    all[r.method](r.path, handler);
    const method = r.method.toUpperCase();
    if (!byMethod.has(method)) byMethod.set(method, express.Router({ strict: false }));
    byMethod.get(method)![r.method](r.path, handler);
  }
  // A plain handler, not a router around the routers: one router entry less per request.
  return (req, res, next) => (byMethod.get(req.method === 'HEAD' ? 'GET' : req.method) ?? all)(req, res, next);
}

/** POST /create-demo-user/: no key, no body; `limit` is the per-address demo limiter. */
export function demoUserRoute(services: Services, limit: express.RequestHandler): express.Router {
  const router = express.Router({ strict: false });
  router.post('/create-demo-user/', limit, async (_req, res) => {
    try {
      res.status(201).json(await invokeTool(ops.createDemoUser, {}, services));
    } catch (err) {
      sendProblem(res, err);
    }
  });
  return router;
}
