// The floor servers: the least work a durable server must do for a proxied call with async judging
// and for a sampled OTLP span (bench/doors-floor.bench.ts), and for a judge of several evaluators
// run on one row (bench/cli-eval.bench.ts), written out with nothing else, so that Tribunal's CPU
// and latency for the same job can be set against them (issue 33). Each runs in a child process of
// its own (the benches' `--serve floor-...`).
//
// What they share, and why it is the least:
//   - express (what any route in an express server costs; Tribunal is one) and a SHA-256 key lookup
//     in a Map (a server that authenticates must at least hash the presented key);
//   - one judge-model call per judged exchange (per evaluator, for the judge floor) over undici (the
//     fake Anthropic Messages API, a ~1k-char system prompt with a nonce-fenced answer and a forced
//     tool, as ../shared/bench/floor-bench.mjs sends), its JSON answer parsed;
//   - one JSON line per judged exchange appended to a file with group-committed fdatasync (the
//     cheapest durable write: the lines waiting while one flush runs share the next flush).
import crypto from 'node:crypto';
import fs from 'node:fs';
import { Agent, request } from 'undici';
import { decodeExportMessage } from '../src/traces/proto.ts';
import { listenOnLoopback, type Ready } from './harness.ts';

/** The one key the floors know, presented as `Bearer <FLOOR_KEY>` (or `Api-Key <FLOOR_KEY>`, as the CLI sends it). */
export const FLOOR_KEY = 'floor-key-1';

const keys = new Map([[crypto.createHash('sha256').update(FLOOR_KEY).digest('hex'), { org: 'o1' }]]);
const who = (authorization: string | undefined) =>
  keys.get(
    crypto
      .createHash('sha256')
      .update((authorization ?? '').replace(/^(Bearer|Api-Key) /, ''))
      .digest('hex'),
  );

/** Group commit: lines queued while a write+fdatasync runs go out together in the next one. */
function appender(file: string): (line: string) => Promise<void> {
  const fd = fs.openSync(file, 'a');
  let pending: Array<[string, () => void]> = [];
  let flushing = false;
  const flush = () => {
    flushing = true;
    const batch = pending;
    pending = [];
    // write(2) at once and fdatasync on the thread pool, as Tribunal's appends do (json-files.ts
    // appendAndSync): the floor keeps the cheapest durable append there is.
    fs.writeSync(fd, batch.map((b) => b[0]).join(''));
    fs.fdatasync(fd, () => {
      for (const b of batch) b[1]();
      if (pending.length) flush();
      else flushing = false;
    });
  };
  return (line) =>
    new Promise((resolve) => {
      pending.push([line, resolve]);
      if (!flushing) flush();
    });
}

const TOOL = {
  name: 'submit_evaluation',
  description: 'Record your evaluation.',
  input_schema: { type: 'object', properties: { justification: { type: 'string' }, score: { type: 'number', minimum: 0, maximum: 1 } }, required: ['justification', 'score'] },
};

/** One judge-model call on a conversation's text; answers the tool input and the usage. */
function judger(judgeUrl: string, dispatcher: Agent) {
  return async (conversation: string): Promise<{ score?: number; justification?: string; usage?: unknown }> => {
    const nonce = crypto.randomBytes(12).toString('hex');
    const r = await request(`${judgeUrl}/v1/messages`, {
      method: 'POST',
      dispatcher,
      headers: { 'content-type': 'application/json', 'x-api-key': 'sk-ant-x', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({
        model: 'claude-sonnet-4-5',
        max_tokens: 1024,
        system: 'You are an impartial evaluator. '.repeat(30) + nonce,
        tools: [TOOL],
        tool_choice: { type: 'tool', name: TOOL.name },
        messages: [{ role: 'user', content: `<conversation_${nonce}>${conversation}</conversation_${nonce}>` }],
      }),
    });
    const msg = (await r.body.json()) as { content?: Array<{ type: string; input?: any }>; usage?: unknown };
    const input = msg.content?.find((c) => c.type === 'tool_use')?.input ?? {};
    return { score: input.score, justification: input.justification, usage: msg.usage };
  };
}

/**
 * The floor proxy: key lookup, the client's JSON body relayed to the upstream (model name swapped for
 * the upstream's, the server's own upstream key), the upstream's JSON answer parsed and sent back with
 * `tribunal: {execution_log_id, pending: true}` as Tribunal's async judging answers; then, after the
 * answer, one judge-model call on the exchange and one durable log line.
 */
export async function serveFloorProxy(upstreamUrl: string, judgeUrl: string, logFile: string): Promise<Ready> {
  const express = (await import('express')).default;
  const dispatcher = new Agent({ connections: 64 });
  const judge = judger(judgeUrl, dispatcher);
  const append = appender(logFile);
  const app = express();
  app.use(express.json({ limit: '1mb' }));
  app.post('/v1/chat/completions', async (req, res) => {
    const org = who(req.headers.authorization);
    if (!org) return void res.status(401).json({ error: { code: 'not_authenticated' } });
    const b = req.body as { model?: unknown; messages?: Array<{ role: string; content: string }> };
    if (typeof b?.model !== 'string' || !Array.isArray(b.messages)) return void res.status(400).json({ error: { code: 'validation_error' } });
    const up = await request(`${upstreamUrl}/chat/completions`, {
      method: 'POST',
      dispatcher,
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-upstream' },
      body: JSON.stringify({ ...b, model: 'gpt-bench' }),
    });
    const answer = (await up.body.json()) as { choices?: Array<{ message?: { content?: string } }>; usage?: unknown };
    const id = crypto.randomUUID();
    res.json({ ...answer, tribunal: { execution_log_id: id, pending: true } });
    const response = answer.choices?.[0]?.message?.content ?? '';
    const verdict = await judge(`${b.messages.map((m) => `${m.role}: ${m.content}`).join('\n')}\nassistant: ${response}`);
    const log = { id, org: org.org, type: 'proxy', turns: b.messages, response, ...verdict, upstream_usage: answer.usage, created_at: new Date().toISOString() };
    await append(`${JSON.stringify(log)}\n`);
  });
  return { url: await listenOnLoopback(app) };
}

type Attr = { key: string; value?: { string_value?: string } };
type Span = { trace_id?: Uint8Array; span_id?: Uint8Array; attributes?: Attr[] };

/**
 * The floor OTLP receiver: key lookup, the protobuf body decoded with the same definitions Tribunal
 * uses (src/traces/proto.ts), each GenAI chat span picked (its operation name, input and output
 * messages), one judge-model call on it and one durable line holding the span's ids, its text and
 * the verdict; the exporter is answered once every span's line is durable (a 200 promises the spans
 * are kept). It stores nothing else: no span store, no queue, no rule state.
 */
export async function serveFloorOtlp(judgeUrl: string, logFile: string): Promise<Ready> {
  const express = (await import('express')).default;
  const dispatcher = new Agent({ connections: 64 });
  const judge = judger(judgeUrl, dispatcher);
  const append = appender(logFile);
  const app = express();
  app.post('/otel/v1/traces', express.raw({ type: 'application/x-protobuf', limit: '4mb' }), async (req, res) => {
    const org = who(req.headers.authorization);
    if (!org) return void res.status(401).end();
    let decoded: { resource_spans?: Array<{ scope_spans?: Array<{ spans?: Span[] }> }> };
    try {
      // The message as decoded, read in place (as Tribunal's receiver reads it): no toObject copy.
      decoded = decodeExportMessage(req.body as Buffer) as typeof decoded;
    } catch {
      return void res.status(400).end();
    }
    const jobs: Promise<void>[] = [];
    for (const rs of decoded.resource_spans ?? [])
      for (const ss of rs.scope_spans ?? [])
        for (const span of ss.spans ?? []) {
          const attr = (k: string) => span.attributes?.find((a) => a.key === k)?.value?.string_value;
          if (attr('gen_ai.operation.name') !== 'chat') continue;
          const input = attr('gen_ai.input.messages') ?? '';
          const output = attr('gen_ai.output.messages') ?? '';
          jobs.push(
            judge(`${input}\n${output}`).then((verdict) => {
              const hex = (b?: Uint8Array) => Buffer.from(b ?? []).toString('hex');
              const line = { org: org.org, trace_id: hex(span.trace_id), span_id: hex(span.span_id), input, output, ...verdict, created_at: new Date().toISOString() };
              return append(`${JSON.stringify(line)}\n`);
            }),
          );
        }
    await Promise.all(jobs);
    res.status(200).type('application/x-protobuf').end();
  });
  return { url: await listenOnLoopback(app) };
}

/**
 * The floor judge server: a judge of `evaluators` (names) run on one row at a time, at the paths
 * `tribunal eval` uses. The judge's lookup (GET /v1/judges/{id}/) answers the one judge it knows;
 * an execute (POST /v1/judges/{id}/execute/) checks the key and the row (request and response text),
 * makes one judge-model call per evaluator at once, and answers once one durable line holds the row
 * and every verdict, with the fields the CLI reads. No store, no versions, no rate limit, no logging.
 */
export async function serveFloorJudge(judgeUrl: string, logFile: string, judgeId: string, evaluators: string[]): Promise<Ready> {
  const express = (await import('express')).default;
  const dispatcher = new Agent({ connections: 128 });
  const judge = judger(judgeUrl, dispatcher);
  const append = appender(logFile);
  const named = evaluators.map((name, i) => ({ id: `evl_${String(i + 1).padStart(32, '0')}`, name }));
  const app = express();
  app.use(express.json({ limit: '1mb' }));
  app.get('/v1/judges/:id/', (req, res) => {
    if (!who(req.headers.authorization)) return void res.status(401).json({ code: 'not_authenticated' });
    if (req.params.id !== judgeId) return void res.status(404).json({ code: 'not_found' });
    res.json({ id: judgeId, name: 'floor judge', evaluators: named });
  });
  app.post('/v1/judges/:id/execute/', async (req, res) => {
    const org = who(req.headers.authorization);
    if (!org) return void res.status(401).json({ code: 'not_authenticated' });
    if (req.params.id !== judgeId) return void res.status(404).json({ code: 'not_found' });
    const b = req.body as { request?: unknown; response?: unknown };
    if (typeof b?.request !== 'string' || typeof b.response !== 'string') return void res.status(400).json({ code: 'validation_error' });
    const started = performance.now();
    const conversation = `user: ${b.request}\nassistant: ${b.response}`;
    const verdicts = await Promise.all(named.map(() => judge(conversation)));
    const results = named.map((e, i) => ({
      evaluator_id: e.id,
      evaluator_name: e.name,
      evaluator_version: 1,
      score: verdicts[i]!.score ?? null,
      justification: verdicts[i]!.justification ?? null,
    }));
    const score = results.reduce((sum, r) => sum + (r.score ?? 0), 0) / results.length;
    const log = {
      id: crypto.randomUUID(),
      org: org.org,
      judge_id: judgeId,
      request: b.request,
      response: b.response,
      score,
      results,
      usage: verdicts.map((v) => v.usage),
      created_at: new Date().toISOString(),
    };
    await append(`${JSON.stringify(log)}\n`);
    res.json({ execution_log_id: log.id, score, cost_usd: null, latency_ms: Math.round(performance.now() - started), evaluator_results: results });
  });
  return { url: await listenOnLoopback(app) };
}
