// A fake OpenAI-compatible Chat Completions server: a real HTTP server on 127.0.0.1 that the real
// `openai` SDK talks to (a registered model's base_url is its `url`). Like test/helpers/fake-anthropic.ts
// it is a fake of the judge model only.
//
//   const fake = await startFakeOpenAI({ apiKey: 'sk-test-...', honours: { tools: true, jsonSchema: true, logprobs: true } });
//   fake.answer = { justification: 'ok', score: 0.7 };   // the object every structured answer carries
//   fake.enqueue({ status: 429, headers: { 'retry-after': '0' } }); // faults, first in first out
//   fake.requests[0].body                                 // every request, parsed
//   fake.answers.submit_grade = { justification: 'ok', not_applicable: false, grade: 4 }; // per tool name
//   fake.alternatives['4'] = [{ token: '4', logprob: Math.log(0.6) }, { token: '3', logprob: Math.log(0.3) }];
//        // every emitted token "4" gets that log-probability and those top_logprobs (log-probability scoring)
//
// What it honours, as servers differ: `tools` (a tool_choice naming a function is answered with that
// call; otherwise the model writes prose, as servers that ignore tool_choice do), `jsonSchema`
// (response_format json_schema answered with the object; otherwise 400 like a server without it),
// `logprobs` (token log-probabilities when asked). A request with neither tools nor a response format
// is answered with the object as JSON text when the prompt asks for JSON, else prose.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { serveReply, type ReplyStats, type UpstreamReply } from './fake-upstream-reply.ts'; // h-proxy

export interface FakeOpenAIRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: any;
}
export interface FakeFault {
  status: number;
  message?: string;
  headers?: Record<string, string>;
}
export interface FakeOpenAI {
  url: string;
  readonly requests: FakeOpenAIRequest[];
  /** The structured answer (tool arguments or JSON content); by tool name, else the default. */
  answer: Record<string, unknown>;
  /** Most requests open at once. */
  readonly peakInFlight: number;
  latencyMs: number;
  /** Answers by tool (or response-format) name, before `answer`. */
  readonly answers: Record<string, Record<string, unknown>>;
  /** Per emitted token text: its log-probability (the entry with the same token, else -0.01) and its top_logprobs. */
  readonly alternatives: Record<string, Array<{ token: string; logprob: number }>>;
  /** How answer text is cut into tokens for logprobs (default: runs of letters, single digits, single other characters, whitespace runs). */
  tokenize: (text: string) => string[];
  /** Automatic prefix caching: a request whose system message was seen before reports this many cached prompt tokens. Default 0. */
  cachedTokens: number;
  /** h-proxy: answer as the application's model behind the judge proxy (fake-upstream-reply.ts); null: as a judge model. */
  reply: UpstreamReply | null;
  /** h-proxy: streams cut short by the client, chunks written. */
  readonly replyStats: ReplyStats;
  enqueue(...faults: FakeFault[]): void;
  close(): Promise<void>;
}

export async function startFakeOpenAI(opts: { apiKey?: string; honours?: { tools?: boolean; jsonSchema?: boolean; logprobs?: boolean } } = {}): Promise<FakeOpenAI> {
  const honours = { tools: true, jsonSchema: true, logprobs: true, ...opts.honours };
  const requests: FakeOpenAIRequest[] = [];
  const faults: FakeFault[] = [];
  let inFlight = 0;
  let peak = 0;
  const state = {
    answer: { justification: 'The response meets the rubric.', score: 0.8 } as Record<string, unknown>,
    latencyMs: 0,
    cachedTokens: 0,
    reply: null as UpstreamReply | null,
    tokenize: (text: string) => text.match(/\s+|[A-Za-z_]+|\d|[^\sA-Za-z_\d]/g) ?? [],
  };
  const answers: Record<string, Record<string, unknown>> = {};
  const alternatives: Record<string, Array<{ token: string; logprob: number }>> = {};
  const tokenLogprobs = (text: string) =>
    state.tokenize(text).map((token) => {
      const top = alternatives[token] ?? [];
      return {
        token,
        logprob: top.find((t) => t.token === token)?.logprob ?? -0.01,
        bytes: [...Buffer.from(token)],
        top_logprobs: top.map((t) => ({ ...t, bytes: [...Buffer.from(t.token)] })),
      };
    });
  const seenSystems = new Set<string>();
  const replyStats: ReplyStats = { aborted: 0, chunksWritten: 0 }; // h-proxy

  const send = (res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
  const error = (res: http.ServerResponse, status: number, message: string, headers?: Record<string, string>) =>
    send(res, status, { error: { message, type: status === 401 ? 'invalid_request_error' : 'server_error', code: null } }, headers);

  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    let body: any = null;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      /* not JSON */
    }
    requests.push({ path: req.url ?? '', headers: req.headers, body });
    inFlight++;
    peak = Math.max(peak, inFlight);
    try {
      if (state.latencyMs) await new Promise((r) => setTimeout(r, state.latencyMs));
      const replyPath = state.reply !== null && req.url?.endsWith('/responses'); // h-proxy
      if (!(req.url?.endsWith('/chat/completions') || replyPath) || req.method !== 'POST') return error(res, 404, `no route ${req.method} ${req.url}`);
      if (opts.apiKey && req.headers.authorization !== `Bearer ${opts.apiKey}`) return error(res, 401, 'Incorrect API key provided.');
      const fault = faults.shift();
      if (fault) return error(res, fault.status, fault.message ?? `fault ${fault.status}`, fault.headers);
      if (state.reply && body && typeof body.model === 'string') return await serveReply(req, res, body, state.reply, replyStats, requests.length); // h-proxy
      if (!body || typeof body.model !== 'string' || !Array.isArray(body.messages)) return error(res, 400, 'model and messages are required');
      if (body.response_format?.type === 'json_schema' && !honours.jsonSchema) return error(res, 400, "response_format 'json_schema' is not supported by this server");

      const cachedFor = (b: any) => {
        const system = JSON.stringify([b.model, b.messages[0]?.role === 'system' ? b.messages[0].content : null]);
        const seen = seenSystems.has(system);
        seenSystems.add(system);
        return seen ? state.cachedTokens : 0;
      };
      const prompt = body.messages.map((m: { content: unknown }) => (typeof m.content === 'string' ? m.content : '')).join('\n');
      const forced = body.tool_choice?.type === 'function' ? (body.tool_choice.function?.name as string) : null;
      const toolName: string = forced ?? body.response_format?.json_schema?.name ?? /the function (\w+)/.exec(prompt)?.[1] ?? 'submit_evaluation';
      const answer = toolName === 'submit_check' ? { ok: true } : (answers[toolName] ?? state.answer);
      const message: Record<string, unknown> = { role: 'assistant', content: null };
      let finish = 'stop';
      if (forced && honours.tools) {
        message.tool_calls = [{ id: 'call_1', type: 'function', function: { name: forced, arguments: JSON.stringify(answer) } }];
        finish = 'tool_calls';
      } else if (body.response_format?.type === 'json_schema' || (!body.tools && /one JSON object/.test(prompt))) {
        message.content = JSON.stringify(answer);
      } else {
        message.content = `I would rate this response ${String(answer.score ?? 'well')} out of 1.`;
      }
      const choice: Record<string, unknown> = { index: 0, message, finish_reason: finish };
      if (body.logprobs && honours.logprobs) {
        choice.logprobs = { content: typeof message.content === 'string' ? tokenLogprobs(message.content) : [{ token: '{', logprob: -0.01, bytes: [123], top_logprobs: [] }] };
      }
      send(res, 200, {
        id: `chatcmpl-${requests.length}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: body.model,
        choices: [choice],
        usage: { prompt_tokens: 1000, completion_tokens: 100, total_tokens: 1100, prompt_tokens_details: { cached_tokens: cachedFor(body) } },
      });
    } finally {
      inFlight--;
    }
  });
  server.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return {
    url,
    requests,
    get answer() {
      return state.answer;
    },
    set answer(a) {
      state.answer = a;
    },
    get latencyMs() {
      return state.latencyMs;
    },
    set latencyMs(ms) {
      state.latencyMs = ms;
    },
    answers,
    alternatives,
    get tokenize() {
      return state.tokenize;
    },
    set tokenize(t) {
      state.tokenize = t;
    },
    get cachedTokens() {
      return state.cachedTokens;
    },
    set cachedTokens(n) {
      state.cachedTokens = n;
    },
    get peakInFlight() {
      return peak;
    },
    get reply() {
      return state.reply;
    },
    set reply(r) {
      state.reply = r;
    },
    replyStats,
    enqueue: (...f) => faults.push(...f),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
