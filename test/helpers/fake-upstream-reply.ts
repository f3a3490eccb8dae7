// h-proxy: the fake OpenAI server as the *application's* model behind the judge proxy (set
// `fake.reply`): Chat Completions answers, JSON or streamed as SSE in the chunks and at the pace the
// test sets, tool calls included, and the Responses API. It counts streams the client cut short.
import type http from 'node:http';

export interface UpstreamReply {
  content: string;
  tool_calls?: Array<{ id: string; name: string; arguments: string }>;
  /** The content is cut into this many chunks when streamed (default 4). */
  chunks?: number;
  /** Wait between streamed chunks. */
  chunkDelayMs?: number;
  finish_reason?: string;
}

export interface ReplyStats {
  /** Streams whose client went away before the last chunk. */
  aborted: number;
  /** Streamed chunks written, over all streams. */
  chunksWritten: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function pieces(text: string, n: number): string[] {
  if (!text) return [];
  const size = Math.max(1, Math.ceil(text.length / n));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

const usage = { prompt_tokens: 50, completion_tokens: 20, total_tokens: 70 };

/** Answers one request with the reply; `path` tells chat completions from responses. */
export async function serveReply(req: http.IncomingMessage, res: http.ServerResponse, body: any, reply: UpstreamReply, stats: ReplyStats, n: number): Promise<void> {
  let closed = false;
  res.on('close', () => {
    if (!res.writableFinished) {
      closed = true;
      stats.aborted++;
    }
  });
  const created = Math.floor(Date.now() / 1000);
  const finish = reply.finish_reason ?? (reply.tool_calls?.length ? 'tool_calls' : 'stop');
  if (req.url?.endsWith('/responses')) return serveResponses(res, body, reply, stats, n, () => closed);
  const id = `chatcmpl-up-${n}`;
  if (!body.stream) {
    const message: Record<string, unknown> = { role: 'assistant', content: reply.content || null, refusal: null };
    if (reply.tool_calls?.length) message.tool_calls = reply.tool_calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }));
    res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': `req_${n}` });
    res.end(JSON.stringify({ id, object: 'chat.completion', created, model: body.model, choices: [{ index: 0, message, logprobs: null, finish_reason: finish }], usage }));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'x-request-id': `req_${n}` });
  const withUsage = body.stream_options?.include_usage === true;
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: body.model, choices, ...(withUsage ? { usage: null } : {}), ...extra })}\n\n`;
  const events = [chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }])];
  for (const p of pieces(reply.content, reply.chunks ?? 4)) events.push(chunk([{ index: 0, delta: { content: p }, finish_reason: null }]));
  (reply.tool_calls ?? []).forEach((c, i) => {
    events.push(chunk([{ index: 0, delta: { tool_calls: [{ index: i, id: c.id, type: 'function', function: { name: c.name, arguments: '' } }] }, finish_reason: null }]));
    for (const p of pieces(c.arguments, 2)) events.push(chunk([{ index: 0, delta: { tool_calls: [{ index: i, function: { arguments: p } }] }, finish_reason: null }]));
  });
  events.push(chunk([{ index: 0, delta: {}, finish_reason: finish }]));
  if (withUsage) events.push(chunk([], { usage }));
  for (const e of events) {
    if (closed) return;
    res.write(e);
    stats.chunksWritten++;
    if (reply.chunkDelayMs) await sleep(reply.chunkDelayMs);
  }
  if (!closed) res.end('data: [DONE]\n\n');
}

async function serveResponses(res: http.ServerResponse, body: any, reply: UpstreamReply, stats: ReplyStats, n: number, closed: () => boolean): Promise<void> {
  const created_at = Math.floor(Date.now() / 1000);
  const output: any[] = [];
  if (reply.content)
    output.push({ type: 'message', id: `msg_${n}`, status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: reply.content, annotations: [] }] });
  for (const c of reply.tool_calls ?? []) output.push({ type: 'function_call', id: `fc_${c.id}`, call_id: c.id, name: c.name, arguments: c.arguments, status: 'completed' });
  const response = {
    id: `resp_${n}`,
    object: 'response',
    created_at,
    status: 'completed',
    model: body.model,
    output,
    usage: { input_tokens: 50, output_tokens: 20, total_tokens: 70, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } },
  };
  if (!body.stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(response));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  let seq = 0;
  const ev = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`;
  const events = [ev('response.created', { response: { ...response, status: 'in_progress', output: [] } })];
  if (reply.content) {
    const item = { type: 'message', id: `msg_${n}`, status: 'in_progress', role: 'assistant', content: [] };
    events.push(ev('response.output_item.added', { output_index: 0, item }));
    for (const p of pieces(reply.content, reply.chunks ?? 4)) events.push(ev('response.output_text.delta', { item_id: `msg_${n}`, output_index: 0, content_index: 0, delta: p }));
    events.push(ev('response.output_text.done', { item_id: `msg_${n}`, output_index: 0, content_index: 0, text: reply.content }));
    events.push(ev('response.output_item.done', { output_index: 0, item: output[0] }));
  }
  events.push(ev('response.completed', { response }));
  for (const e of events) {
    if (closed()) return;
    res.write(e);
    stats.chunksWritten++;
    if (reply.chunkDelayMs) await sleep(reply.chunkDelayMs);
  }
  if (!closed()) res.end();
}
