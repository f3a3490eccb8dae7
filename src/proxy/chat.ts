// POST .../openai/chat/completions: forwards an OpenAI Chat Completions request to the upstream model,
// answers exactly as it did (JSON, or SSE chunks passed on as they arrive), and judges the exchange
// (judging.ts). Order: refuse what cannot work before the upstream is called (unknown judge or model,
// a judge needing contexts) -> call the upstream -> pass its answer on -> judge (sync: before the
// `tribunal` object; async_judge: after the answer is complete) -> the guardrail. With a blocking
// guardrail a streamed answer is held back until judged, so the client never sees blocked text.
import { performance } from 'node:perf_hooks';
import type { Request, Response } from 'express';
import { assertRunnable, resolveJudge } from '../domain/judges.ts';
import { looksLikeId } from '../ids.ts';
import { TribunalError, validationError } from '../errors.ts';
import { log } from '../log.ts';
import type { JudgeRecord } from '../store/types.ts';
import { openAIErrorBody, sendOpenAIError } from './errors.ts';
import { ChunkAccumulator, completionAnswer, messagesToConversation, type Answer, type Conversation } from './exchange.ts';
import { JudgePrep } from './judge-check.ts';
import { DEFAULT_BLOCK_MESSAGE, judgeExchange, logUnjudged, newLogId, type ExchangeInfo, type ProxyContext, type Tribunal } from './judging.ts';
import { trackJudging } from './background.ts';
import { eventData, relayEvents, sseEvent } from './sse.ts';
import { callUpstream, readUpstream, resolveUpstream, unreachable, type UpstreamAnswer, type UpstreamTarget } from './upstream.ts';
import { UpstreamCancel } from './upstream-call.ts';

type Json = Record<string, any>;

/** One exchange in progress: what judging and logging need, whichever way it ends. */
export interface Exchange {
  ctx: ProxyContext;
  judge: JudgeRecord;
  conversation: Conversation;
  target: UpstreamTarget;
  logId: string;
  asyncJudge: boolean;
  /** The judge's evaluators and models: loaded while the upstream answers, used by judging. */
  prep: JudgePrep;
  userId?: string;
  started: number;
}

/** The judge of a proxy path: the path's, else X-Judge-Id, else ?judge_id. */
export async function proxyJudge(ctx: ProxyContext, req: Request): Promise<JudgeRecord> {
  const given = (req.params.judge_id as string | undefined) ?? req.header('x-judge-id') ?? (typeof req.query.judge_id === 'string' ? req.query.judge_id : undefined);
  if (!given)
    throw validationError('Name the judge: POST /v1/judges/{judge_id}/openai/chat/completions, or send the X-Judge-Id header (or ?judge_id=).', [
      { field: 'judge_id', message: 'required' },
    ]);
  const judge = await resolveJudge(ctx, looksLikeId(given) ? { id: given } : { name: given });
  assertRunnable(judge);
  return judge;
}

/**
 * The checks every proxy door makes before the upstream is called: the judge exists and is runnable,
 * its evaluators can judge a chat exchange (judge-check.ts: at once for a judge version seen to pass),
 * the upstream model is known. The judge and the upstream are looked up side by side; a judge's
 * refusal is reported first.
 */
export async function openExchange(ctx: ProxyContext, req: Request, api: 'chat/completions' | 'responses'): Promise<{ exchange: Exchange; body: Json }> {
  const body = req.body as unknown;
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw validationError('The request body must be a JSON object (an OpenAI request).', [{ field: '(body)', message: 'expected a JSON object' }]);
  const judged = proxyJudge(ctx, req);
  const targeted = resolveUpstream(ctx, (body as Json).model, api);
  targeted.catch(() => {}); // awaited below, after the judge's refusals
  const judge = await judged;
  const prep = await JudgePrep.open(ctx, judge);
  const flag = req.query.async_judge; // express parses the query string again on every read of req.query
  const asyncJudge = flag === 'true' || flag === '1';
  if (asyncJudge && judge.guardrail?.action === 'block') {
    throw validationError(`Judge ${judge.name} has a blocking guardrail, which needs synchronous judging: leave out async_judge.`, [
      { field: 'async_judge', message: 'not with a blocking guardrail' },
    ]);
  }
  const target = await targeted;
  const user = (body as Json).user;
  return {
    body: body as Json,
    exchange: {
      ctx,
      judge,
      conversation: { turns: [], system_prompt: undefined },
      target,
      logId: newLogId(),
      asyncJudge,
      prep,
      ...(typeof user === 'string' && user ? { userId: user } : {}),
      started: performance.now(),
    },
  };
}

export const infoOf = (
  x: Exchange,
  api: ExchangeInfo['api'],
  streamed: boolean,
  status: number | null,
  outcome: ExchangeInfo['outcome'],
  error: string | null = null,
): ExchangeInfo => ({
  api,
  model: x.target.record.name,
  streamed,
  status,
  outcome,
  latency_ms: Math.round((performance.now() - x.started) * 10) / 10,
  async_judge: x.asyncJudge,
  error,
});

const logFailure = (x: Exchange, info: ExchangeInfo, answer: Answer | null, why: string) =>
  logUnjudged(x.ctx, { ...x, info, answer }, why).catch((err) => log.error('judge proxy: the exchange could not be logged', { err, execution_log_id: x.logId }));

/** Judges now (sync) or after the answer (async_judge: the answer carries the log id and `pending`). */
export async function judgeOrDefer(x: Exchange, info: ExchangeInfo, answer: Answer): Promise<{ tribunal: Tribunal; later?: () => void }> {
  const run = () => judgeExchange(x.ctx, { ...x, info, answer });
  if (!x.asyncJudge) return { tribunal: await run() };
  return {
    tribunal: { execution_log_id: x.logId, score: null, evaluator_results: [], pending: true },
    // Tracked so that a graceful shutdown waits for it (background.ts).
    later: () =>
      trackJudging(
        x.ctx.store,
        run().then((t) => t.error && log.warn(`judge proxy: async judging of ${x.logId} failed: ${t.error}`, { execution_log_id: x.logId })),
      ),
  };
}

/** Calls the upstream; answers null (having answered the client and logged) when it failed. */
export async function forward(
  x: Exchange,
  res: Response,
  upstreamBody: unknown,
  api: ExchangeInfo['api'],
  streamed: boolean,
  cancel: UpstreamCancel,
): Promise<UpstreamAnswer | null> {
  let up: UpstreamAnswer;
  try {
    const call = callUpstream(x.target, upstreamBody, cancel);
    x.prep.start(); // the judge's evaluators load while the upstream answers
    up = await call;
  } catch (err) {
    if (cancel.cancelled) {
      void logFailure(x, infoOf(x, api, streamed, null, 'client_disconnected', 'the client went away before the upstream answered'), null, 'client disconnected');
      return null;
    }
    const error = unreachable(x.target, err);
    void logFailure(x, infoOf(x, api, streamed, null, 'upstream_unreachable', error.message), null, error.message);
    sendOpenAIError(res, error);
    return null;
  }
  if (up.status < 400) return up;
  // An upstream refusal or failure is passed on as it came: its status, its body, its Retry-After.
  let text = '';
  try {
    text = (await readUpstream(up, 1024 * 1024)).toString('utf8');
  } catch {
    text = JSON.stringify(openAIErrorBody(up.status, `The upstream model ${x.target.record.name} failed with HTTP ${up.status}.`, 'upstream_error'));
  }
  void logFailure(x, infoOf(x, api, streamed, up.status, 'upstream_error', `HTTP ${up.status}: ${text.slice(0, 500)}`), null, `upstream HTTP ${up.status}`);
  if (up.retryAfter) res.setHeader('retry-after', up.retryAfter);
  res.status(up.status).type(up.contentType).send(text);
  return null;
}

/** Cancels the upstream call when the client goes away before the answer is complete. */
export function abortOnClose(res: Response): UpstreamCancel {
  const cancel = new UpstreamCancel();
  res.on('close', () => {
    if (!res.writableFinished) cancel.cancel();
  });
  return cancel;
}

export async function proxyChatCompletions(ctx: ProxyContext, req: Request, res: Response): Promise<void> {
  let opened;
  try {
    opened = await openExchange(ctx, req, 'chat/completions');
    if (!Array.isArray(opened.body.messages))
      throw validationError('`messages` is required: the conversation so far, as OpenAI Chat Completions messages.', [{ field: 'messages', message: 'required' }]);
  } catch (err) {
    return sendOpenAIError(res, err);
  }
  const { exchange: x, body } = opened;
  const streamed = body.stream === true;
  const upstreamBody: Json = { ...body, model: x.target.record.model };
  // Usage is asked for so the log can keep the upstream's tokens and cost; a client that did not
  // ask for it does not get the usage chunk.
  const hideUsage = streamed && body.stream_options?.include_usage !== true;
  if (hideUsage) upstreamBody.stream_options = { ...(body.stream_options ?? {}), include_usage: true };
  const cancel = abortOnClose(res);
  const forwarded = forward(x, res, upstreamBody, 'chat.completions', streamed, cancel);
  // The upstream request has left (forward dispatches before its first await): what judging and the
  // log need is put together while it answers, not before.
  x.conversation = messagesToConversation(body.messages);
  const up = await forwarded;
  if (!up) return;
  if (streamed && up.contentType.includes('text/event-stream')) return streamChat(x, res, up, cancel, hideUsage);
  return jsonChat(x, res, up, streamed);
}

async function jsonChat(x: Exchange, res: Response, up: UpstreamAnswer, streamed: boolean): Promise<void> {
  let text: string;
  let completion: Json;
  try {
    text = (await readUpstream(up)).toString('utf8');
    completion = JSON.parse(text);
    if (typeof completion !== 'object' || completion === null || Array.isArray(completion)) throw new SyntaxError('not an object');
  } catch (err) {
    const why = err instanceof SyntaxError ? `The upstream model ${x.target.record.name} answered with something that is not a JSON object.` : (err as Error).message;
    void logFailure(x, infoOf(x, 'chat.completions', streamed, up.status, 'upstream_error', why), null, why);
    return sendOpenAIError(res, new TribunalError('model_unavailable', 502, why));
  }
  const answer = completionAnswer(completion);
  const { tribunal, later } = await judgeOrDefer(x, infoOf(x, 'chat.completions', streamed, up.status, 'answered'), answer);
  if (up.requestId) res.setHeader('x-request-id', up.requestId);
  if (tribunal.blocked) {
    const choice = completion.choices?.[0];
    if (choice) {
      choice.message = { role: 'assistant', content: x.judge.guardrail?.message ?? DEFAULT_BLOCK_MESSAGE, refusal: null };
      choice.finish_reason = 'content_filter';
      delete choice.logprobs;
    }
    res.status(up.status).json({ ...completion, tribunal });
  } else sendWithTribunal(res, up.status, text, completion, tribunal);
  later?.();
}

/**
 * The upstream's JSON text as it came, with `tribunal` added as its last member: no second
 * serialisation of the answer (nor an ETag over it) on the way out.
 */
export function sendWithTribunal(res: Response, status: number, text: string, parsed: Json, tribunal: unknown): void {
  const close = text.lastIndexOf('}');
  const member = `"tribunal":${JSON.stringify(tribunal)}`;
  const body = 'tribunal' in parsed ? JSON.stringify({ ...parsed, tribunal }) : `${text.slice(0, close)}${Object.keys(parsed).length ? ',' : ''}${member}}`;
  res.statusCode = status;
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.end(body);
}

async function streamChat(x: Exchange, res: Response, up: UpstreamAnswer, cancel: UpstreamCancel, hideUsage: boolean): Promise<void> {
  res.status(up.status);
  res.setHeader('content-type', 'text/event-stream; charset=utf-8');
  res.setHeader('cache-control', 'no-cache');
  if (up.requestId) res.setHeader('x-request-id', up.requestId);
  const blocking = x.judge.guardrail?.action === 'block';
  // The headers leave with the first chunk (one write, as the upstream sent them), one syscall less
  // before the first token; a held (blocking) stream sends them now, so the client sees it is alive.
  if (blocking) res.flushHeaders();
  const held: string[] = [];
  // The events of one upstream chunk leave in one write, as they arrived together (one syscall, not one an event).
  let out = '';
  const pass = (event: string) => (blocking ? held.push(event) : (out += event));
  const flush = () => {
    if (out) res.write(out);
    out = '';
  };
  const acc = new ChunkAccumulator();
  const take = (event: string) => {
    const data = eventData(event);
    if (data === null || data === '[DONE]') return; // [DONE] is written after the tribunal chunk
    let chunk: Json | null = null;
    try {
      chunk = JSON.parse(data);
    } catch {
      /* passed on as it came */
    }
    if (chunk) acc.add(chunk);
    if (hideUsage && chunk?.usage && Array.isArray(chunk.choices) && chunk.choices.length === 0) return;
    pass(`${event}\n\n`);
  };
  try {
    await relayEvents(up.body, take, flush);
  } catch (err) {
    const answer = acc.answer();
    if (cancel.cancelled) {
      void logFailure(
        x,
        infoOf(x, 'chat.completions', true, up.status, 'client_disconnected', 'the client went away mid-stream; the upstream call was cancelled'),
        answer,
        'client disconnected',
      );
      return;
    }
    flush();
    const why = `The upstream stream broke off: ${(err as Error).message}`;
    void logFailure(x, infoOf(x, 'chat.completions', true, up.status, 'upstream_error', why), answer, why);
    res.end(sseEvent(openAIErrorBody(502, why, 'model_unavailable')));
    return;
  }
  const answer = acc.answer();
  const { tribunal, later } = await judgeOrDefer(x, infoOf(x, 'chat.completions', true, up.status, 'answered'), answer);
  const head = {
    id: acc.head?.id ?? `chatcmpl-${x.logId}`,
    object: 'chat.completion.chunk',
    created: acc.head?.created ?? Math.floor(Date.now() / 1000),
    model: acc.head?.model ?? x.target.record.model,
  };
  if (tribunal.blocked) {
    const message = x.judge.guardrail?.message ?? DEFAULT_BLOCK_MESSAGE;
    res.write(sseEvent({ ...head, choices: [{ index: 0, delta: { role: 'assistant', content: message }, finish_reason: null }] }));
    res.write(sseEvent({ ...head, choices: [{ index: 0, delta: {}, finish_reason: 'content_filter' }] }));
    // The usage chunk a client asked for still arrives (it holds no text).
    for (const event of held) if (/"choices":\s*\[\]/.test(event)) res.write(event);
  } else for (const event of held) res.write(event);
  res.write(sseEvent({ ...head, choices: [], tribunal }));
  res.end('data: [DONE]\n\n');
  later?.();
}
