// /mcp: the streamable-HTTP MCP endpoint. One McpServer registers every module of tools/; the tool
// handlers are the same ones REST calls, through invokeTool.
//
// Transport mode: stateless (no Mcp-Session-Id) with plain JSON responses. Every POST carries its own
// Authorization header and is complete in itself, so any instance behind a load balancer can answer
// any request: no sticky sessions, no shared session store. The tools never send server-to-client
// requests or notifications, so nothing is lost by having no SSE stream (GET and DELETE answer 405,
// as the transport spec allows for a server without sessions).
//
// The order on every request: enabled? (404) -> Host/Origin allowed? (403) -> API key (401 with
// WWW-Authenticate) -> per-key rate limit (429) -> JSON body within the size limit (413) -> every
// further message of a JSON-RPC batch counted against the same limit (429) -> MCP.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import express, { type NextFunction, type Request, type Response } from 'express';
import { allTools } from '../tools/index.ts';
import type { Authenticator, Caller } from './auth.ts';
import type { Config } from './config.ts';
import { TribunalError, type ErrorCode } from './errors.ts';
import { authenticate } from './http/authenticate.ts';
import { bodyTooLarge } from './http/body.ts';
import { problemOf, sendProblem } from './http/problem.ts';
import type { KeyRateLimit } from './http/rate-limits.ts';
import { invokeTool, type Services, type ToolDefinition } from './tool.ts';
import { VERSION } from './version.ts';
import { log } from './log.ts';

export const SERVER_NAME = 'tribunal';
export const SERVER_VERSION = VERSION;

export const MCP_INSTRUCTIONS = `Tribunal scores LLM outputs with LLM judges. Use it to check a response you (or the application you are working on) produced before relying on it.

Concepts:
- Evaluator: measures one quality of a response (faithfulness to retrieved contexts, relevance, safety, tone...). It has an intent, a rubric, and may require \`contexts\` (retrieved snippets) or an \`expected_output\` (reference answer). Many presets ship with the server.
- Evaluator kinds: \`llm\` (default: the judge model follows the rubric), \`check\` (declarative rules such as json_valid, json_schema, regex, length, tool_call: no model, cost 0) and \`code\` (a sandboxed JavaScript score(input)). When a quality is a hard rule a program can decide (valid JSON, a word limit, a tool was called), create_evaluator with kind check is faster, free and repeatable.
- Judge: a named, reusable set of evaluators for one stage of an application. Running a judge runs all its evaluators concurrently.
- Score: every evaluator returns a score from 0 to 1 (higher is better) with a written justification; a judge's score is the mean of its evaluators' scores.
- Project: scopes judges, evaluators and logs inside your organization; without project_id, things land in the default project (list_projects).
- Execution log: every run is recorded with its inputs, each evaluator's score and justification, cost, latency and the exact evaluator versions used.

The normal loop:
1. list_judges (use \`search\`) to find a judge that fits what you want to check.
2. get_judge to inspect it: note which evaluators require \`contexts\` or \`expected_output\`.
3. run_judge with judge_id or judge_name, \`response\` (the output to evaluate), \`request\` (what prompted it) and any required inputs; for a conversation or an agent trace, \`turns\` (and \`system_prompt\`) instead of request/response: the last assistant turn is judged in its context.
4. Read the scores and justifications; low scores say what to fix. The execution_log_id lets you (or a person) find the run later with get_execution_log or list_execution_logs.
Trust: get_judge and get_evaluator carry \`calibration\`, the agreement of the current version with human labels ({calibration_run_id, n, mae, kappa, finished_at}; kappa 0.6 or more is good agreement beyond chance), or null when no one has measured it. Prefer a calibrated judge over an uncalibrated one when several fit; when you rely on an uncalibrated judge, say so in your answer (its scores have not been checked against people), and for a low kappa, say its verdicts often differ from a person's.
Fitness: get_judge and get_evaluator also carry \`fitness\`, what the calibration permits. \`gating\` (kappa's 95% lower bound at least 0.6 over 100+ labelled items): its pass/fail may gate a release or block a change. \`monitoring\` (kappa 0.4+ over 30+ items): use it to watch trends and flag runs for a person, never to block on one score. \`exploration\` (any other calibration): a hint for your own iteration only; do not gate a release on it. \`uncalibrated\`: no one has checked it against people; say so when you report its scores.
When no judge fits: generate_judge builds one from a plain-language description of the application and stage (it may ask you to pick a stage or answer questions: call it again as its answer says), or pick evaluators with list_evaluators / get_evaluator and assemble them with create_judge; write a new evaluator with create_evaluator when no preset measures the quality you need. run_evaluator runs a single evaluator. update_judge and update_evaluator edit your own resources (every change makes a new version).
Inline judging (no tool needed): an application can point its OpenAI client's base URL at a judge's proxy, <server>/v1/judges/<judge_id>/openai (chat completions and responses), so every answer of its registered model comes back judged (a \`tribunal\` object), blocked or flagged below the judge's \`guardrail\` (create_judge/update_judge), or refined (/v1/judges/<judge_id>/refine/); those runs are execution logs of type "proxy" (list_execution_logs \`type\`).

A failed call returns isError with a message saying what to fix; follow it and call again. There are no delete tools: deleting judges, evaluators or keys is done by a person outside MCP (the REST API or the web app).`;

/** The caller travels from the auth middleware to the tool callbacks on the SDK's AuthInfo. */
interface TribunalAuthInfo extends AuthInfo {
  extra: { caller: Caller };
}

/** Where to look when an id or name was not found, by the tool that failed. */
const NOT_FOUND_HINTS: Record<string, string> = {
  get_judge: 'Find judges with list_judges.',
  run_judge: 'Find judges with list_judges.',
  update_judge: 'Find your judges with list_judges.',
  get_evaluator: 'Find evaluators with list_evaluators.',
  run_evaluator: 'Find evaluators with list_evaluators.',
  update_evaluator: 'Find your evaluators with list_evaluators.',
  get_execution_log: 'Find runs with list_execution_logs.',
  generate_judge: 'Check the ids you passed with list_judges / list_projects.',
  create_judge: 'Find evaluators with list_evaluators and projects with list_projects.',
};

/** Where to find a valid value for an argument that was refused. */
const FIELD_HINTS: Record<string, string> = {
  project_id: 'List your projects with list_projects.',
  evaluator_ids: 'Find evaluators with list_evaluators.',
  judge_id: 'Find judges with list_judges.',
};

/**
 * What an agent should do next, from the error's code (and its structured reason or field list),
 * never from its text: the domain writes door-neutral messages and the MCP door adds the tool names.
 */
const HINTS: Partial<Record<ErrorCode, (toolName: string, err: TribunalError) => string[]>> = {
  validation_error: (_tool, err) => [
    ...(err.errors?.length ? ['Fix these arguments and call again:', ...err.errors.map((e) => `- ${e.field}: ${e.message}`)] : []),
    ...[...new Set((err.errors ?? []).map((e) => FIELD_HINTS[e.field.split('.')[0]]).filter(Boolean))],
  ],
  missing_field: (tool) => [`Call ${tool} again with that input added (get_judge / get_evaluator show which inputs each evaluator requires).`],
  not_found: (tool) => (NOT_FOUND_HINTS[tool] ? [NOT_FOUND_HINTS[tool]] : []),
  model_unavailable: (_tool, err) => [
    err.reason === 'model_not_configured'
      ? 'Retrying will not help: the server operator must configure a judge model. Tell the person you work for.'
      : 'This is a temporary server-side problem: wait a little and retry the same call.',
  ],
  store_unavailable: () => ['This is a temporary server-side problem: wait a little and retry the same call.'],
  conflict: (_tool, err) => (err.reason === 'edited_concurrently' ? ['Retry the same call.'] : []),
  // Budgets (room h-cost)
  budget_exceeded: (_tool, err) => [
    `A cost cap is spent: do not retry before ${err.headers?.['Retry-After'] ? `the reset (in ${err.headers['Retry-After']} s)` : 'an administrator raises the cap'}; tell the person you work for.`,
  ],
};

/** A tool failure as the agent sees it: what went wrong and what to do next. */
export function toolErrorText(toolName: string, err: TribunalError): string {
  return [`${toolName} failed (${err.code}): ${err.message}`, ...(HINTS[err.code]?.(toolName, err) ?? [])].join('\n');
}

export function toolErrorResult(toolName: string, err: unknown): CallToolResult {
  const error = problemOf(err);
  if (error.code === 'internal_error') log.error(`unexpected error in MCP tool ${toolName}`, { err });
  return {
    isError: true,
    content: [
      { type: 'text', text: toolErrorText(toolName, error) },
      { type: 'text', text: JSON.stringify(error.toProblem()) },
    ],
  };
}

export function toolSuccessResult(output: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(output) }], structuredContent: output };
}

/** An McpServer with the 14 tools. It holds no per-caller state: the caller comes with each request. */
export function buildMcpServer(services: Services, tools: ToolDefinition[] = allTools as unknown as ToolDefinition[]): McpServer {
  const server = new McpServer({ name: SERVER_NAME, title: 'Tribunal', version: SERVER_VERSION }, { instructions: MCP_INSTRUCTIONS, capabilities: { tools: {} } });
  for (const tool of tools) {
    server.registerTool(
      tool.name,
      { title: tool.title, description: tool.description, inputSchema: tool.input, outputSchema: tool.output, annotations: { title: tool.title, ...tool.annotations } },
      async (args: unknown, extra: { authInfo?: AuthInfo }) => {
        const caller = (extra.authInfo as TribunalAuthInfo | undefined)?.extra?.caller;
        if (!caller) return toolErrorResult(tool.name, new TribunalError('not_authenticated', 401, 'No authenticated caller on this request.'));
        try {
          // Not { ...services, caller }: on Node 20 a spread then a field gets a map of its own per call
          // (every ctx read of the run goes megamorphic); Object.assign onto { caller } shares one.
          const output = await invokeTool(tool, args, Object.assign({ caller }, services));
          return toolSuccessResult(output as Record<string, unknown>);
        } catch (err) {
          return toolErrorResult(tool.name, err);
        }
      },
    );
  }
  // issue 26: the SDK advertises tools.listChanged on registering a tool, but the tool list never
  // changes and a stateless server has no stream to say so on (GET /mcp answers 405): say false.
  server.server.registerCapabilities({ tools: { listChanged: false } });
  return server;
}

// ---------------------------------------------------------------------------------------------
// DNS-rebinding protection

const LOOPBACK_HOSTS = ['localhost', '127.0.0.1', '[::1]'];
const WILDCARD_BINDS = new Set(['0.0.0.0', '::', '[::]', '']);

export interface HostPolicy {
  /** Host names (any port) or host:port pairs that may appear in the Host header; null = any. */
  hosts: Set<string> | null;
  /** Exact origins (scheme://host[:port]) allowed in an Origin header; null = any. */
  origins: Set<string> | null;
}

const bracketIpv6 = (host: string) => (host.includes(':') && !host.startsWith('[') ? `[${host}]` : host);

/**
 * Allowed hosts: TRIBUNAL_ALLOWED_HOSTS when set ("*" = any), otherwise the loopback names, the bound
 * HOST (unless it is a wildcard like 0.0.0.0) and the host of TRIBUNAL_PUBLIC_URL. Entries without a
 * port match any port. Allowed origins: TRIBUNAL_ALLOWED_ORIGINS when set ("*" = any), otherwise any
 * http(s) origin whose host is an allowed host. Requests without an Origin header (non-browser
 * clients) are not checked for it.
 */
export function hostPolicy(config: Config): HostPolicy {
  let hosts: Set<string> | null;
  if (config.mcp.allowedHosts?.includes('*')) hosts = null;
  else if (config.mcp.allowedHosts) hosts = new Set(config.mcp.allowedHosts.map((h) => h.toLowerCase()));
  else {
    hosts = new Set(LOOPBACK_HOSTS);
    if (!WILDCARD_BINDS.has(config.host)) hosts.add(bracketIpv6(config.host.toLowerCase()));
    if (config.publicUrl) hosts.add(new URL(config.publicUrl).hostname.toLowerCase());
  }
  let origins: Set<string> | null = null;
  if (config.mcp.allowedOrigins && !config.mcp.allowedOrigins.includes('*')) {
    origins = new Set(config.mcp.allowedOrigins.map((o) => o.replace(/\/+$/, '').toLowerCase()));
  }
  return { hosts, origins };
}

function hostAllowed(hosts: Set<string>, hostHeader: string): boolean {
  const host = hostHeader.trim().toLowerCase();
  if (hosts.has(host)) return true;
  const name = /^(\[[^\]]+\]|[^:]+)(?::\d+)?$/.exec(host)?.[1];
  return name !== undefined && hosts.has(name);
}

/** null when allowed, else the reason. */
export function checkHostAndOrigin(policy: HostPolicy, host: string | undefined, origin: string | undefined): string | null {
  if (policy.hosts) {
    if (!host) return 'The request has no Host header.';
    if (!hostAllowed(policy.hosts, host)) {
      return `Host ${JSON.stringify(host)} is not allowed for /mcp (DNS-rebinding protection). Allowed: ${[...policy.hosts].join(', ')}. Set TRIBUNAL_ALLOWED_HOSTS or TRIBUNAL_PUBLIC_URL to the name clients use.`;
    }
  }
  if (origin !== undefined) {
    let allowed: boolean;
    if (policy.origins) allowed = policy.origins.has(origin.replace(/\/+$/, '').toLowerCase());
    else if (!policy.hosts) allowed = true;
    else {
      try {
        const url = new URL(origin);
        allowed = (url.protocol === 'http:' || url.protocol === 'https:') && hostAllowed(policy.hosts, url.host);
      } catch {
        allowed = false;
      }
    }
    if (!allowed) return `Origin ${JSON.stringify(origin)} is not allowed for /mcp (DNS-rebinding protection). Set TRIBUNAL_ALLOWED_ORIGINS to allow it.`;
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// The router

const jsonRpcError = (res: Response, status: number, code: number, message: string) => {
  if (res.headersSent) return;
  res.status(status).json({ jsonrpc: '2.0', error: { code, message }, id: null });
};

/**
 * McpServers are reused across requests: building one (14 tools) per request costs more CPU than
 * the request itself. A server serves one request at a time; each request gets a fresh stateless
 * transport, and the server goes back to the pool only once that transport is closed (which also
 * aborts anything still running for the old request, so no answer can leak into the next one).
 */
class ServerPool {
  private readonly idle: McpServer[] = [];
  constructor(
    private readonly make: () => McpServer,
    private readonly maxIdle = 64,
  ) {}
  take(): McpServer {
    return this.idle.pop() ?? this.make();
  }
  give(server: McpServer): void {
    if (this.idle.length < this.maxIdle) this.idle.push(server);
  }
}

export function mcpRouter(services: Services, authenticator: Authenticator, rateLimit: KeyRateLimit): express.Router {
  const { config } = services;
  const router = express.Router();
  const policy = hostPolicy(config);
  const pool = new ServerPool(() => buildMcpServer(services));

  router.use((_req, res, next) => {
    if (!config.mcp.enabled) return sendProblem(res, new TribunalError('not_found', 404, 'The MCP endpoint is disabled on this server (MCP_ENABLED=false).'));
    next();
  });
  router.use((req, res, next) => {
    const refused = checkHostAndOrigin(policy, req.headers.host, req.headers.origin);
    if (refused) return sendProblem(res, new TribunalError('permission_denied', 403, refused));
    next();
  });
  router.use(authenticate(authenticator), rateLimit.middleware);

  const parseJson = express.json({ limit: config.limits.bodyBytes, strict: false, type: () => true });
  const bodyErrors = (err: unknown, _req: Request, res: Response, next: NextFunction) => {
    const type = (err as { type?: string }).type;
    if (type === 'entity.too.large') {
      return sendProblem(res, bodyTooLarge(config.limits.bodyBytes));
    }
    if (type === 'entity.parse.failed') return jsonRpcError(res, 400, -32700, `Parse error: the body is not valid JSON (${(err as Error).message}).`);
    if (type === 'request.aborted') return;
    if (type === 'encoding.unsupported' || type === 'charset.unsupported') return jsonRpcError(res, 415, -32000, 'Send the body as UTF-8 JSON.');
    next(err);
  };

  // The SDK's transport accepts JSON-RPC batches (up to 100 messages); the limiter above counted the
  // request once, so every further message of a batch is counted here before any of them runs.
  const chargeBatch = async (req: Request, res: Response, next: NextFunction) => {
    if (Array.isArray(req.body) && req.body.length > 1 && !(await rateLimit.charge(res, req.body.length - 1))) return;
    next();
  };

  router.post('/', parseJson, bodyErrors, chargeBatch, async (req: Request, res: Response) => {
    const caller = res.locals.caller as Caller;
    const auth: TribunalAuthInfo = { token: '', clientId: caller.key.id, scopes: [], extra: { caller } };
    (req as Request & { auth?: AuthInfo }).auth = auth;
    const server = pool.take();
    // Host/Origin were checked above against a policy that knows about ports and wildcards.
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      transport.close().then(
        () => pool.give(server),
        () => {},
      );
    };
    res.on('close', release);
    try {
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
    } catch (err) {
      log.error('MCP request failed', { err });
      jsonRpcError(res, 500, -32603, 'Internal error; it has been logged on the server.');
      release();
    }
  });

  const notAllowed = (_req: Request, res: Response) => {
    res.setHeader('Allow', 'POST');
    jsonRpcError(res, 405, -32000, 'Method not allowed: this MCP server is stateless (no sessions, no SSE stream); send JSON-RPC messages with POST.');
  };
  router.all('/', notAllowed);
  return router;
}
