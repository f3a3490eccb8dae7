// POST /v1/judges/{judge_id}/openai/responses (SPEC section 13): the Responses API through the judge
// proxy, as chat.ts does for Chat Completions. The input items are the turns (instructions the
// system prompt), the output items (message text, function calls) the judged turn. Streamed, the
// upstream's events pass on as they arrive and a `tribunal` event follows `response.completed`.
// A blocked answer becomes an incomplete response (incomplete_details.reason "content_filter") whose
// one message is the guardrail's.
import type { Request, Response } from 'express';
import { TribunalError, validationError } from '../errors.ts';
import type { ToolCall, Turn } from '../schemas.ts';
import { abortOnClose, forward, infoOf, judgeOrDefer, openExchange, type Exchange } from './chat.ts';
import { sendOpenAIError } from './errors.ts';
import { contentText, type Answer, type Conversation } from './exchange.ts';
import { DEFAULT_BLOCK_MESSAGE } from './judging.ts';
import { eventData, relayEvents } from './sse.ts';
import { readUpstream, type UpstreamAnswer } from './upstream.ts';
import type { UpstreamCancel } from './upstream-call.ts';

type Json = Record<string, any>;

/** The request's instructions and input items as a conversation. */
export function inputToConversation(body: Json): Conversation {
  const turns: Turn[] = [];
  const system: string[] = typeof body.instructions === 'string' ? [body.instructions] : [];
  const items = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : Array.isArray(body.input) ? body.input : [];
  for (const item of items as Json[]) {
    if (item?.type === 'function_call') {
      const call: ToolCall = {
        ...(typeof item.call_id === 'string' ? { id: item.call_id } : {}),
        name: String(item.name || 'tool'),
        arguments: typeof item.arguments === 'string' ? item.arguments : '',
      };
      const last = turns[turns.length - 1];
      if (last?.role === 'assistant') last.tool_calls = [...(last.tool_calls ?? []), call];
      else turns.push({ role: 'assistant', content: '', tool_calls: [call] });
    } else if (item?.type === 'function_call_output') {
      turns.push({
        role: 'tool',
        content: typeof item.output === 'string' ? item.output : JSON.stringify(item.output ?? ''),
        ...(typeof item.call_id === 'string' ? { tool_call_id: item.call_id } : {}),
      });
    } else if (item?.role === 'system' || item?.role === 'developer') system.push(contentText(item.content));
    else if (item?.role === 'assistant') turns.push({ role: 'assistant', content: contentText(item.content) });
    else if (item?.role === 'user' || item?.type === 'message') turns.push({ role: 'user', content: contentText(item.content) });
  }
  return { turns, ...(system.length ? { system_prompt: system.join('\n\n') } : {}) };
}

/** A finished response object's answer. */
export function responseAnswer(response: Json): Answer {
  let content = '';
  const calls: ToolCall[] = [];
  for (const item of Array.isArray(response.output) ? (response.output as Json[]) : []) {
    if (item?.type === 'message') content += contentText(item.content);
    else if (item?.type === 'function_call')
      calls.push({
        ...(typeof item.call_id === 'string' ? { id: item.call_id } : {}),
        name: String(item.name || 'tool'),
        arguments: typeof item.arguments === 'string' ? item.arguments : '',
      });
  }
  const usage = response.usage ?? {};
  return {
    content,
    ...(calls.length ? { tool_calls: calls } : {}),
    finish_reason: typeof response.status === 'string' ? response.status : null,
    model: typeof response.model === 'string' ? response.model : null,
    input_tokens: typeof usage.input_tokens === 'number' ? usage.input_tokens : null,
    output_tokens: typeof usage.output_tokens === 'number' ? usage.output_tokens : null,
    cached_tokens: typeof usage.input_tokens_details?.cached_tokens === 'number' ? usage.input_tokens_details.cached_tokens : 0,
  };
}

/** The response with its output replaced by the guardrail's message. */
function blockedResponse(x: Exchange, response: Json): Json {
  const text = x.judge.guardrail?.message ?? DEFAULT_BLOCK_MESSAGE;
  return {
    ...response,
    status: 'incomplete',
    incomplete_details: { reason: 'content_filter' },
    output: [{ type: 'message', id: `msg_blocked_${x.logId}`, status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] }],
    output_text: text,
  };
}

export async function proxyResponses(ctx: Exchange['ctx'], req: Request, res: Response): Promise<void> {
  let opened;
  try {
    opened = await openExchange(ctx, req, 'responses');
    if (opened.body.input === undefined) throw validationError('`input` is required: the text or items the response answers.', [{ field: 'input', message: 'required' }]);
  } catch (err) {
    return sendOpenAIError(res, err);
  }
  const { exchange: x, body } = opened;
  const streamed = body.stream === true;
  const cancel = abortOnClose(res);
  const forwarded = forward(x, res, { ...body, model: x.target.record.model }, 'responses', streamed, cancel);
  x.conversation = inputToConversation(body); // while the upstream answers (see proxyChatCompletions)
  const up = await forwarded;
  if (!up) return;
  if (streamed && up.contentType.includes('text/event-stream')) return streamResponses(x, res, up, cancel);
  let response: Json;
  try {
    response = JSON.parse((await readUpstream(up)).toString('utf8'));
  } catch (err) {
    return sendOpenAIError(res, new TribunalError('model_unavailable', 502, `The upstream answer could not be read: ${(err as Error).message}`));
  }
  const { tribunal, later } = await judgeOrDefer(x, infoOf(x, 'responses', streamed, up.status, 'answered'), responseAnswer(response));
  res.status(up.status).json({ ...(tribunal.blocked ? blockedResponse(x, response) : response), tribunal });
  later?.();
}

const frame = (type: string, data: Json) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

async function streamResponses(x: Exchange, res: Response, up: UpstreamAnswer, cancel: UpstreamCancel): Promise<void> {
  res.status(up.status).setHeader('content-type', 'text/event-stream; charset=utf-8');
  res.setHeader('cache-control', 'no-cache');
  const blocking = x.judge.guardrail?.action === 'block';
  // As in chat.ts: the headers leave with the first event unless the stream is held back.
  if (blocking) res.flushHeaders();
  let final: Json | null = null;
  let text = '';
  let seq = 0;
  const take = (event: string) => {
    const data = eventData(event);
    let parsed: Json | null = null;
    try {
      parsed = data ? JSON.parse(data) : null;
    } catch {
      /* passed on as it came */
    }
    if (typeof parsed?.sequence_number === 'number') seq = parsed.sequence_number + 1;
    if (parsed?.type === 'response.output_text.delta' && typeof parsed.delta === 'string') text += parsed.delta;
    if ((parsed?.type === 'response.completed' || parsed?.type === 'response.incomplete' || parsed?.type === 'response.failed') && parsed.response) final = parsed.response;
    // With a blocking guardrail nothing but response.created is passed on before the verdict.
    if (!blocking || parsed?.type === 'response.created') out += `${event}\n\n`;
    else held.push(`${event}\n\n`);
  };
  const held: string[] = [];
  // The events of one upstream chunk leave in one write, as they arrived together.
  let out = '';
  const flush = () => {
    if (out) res.write(out);
    out = '';
  };
  try {
    await relayEvents(up.body, take, flush);
  } catch {
    flush();
    if (!cancel.cancelled) res.end(frame('error', { code: 'model_unavailable', message: 'The upstream stream broke off.', sequence_number: seq }));
    return;
  }
  const answer = final ? responseAnswer(final) : { content: text, finish_reason: null, model: null, input_tokens: null, output_tokens: null, cached_tokens: 0 };
  const { tribunal, later } = await judgeOrDefer(x, infoOf(x, 'responses', true, up.status, 'answered'), answer);
  if (tribunal.blocked && final) {
    const blocked = blockedResponse(x, final);
    const item = blocked.output[0];
    res.write(frame('response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress', content: [] }, sequence_number: seq++ }));
    res.write(frame('response.output_text.delta', { item_id: item.id, output_index: 0, content_index: 0, delta: blocked.output_text, sequence_number: seq++ }));
    res.write(frame('response.output_text.done', { item_id: item.id, output_index: 0, content_index: 0, text: blocked.output_text, sequence_number: seq++ }));
    res.write(frame('response.output_item.done', { output_index: 0, item, sequence_number: seq++ }));
    res.write(frame('response.incomplete', { response: blocked, sequence_number: seq++ }));
  } else for (const e of held) res.write(e);
  res.end(frame('tribunal', { tribunal, sequence_number: seq++ }));
  later?.();
}
