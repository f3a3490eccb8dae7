// POST /v1/judges/{judge_id}/refine/openai/chat/completions (SPEC section 13): the proxy that refines
// before it answers. The upstream is asked for the whole answer (not streamed), the answer is refined
// (src/refine/) in the context of the conversation, and the best version is sent back as the
// upstream's completion with that content; `stream: true` gets it as chunks. An answer that only
// calls tools is judged as it is (there is no text to rewrite). Settings from the query string:
// max_iterations, patience, min_improvement, threshold, refine_model.
import type { Request, Response } from 'express';
import { TribunalError, validationError } from '../errors.ts';
import { refineResponse, REFINE_DEFAULTS, type RefineSettings } from '../refine/refine.ts';
import type { ExecutionLogRecord } from '../store/types.ts';
import { abortOnClose, forward, infoOf, openExchange } from './chat.ts';
import { sendOpenAIError } from './errors.ts';
import { answerTurn, completionAnswer, messagesToConversation } from './exchange.ts';
import { judgeExchange, upstreamInfo, type ProxyContext } from './judging.ts';
import { sseEvent } from './sse.ts';
import { readUpstream } from './upstream.ts';

type Json = Record<string, any>;

function settingsOf(query: Request['query']): RefineSettings {
  const num = (name: string, fallback: number, min: number, max: number) => {
    const raw = query[name];
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < min || n > max) throw validationError(`${name} must be a number from ${min} to ${max}.`, [{ field: name, message: 'out of range' }]);
    return n;
  };
  return {
    max_iterations: Math.round(num('max_iterations', REFINE_DEFAULTS.max_iterations, 1, 10)),
    patience: Math.round(num('patience', REFINE_DEFAULTS.patience, 1, 10)),
    min_improvement: num('min_improvement', REFINE_DEFAULTS.min_improvement, 0, 1),
    threshold: num('threshold', REFINE_DEFAULTS.threshold, 0, 1),
    ...(typeof query.refine_model === 'string' ? { model: query.refine_model } : {}),
  };
}

export async function proxyRefineChat(ctx: ProxyContext, req: Request, res: Response): Promise<void> {
  let opened;
  let settings: RefineSettings;
  try {
    settings = settingsOf(req.query);
    opened = await openExchange(ctx, req, 'chat/completions');
    if (!Array.isArray(opened.body.messages)) throw validationError('`messages` is required.', [{ field: 'messages', message: 'required' }]);
    if (opened.exchange.asyncJudge) throw validationError('Refining needs synchronous judging: leave out async_judge.', [{ field: 'async_judge', message: 'not with refine' }]);
  } catch (err) {
    return sendOpenAIError(res, err);
  }
  const { exchange: x, body } = opened;
  x.conversation = messagesToConversation(body.messages);
  const streamed = body.stream === true;
  const { stream: _s, stream_options: _o, ...rest } = body;
  const up = await forward(x, res, { ...rest, model: x.target.record.model }, 'chat.completions', streamed, abortOnClose(res));
  if (!up) return;
  let completion: Json;
  try {
    completion = JSON.parse((await readUpstream(up)).toString('utf8'));
  } catch (err) {
    return sendOpenAIError(res, new TribunalError('model_unavailable', 502, `The upstream answer could not be read: ${(err as Error).message}`));
  }
  const answer = completionAnswer(completion);
  const info = infoOf(x, 'chat.completions', streamed, up.status, 'answered');
  let tribunal: Json;
  if (answer.tool_calls?.length || !answer.content.trim()) {
    tribunal = await judgeExchange(ctx, { ...x, info, answer });
  } else {
    const proxy = { ...upstreamInfo(x.target, info, answer), flagged: false, blocked: false };
    const decorate = (record: ExecutionLogRecord): ExecutionLogRecord => ({ ...record, type: 'proxy', proxy });
    try {
      const input = {
        turns: [...x.conversation.turns, answerTurn(answer)],
        ...(x.conversation.system_prompt !== undefined ? { system_prompt: x.conversation.system_prompt } : {}),
      };
      const refined = await refineResponse(ctx, x.judge, input, settings, undefined, () => ({ decorate }));
      const choice = completion.choices?.[0];
      if (choice?.message) choice.message.content = refined.improved_response;
      tribunal = {
        execution_log_id: refined.execution_log_id,
        score: refined.score,
        evaluator_results: refined.evaluator_results,
        refine: {
          original_response: refined.original_response,
          original_score: refined.original_score,
          iterations: refined.iterations,
          stopped: refined.stopped,
          ...(refined.rewrite_error ? { rewrite_error: refined.rewrite_error } : {}),
        },
      };
    } catch (err) {
      // The application's answer is never lost: unrefined, with the reason.
      tribunal = { execution_log_id: null, score: null, evaluator_results: [], error: (err as Error).message };
    }
  }
  if (!streamed) {
    res.status(up.status).json({ ...completion, tribunal });
    return;
  }
  const choice = completion.choices?.[0] ?? {};
  const head = { id: completion.id, object: 'chat.completion.chunk', created: completion.created, model: completion.model };
  res.status(200).setHeader('content-type', 'text/event-stream; charset=utf-8');
  const message = choice.message ?? {};
  const toolCalls = Array.isArray(message.tool_calls) ? message.tool_calls.map((c: Json, index: number) => ({ index, ...c })) : undefined;
  res.write(
    sseEvent({
      ...head,
      choices: [{ index: 0, delta: { role: 'assistant', content: message.content ?? '', ...(toolCalls ? { tool_calls: toolCalls } : {}) }, finish_reason: null }],
    }),
  );
  res.write(sseEvent({ ...head, choices: [{ index: 0, delta: {}, finish_reason: choice.finish_reason ?? 'stop' }] }));
  res.write(sseEvent({ ...head, choices: [], tribunal }));
  res.end('data: [DONE]\n\n');
}
