// Judging one proxied exchange through the same run as POST /v1/judges/{id}/execute/ (the engine's
// runJudge): the conversation with the answer as its judged turn, filed as an execution log of type
// "proxy" carrying the upstream call (model, tokens, cost) apart from the judging's. A judging
// failure never loses the exchange: the answer goes back with `tribunal.error`, and an exchange that
// could not be judged at all is still logged (evaluator_results empty, proxy.error saying why).
import { performance } from 'node:perf_hooks';
import type { RequestContext } from '../context.ts';
import { resolveProjectId } from '../domain/projects.ts';
import { costUsd } from '../engine/providers/cost.ts';
import { validationError } from '../errors.ts';
import { newId } from '../ids.ts';
import { log } from '../log.ts';
import type { EvaluatorResult } from '../schemas.ts';
import type { Guardrail, ProxyLogInfo } from '../schemas/proxy.ts';
import type { PreparedRun } from '../runs/types.ts';
import type { EvaluatorRecord, ExecutionLogRecord, JudgeRecord } from '../store/types.ts';
import type { Services } from '../tool.ts';
import { answerTurn, type Answer, type Conversation } from './exchange.ts';
import type { UpstreamTarget } from './upstream.ts';

export type ProxyContext = RequestContext & Pick<Services, 'engine'>;

export const DEFAULT_BLOCK_MESSAGE = "I'm sorry, but I can't provide that answer.";

/** What the answer carries: `{execution_log_id, score, evaluator_results}` and the guardrail's marks. */
export interface Tribunal {
  execution_log_id: string;
  score: number | null;
  evaluator_results: EvaluatorResult[];
  flagged?: boolean;
  blocked?: boolean;
  /** async_judge: the run is under way; read it later by execution_log_id. */
  pending?: boolean;
  error?: string;
}

/**
 * A judge whose evaluators need inputs a chat exchange cannot give (contexts, an expected output) is
 * refused before the upstream is called, with what to do instead.
 */
export function checkProxyable(judge: JudgeRecord, evaluators: EvaluatorRecord[]): void {
  // A plain loop: this runs on every proxied call, and nearly always finds nothing.
  const needs: string[] = [];
  for (const e of evaluators) {
    if (e.requires_contexts) needs.push(`${e.name} needs \`contexts\``);
    if (e.requires_expected_output) needs.push(`${e.name} needs \`expected_output\``);
  }
  if (!needs.length) return;
  throw validationError(
    `Judge ${judge.name} cannot judge a chat exchange inline: ${needs.join('; ')}, which a Chat Completions request does not carry. Use a judge without those evaluators, or call POST /v1/judges/${judge.id}/execute/ with them.`,
    [{ field: 'judge_id', message: 'the judge needs contexts or expected_output' }],
  );
}

/** The upstream side of the log, known before judging. */
export type ExchangeInfo = Omit<ProxyLogInfo, 'flagged' | 'blocked' | 'cost_usd' | 'input_tokens' | 'output_tokens' | 'upstream_model' | 'finish_reason'>;

export function upstreamInfo(target: UpstreamTarget, info: ExchangeInfo, answer: Answer | null): Omit<ProxyLogInfo, 'flagged' | 'blocked'> {
  const { record } = target;
  const usage = answer && answer.input_tokens !== null && answer.output_tokens !== null ? answer : null;
  return {
    ...info,
    upstream_model: answer?.model ?? null,
    finish_reason: answer?.finish_reason ?? null,
    input_tokens: answer?.input_tokens ?? null,
    output_tokens: answer?.output_tokens ?? null,
    cost_usd: usage
      ? costUsd(
          record.model,
          { input_tokens: usage.input_tokens!, output_tokens: usage.output_tokens!, cache_read_tokens: usage.cached_tokens },
          record.price ? { [record.model]: record.price } : {},
          'openai',
        )
      : null,
  };
}

export const belowGuardrail = (guardrail: Guardrail | null | undefined, score: number | null) => Boolean(guardrail && score !== null && score < guardrail.threshold);

export interface JudgeExchange {
  judge: JudgeRecord;
  conversation: Conversation;
  answer: Answer;
  target: UpstreamTarget;
  info: ExchangeInfo;
  /** The log's id, fixed in advance (async judging answers with it before the run). */
  logId: string;
  userId?: string;
  /** The judge's evaluators and models, loaded once for the exchange (judge-check.ts's JudgePrep); null: the run loads them. */
  prep?: { prepared(): Promise<PreparedRun | null> };
}

/** Judges the exchange; never throws: a failure is `tribunal.error`, the exchange logged all the same. */
export async function judgeExchange(ctx: ProxyContext, x: JudgeExchange): Promise<Tribunal> {
  const guardrail = x.judge.guardrail;
  const proxy = upstreamInfo(x.target, x.info, x.answer);
  const input = {
    turns: [...x.conversation.turns, answerTurn(x.answer)],
    ...(x.conversation.system_prompt !== undefined ? { system_prompt: x.conversation.system_prompt } : {}),
    ...(x.userId ? { user_id: x.userId.slice(0, 200) } : {}),
    ...(x.conversation.attached ? { attached: x.conversation.attached } : {}),
  };
  // The run's record is its own, built for this call (runs/execute.ts): it is given its proxy side
  // in place (same fields, same order) rather than copied field by field into a new one.
  const decorate = (record: ExecutionLogRecord): ExecutionLogRecord => {
    const below = belowGuardrail(guardrail, record.score);
    record.type = 'proxy';
    record.proxy = { ...proxy, flagged: below, blocked: below && guardrail?.action === 'block' && !x.info.async_judge };
    return record;
  };
  try {
    const prepared = x.prep ? await x.prep.prepared() : null;
    const result = await ctx.engine.runJudge(ctx, x.judge, input, { log_id: x.logId, decorate, ...(prepared ? { prepared } : {}) });
    // Every evaluator failed: the run is logged already (as type proxy), without a score.
    if (result.failed) return { execution_log_id: result.execution_log_id, score: null, evaluator_results: result.evaluator_results, error: result.failed.message };
    const below = belowGuardrail(guardrail, result.score);
    return {
      execution_log_id: result.execution_log_id,
      score: result.score,
      evaluator_results: result.evaluator_results,
      ...(guardrail ? { flagged: below, blocked: below && guardrail.action === 'block' } : {}),
    };
  } catch (err) {
    // Refused before any model call (or the store failed): the exchange is logged unjudged.
    const message = err instanceof Error ? err.message : String(err);
    await logUnjudged(ctx, { ...x, answer: x.answer }, `not judged: ${message}`).catch((err) =>
      log.error('judge proxy: the exchange could not be logged', { err, execution_log_id: x.logId }),
    );
    return { execution_log_id: x.logId, score: null, evaluator_results: [], error: message };
  }
}

/** Logs an exchange without judging it (the upstream failed, the client left, the run was refused). */
export async function logUnjudged(ctx: ProxyContext, x: Omit<JudgeExchange, 'answer'> & { answer: Answer | null }, error: string): Promise<void> {
  const started = performance.now();
  const projectId = x.judge.org_id === ctx.caller.org.id ? x.judge.project_id : await resolveProjectId(ctx, undefined);
  const turns = x.answer ? [...x.conversation.turns, answerTurn(x.answer)] : x.conversation.turns;
  const record: ExecutionLogRecord = {
    id: x.logId,
    org_id: ctx.caller.org.id,
    type: 'proxy',
    judge_id: x.judge.id,
    judge_name: x.judge.name,
    judge_version: x.judge.version,
    evaluator_id: null,
    evaluator_name: null,
    evaluator_version: null,
    project_id: projectId,
    request: null,
    response: x.answer?.content ?? '',
    turns,
    system_prompt: x.conversation.system_prompt ?? null,
    contexts: null,
    expected_output: null,
    user_id: x.userId?.slice(0, 200) ?? null,
    session_id: null,
    tags: [],
    evaluator_results: [],
    score: null,
    cost_usd: 0,
    latency_ms: Math.round((performance.now() - started) * 10) / 10,
    created_at: new Date().toISOString(),
    proxy: { ...upstreamInfo(x.target, x.info, x.answer), flagged: false, blocked: false, error },
  };
  await ctx.store.appendExecutionLog(record);
}

export const newLogId = () => newId('log');
