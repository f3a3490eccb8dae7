// A fake Anthropic Messages API: a real HTTP server on 127.0.0.1 that the real @anthropic-ai/sdk
// talks to (set ANTHROPIC_BASE_URL to its `url`). It is the only fake in the test suite.
//
// Usage:
//   const fake = await startFakeAnthropic();                 // answers every forced tool plausibly
//   fake.enqueue(toolAnswer({ justification: 'ok', score: 0.7 }), rateLimited(0)); // FIFO, first
//   fake.enqueueFor('submit_evaluation', overloaded());      // FIFO per tool name, before the shared queue
//   fake.respondWith((req) => toolAnswer({ ... }));          // fallback responder (null = default)
//   fake.setLatency(300);                                    // delay every answer
//   ...; fake.requests[0].body.messages[0].content;          // every request, parsed, in arrival order
//   fake.peakInFlight;                                       // most requests open at once
//   fake.cacheStats;                                         // prompt-cache reads and writes reported
//   await fake.close();
//
// A caching fake: a request whose tools + system carry a `cache_control` block is billed as the real
// API bills it. The prefix up to the marked block (tools, then system) is written to the cache on
// its first sight (cache_creation_input_tokens) and read on every repeat of the same bytes for the
// same model (cache_read_input_tokens); input_tokens is then only the rest. A prefix shorter than
// `cacheMinTokens` (default 1024, the API's minimum for Sonnet/Opus) is not cached. Tokens are
// estimated as characters / 4. An answer with an explicit usage is reported as given, uncached.
//
// Order of precedence for each request: the per-tool queue of the requested tool, the shared queue,
// the responder set with respondWith (or opts.responder), then the default responder.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeRequest {
  /** 0-based arrival index. */
  index: number;
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** Parsed JSON body (null when the body was not JSON). */
  body: any;
  /** The tool the request forces (tool_choice {type: 'tool'}), else the first tool offered, else null. */
  toolName: string | null;
  /** The text of the first user message (string content or its text blocks joined). */
  prompt: string;
  /** The system prompt as text. */
  system: string;
  receivedAt: number;
}

export type FakeAnswer =
  /** A tool_use block answering `name` (default: the requested tool) with `input`. */
  | { kind: 'tool'; input: unknown; name?: string; usage?: Partial<FakeUsage>; model?: string; delayMs?: number; text?: string }
  /** A text-only answer: no tool_use block at all (a malformed answer for a forced-tool caller). */
  | { kind: 'text'; text: string; usage?: Partial<FakeUsage>; delayMs?: number }
  /** An API error in Anthropic's envelope: {type: 'error', error: {type, message}}. */
  | { kind: 'error'; status: number; errorType?: string; message?: string; headers?: Record<string, string>; delayMs?: number }
  /** Any status and body, verbatim (e.g. invalid JSON). */
  | { kind: 'raw'; status: number; body: string; headers?: Record<string, string>; delayMs?: number }
  /** A full message object, sent as is with status 200. */
  | { kind: 'message'; message: Record<string, unknown>; delayMs?: number }
  /** Never answers; the request stays in flight until the client gives up or the fake closes. */
  | { kind: 'hang' }
  /** Accepts the request, then destroys the socket without an answer (a dropped connection). */
  | { kind: 'drop'; delayMs?: number };

export interface FakeUsage {
  input_tokens: number;
  output_tokens: number;
}

export type Responder = (req: FakeRequest) => FakeAnswer | Promise<FakeAnswer>;

export interface FakeAnthropicOptions {
  /** Fallback responder; default answers any tool plausibly from its input_schema. */
  responder?: Responder;
  /** Delay before every answer, in ms (a number or a function of the request). Default 0. */
  latencyMs?: number | ((req: FakeRequest) => number);
  /** Refuse requests without x-api-key / Authorization with 401, like the real API. Default true. */
  requireAuth?: boolean;
  /** The shortest prefix (estimated tokens) the prompt cache keeps. Default 1024. */
  cacheMinTokens?: number;
  /**
   * Keep every request in `requests` (default true). A bench that never reads them passes false: a
   * fake holding thousands of parsed prompts spends its time in garbage collection, and each of its
   * pauses holds back every answer due meanwhile (latency the bench would then blame on the server).
   */
  record?: boolean;
}

export interface FakeAnthropic {
  /** Base URL for ANTHROPIC_BASE_URL (no trailing slash). */
  url: string;
  /** Every request received, in arrival order. */
  readonly requests: FakeRequest[];
  /** Requests currently open (received, not yet answered or abandoned). */
  readonly inFlight: number;
  /** Most requests open at the same time since start (or the last resetStats). */
  readonly peakInFlight: number;
  /** Requests whose answer was a tool_use / text / error / etc., counted by kind. */
  readonly answered: Record<string, number>;
  /** Sets the fallback responder; null restores the default responder. */
  respondWith(responder: Responder | null): void;
  /** Scripted answers, used first-in first-out before the responder (any tool). */
  enqueue(...answers: Array<FakeAnswer | Responder>): void;
  /** Scripted answers for requests that force (or offer first) the tool `toolName`. */
  enqueueFor(toolName: string, ...answers: Array<FakeAnswer | Responder>): void;
  /** Scripted answers not yet used. */
  readonly pending: number;
  setLatency(latency: number | ((req: FakeRequest) => number)): void;
  /** Prompt-cache tokens reported so far: written (cache_creation_input_tokens) and read. */
  readonly cacheStats: { writes: number; reads: number; write_tokens: number; read_tokens: number };
  /** Empties the prompt cache (as if its 5 minutes had passed). */
  forgetCache(): void;
  /** Clears recorded requests, peak and counters (queues are kept). */
  resetStats(): void;
  close(): Promise<void>;
}

// ---- answer helpers ---------------------------------------------------------------------------

export const toolAnswer = (input: unknown, opts: Omit<Extract<FakeAnswer, { kind: 'tool' }>, 'kind' | 'input'> = {}): FakeAnswer => ({
  kind: 'tool',
  input,
  ...opts,
});
export const textAnswer = (text: string, opts: { usage?: Partial<FakeUsage>; delayMs?: number } = {}): FakeAnswer => ({ kind: 'text', text, ...opts });
export const errorAnswer = (status: number, opts: Omit<Extract<FakeAnswer, { kind: 'error' }>, 'kind' | 'status'> = {}): FakeAnswer => ({
  kind: 'error',
  status,
  ...opts,
});
/** 429 rate_limit_error with `retry-after` in seconds (and `retry-after-ms` when ms is given). */
export const rateLimited = (retryAfterSeconds?: number, retryAfterMs?: number): FakeAnswer =>
  errorAnswer(429, {
    errorType: 'rate_limit_error',
    message: 'Number of request tokens has exceeded your per-minute rate limit',
    headers: {
      ...(retryAfterSeconds !== undefined ? { 'retry-after': String(retryAfterSeconds) } : {}),
      ...(retryAfterMs !== undefined ? { 'retry-after-ms': String(retryAfterMs) } : {}),
    },
  });
/** 529 overloaded_error. */
export const overloaded = (): FakeAnswer => errorAnswer(529, { errorType: 'overloaded_error', message: 'Overloaded' });
/** 500 api_error. */
export const serverError = (status = 500): FakeAnswer => errorAnswer(status, { errorType: 'api_error', message: 'Internal server error' });
export const hang = (): FakeAnswer => ({ kind: 'hang' });
export const drop = (): FakeAnswer => ({ kind: 'drop' });

// ---- plausible inputs from a JSON Schema -----------------------------------------------------

/** A valid-looking value for a JSON Schema (the subset tool input schemas use). */
export function sampleFromSchema(schema: any, name = 'value', depth = 0): unknown {
  if (!schema || typeof schema !== 'object' || depth > 8) return null;
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum[0];
  if (schema.default !== undefined) return schema.default;
  for (const key of ['anyOf', 'oneOf'] as const) {
    if (Array.isArray(schema[key])) {
      const choice = schema[key].find((s: any) => s?.type !== 'null') ?? schema[key][0];
      return sampleFromSchema(choice, name, depth + 1);
    }
  }
  if (Array.isArray(schema.allOf) && schema.allOf.length) return sampleFromSchema(Object.assign({}, ...schema.allOf), name, depth + 1);
  const type = Array.isArray(schema.type) ? (schema.type.find((t: string) => t !== 'null') ?? schema.type[0]) : schema.type;
  switch (type ?? (schema.properties ? 'object' : schema.items ? 'array' : 'string')) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [key, sub] of Object.entries<any>(schema.properties ?? {})) out[key] = sampleFromSchema(sub, key, depth + 1);
      return out;
    }
    case 'array': {
      const count = Math.max(schema.minItems ?? 1, 1);
      const capped = schema.maxItems !== undefined ? Math.min(count, schema.maxItems) : count;
      return Array.from({ length: capped }, () => sampleFromSchema(schema.items ?? {}, name, depth + 1));
    }
    case 'number':
    case 'integer': {
      const lo = schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum : undefined);
      const hi = schema.maximum ?? (schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum : undefined);
      let value = lo !== undefined && hi !== undefined ? lo + (hi - lo) * 0.75 : lo !== undefined ? lo + 1 : hi !== undefined ? hi - 1 : 1;
      if (type === 'integer') value = Math.round(value);
      return value;
    }
    case 'boolean':
      return true;
    case 'null':
      return null;
    default: {
      let text = `fake ${name} from the fake judge model`;
      if (schema.minLength && text.length < schema.minLength) text = text.padEnd(schema.minLength, '.');
      if (schema.maxLength && text.length > schema.maxLength) text = text.slice(0, schema.maxLength);
      return text;
    }
  }
}

/** The default responder: a tool_use for the requested tool with an input sampled from its schema. */
export const defaultResponder: Responder = (req) => {
  const tool = (req.body?.tools ?? []).find((t: any) => t?.name === req.toolName);
  if (!tool) return textAnswer('The fake judge model was offered no tool, so it answers in text.');
  return toolAnswer(sampleFromSchema(tool.input_schema, tool.name));
};

// ---- the server -------------------------------------------------------------------------------

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

const estimateTokens = (value: unknown) => Math.max(1, Math.ceil(JSON.stringify(value ?? '').length / 4));

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((b: any) => (b?.type === 'text' ? String(b.text) : '')).join('');
  return '';
}

function requestedTool(body: any): string | null {
  if (body?.tool_choice?.type === 'tool' && typeof body.tool_choice.name === 'string') return body.tool_choice.name;
  const first = Array.isArray(body?.tools) ? body.tools[0] : undefined;
  return typeof first?.name === 'string' ? first.name : null;
}

/** The checks the real API makes that matter to our callers; a failure is a 400 like the real one. */
function invalidRequest(body: any): string | null {
  if (!body || typeof body !== 'object') return 'request body must be a JSON object';
  if (typeof body.model !== 'string' || !body.model) return 'model: Field required';
  if (!Number.isInteger(body.max_tokens) || body.max_tokens < 1) return 'max_tokens: Field required (a positive integer)';
  if (!Array.isArray(body.messages) || !body.messages.length) return 'messages: at least one message is required';
  if (body.stream) return 'stream: the fake Anthropic server does not stream; call without stream';
  const names = new Set<string>((body.tools ?? []).map((t: any) => t?.name));
  for (const t of body.tools ?? []) {
    if (!t?.name || !t?.input_schema || t.input_schema.type !== 'object') return `tools: each tool needs a name and an input_schema of type object`;
  }
  const choice = body.tool_choice;
  if (choice?.type === 'tool' && !names.has(choice.name)) return `tool_choice: tool ${JSON.stringify(choice.name)} is not in tools`;
  if (body.thinking?.type === 'enabled') {
    if (choice && choice.type !== 'auto' && choice.type !== 'none') return 'Thinking may not be enabled when tool_choice forces tool use.';
    if (!(body.thinking.budget_tokens >= 1024)) return 'thinking.budget_tokens: must be >= 1024';
    if (!(body.thinking.budget_tokens < body.max_tokens)) return '`max_tokens` must be greater than `thinking.budget_tokens`';
  }
  return null;
}

/** The cacheable prefix of a request: tools and system blocks up to the last one marked cache_control, or null. */
function cachedPrefix(body: any): { key: string; tokens: number } | null {
  const system = Array.isArray(body?.system) ? body.system : [];
  const last = system.findLastIndex((b: any) => b?.cache_control?.type === 'ephemeral');
  if (last < 0) return null;
  const prefix = [body.model, body.tools ?? [], system.slice(0, last + 1).map((b: any) => b?.text)];
  return { key: JSON.stringify(prefix), tokens: estimateTokens(prefix.slice(1)) };
}

export async function startFakeAnthropic(opts: FakeAnthropicOptions = {}): Promise<FakeAnthropic> {
  const promptCache = new Set<string>();
  const cacheStats = { writes: 0, reads: 0, write_tokens: 0, read_tokens: 0 };
  const requests: FakeRequest[] = [];
  const shared: Array<FakeAnswer | Responder> = [];
  const perTool = new Map<string, Array<FakeAnswer | Responder>>();
  let responder: Responder = opts.responder ?? defaultResponder;
  let latency = opts.latencyMs ?? 0;
  let inFlight = 0;
  let peakInFlight = 0;
  let answered: Record<string, number> = {};
  const sockets = new Set<import('node:net').Socket>();
  const timers = new Set<NodeJS.Timeout>();

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      if (ms <= 0) return resolve();
      const t = setTimeout(() => {
        timers.delete(t);
        resolve();
      }, ms);
      timers.add(t);
    });

  function nextAnswer(req: FakeRequest): FakeAnswer | Responder {
    const queue = req.toolName ? perTool.get(req.toolName) : undefined;
    if (queue?.length) return queue.shift()!;
    if (shared.length) return shared.shift()!;
    return responder;
  }

  function send(res: http.ServerResponse, status: number, body: string, headers: Record<string, string> = {}) {
    if (res.destroyed || res.writableEnded) return;
    res.writeHead(status, { 'content-type': 'application/json', 'request-id': `req_fake_${randomBytes(6).toString('hex')}`, ...headers });
    res.end(body);
  }

  const server = http.createServer(async (req, res) => {
    inFlight++;
    peakInFlight = Math.max(peakInFlight, inFlight);
    let open = true;
    const finish = () => {
      if (open) {
        open = false;
        inFlight--;
      }
    };
    res.on('close', finish);

    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    let body: any = null;
    try {
      body = raw ? JSON.parse(raw) : null;
    } catch {
      /* recorded as null */
    }
    const url = new URL(req.url ?? '/', 'http://fake');
    const record: FakeRequest = {
      index: requests.length,
      method: req.method ?? 'GET',
      path: url.pathname,
      headers: req.headers,
      body,
      toolName: requestedTool(body),
      prompt: textOf(body?.messages?.find((m: any) => m?.role === 'user')?.content),
      system: textOf(body?.system),
      receivedAt: Date.now(),
    };
    if (opts.record !== false) requests.push(record);

    const fail = (status: number, message: string) => send(res, status, JSON.stringify({ type: 'error', error: { type: ERROR_TYPES[status] ?? 'api_error', message } }));

    if (req.method !== 'POST' || url.pathname !== '/v1/messages') return fail(404, `The fake Anthropic server only serves POST /v1/messages, not ${req.method} ${url.pathname}`);
    if (opts.requireAuth !== false && !req.headers['x-api-key'] && !req.headers.authorization) return fail(401, 'x-api-key header is required');
    const invalid = invalidRequest(body);
    if (invalid) return fail(400, invalid);

    let answer: FakeAnswer;
    try {
      const next = nextAnswer(record);
      answer = typeof next === 'function' ? await next(record) : next;
    } catch (err) {
      return fail(500, `fake responder threw: ${(err as Error).message}`);
    }
    answered[answer.kind] = (answered[answer.kind] ?? 0) + 1;
    if (answer.kind === 'hang') return; // stays open until the client aborts or close()

    const base = typeof latency === 'function' ? latency(record) : latency;
    await sleep(base + (answer.delayMs ?? 0));
    if (!open) return; // the client gave up meanwhile

    switch (answer.kind) {
      case 'drop':
        req.socket.destroy();
        return;
      case 'error':
        return send(
          res,
          answer.status,
          JSON.stringify({
            type: 'error',
            error: { type: answer.errorType ?? ERROR_TYPES[answer.status] ?? 'api_error', message: answer.message ?? `fake error ${answer.status}` },
          }),
          answer.headers,
        );
      case 'raw':
        return send(res, answer.status, answer.body, answer.headers);
      case 'message':
        return send(res, 200, JSON.stringify(answer.message));
      case 'text':
      case 'tool': {
        const content: unknown[] = [];
        if (body.thinking?.type === 'enabled') {
          content.push({ type: 'thinking', thinking: 'The fake judge model thinks briefly.', signature: `sig_${randomBytes(8).toString('hex')}` });
        }
        if (answer.kind === 'text' || answer.text) content.push({ type: 'text', text: answer.kind === 'text' ? answer.text : answer.text });
        if (answer.kind === 'tool') {
          content.push({ type: 'tool_use', id: `toolu_fake_${randomBytes(8).toString('hex')}`, name: answer.name ?? record.toolName ?? 'tool', input: answer.input });
        }
        const usage = {
          input_tokens: answer.usage?.input_tokens ?? estimateTokens([body.system, body.messages, body.tools]),
          output_tokens: answer.usage?.output_tokens ?? estimateTokens(content),
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
        };
        const prefix = answer.usage?.input_tokens === undefined ? cachedPrefix(body) : null;
        if (prefix && prefix.tokens >= (opts.cacheMinTokens ?? 1024)) {
          const hit = promptCache.has(prefix.key);
          promptCache.add(prefix.key);
          usage.input_tokens = Math.max(1, usage.input_tokens - prefix.tokens);
          if (hit) {
            usage.cache_read_input_tokens = prefix.tokens;
            cacheStats.reads++;
            cacheStats.read_tokens += prefix.tokens;
          } else {
            usage.cache_creation_input_tokens = prefix.tokens;
            cacheStats.writes++;
            cacheStats.write_tokens += prefix.tokens;
          }
        }
        const message = {
          id: `msg_fake_${randomBytes(8).toString('hex')}`,
          type: 'message',
          role: 'assistant',
          model: (answer.kind === 'tool' && answer.model) || body.model,
          content,
          stop_reason: answer.kind === 'tool' ? 'tool_use' : 'end_turn',
          stop_sequence: null,
          usage,
        };
        return send(res, 200, JSON.stringify(message));
      }
    }
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    requests,
    get inFlight() {
      return inFlight;
    },
    get peakInFlight() {
      return peakInFlight;
    },
    get answered() {
      return answered;
    },
    get cacheStats() {
      return cacheStats;
    },
    forgetCache() {
      promptCache.clear();
    },
    get pending() {
      let n = shared.length;
      for (const q of perTool.values()) n += q.length;
      return n;
    },
    respondWith(next) {
      responder = next ?? defaultResponder;
    },
    enqueue(...answers) {
      shared.push(...answers);
    },
    enqueueFor(toolName, ...answers) {
      const queue = perTool.get(toolName) ?? [];
      queue.push(...answers);
      perTool.set(toolName, queue);
    },
    setLatency(next) {
      latency = next;
    },
    resetStats() {
      requests.length = 0;
      peakInFlight = inFlight;
      answered = {};
      Object.assign(cacheStats, { writes: 0, reads: 0, write_tokens: 0, read_tokens: 0 });
    },
    async close() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
