// The frame every run is filed through, a scored run and a comparison alike: a log id and the time
// -> the attachments loaded (a 404 before anything runs) -> the use case scores -> one execution log
// written (also when evaluators failed) -> review queues fed (runs) -> the answer: the result, or,
// when every evaluator failed, the result marked `failed` (engine/outcome.ts; the doors answer
// model_unavailable).
import { performance } from 'node:perf_hooks';
import type { RequestContext } from '../context.ts';
import { resolveProjectId } from '../domain/projects.ts';
import { roundMs } from '../checks/result-base.ts';
import type { ModelAttachment } from '../engine/providers/model.ts';
import type { ModelErrorKind } from '../engine/providers/model-errors.ts';
import type { Outcome } from '../engine/outcome.ts';
import { failureStatus } from '../engine/structured-call.ts';
import { newId } from '../ids.ts';
import { log as processLog } from '../log.ts';
import { feedReviewQueues } from '../review/sources.ts'; // h-review
import type { EvaluatorRecord, ExecutionLogRecord, JudgeRecord } from '../store/types.ts';
import { loadAttachments } from './attachments.ts';
import { isoNow } from '../iso-time.ts';

/** Who ran: a judge or one evaluator, and the project the log is filed in. */
export type LogHeader = Pick<ExecutionLogRecord, 'judge_id' | 'judge_name' | 'judge_version' | 'evaluator_id' | 'evaluator_name' | 'evaluator_version' | 'project_id'>;

/** A judge's header. A public judge of another organization: the log is the caller's, filed in the caller's default project. */
export async function judgeHeader(ctx: RequestContext, judge: JudgeRecord): Promise<LogHeader> {
  const projectId = judge.org_id === ctx.caller.org.id ? judge.project_id : await resolveProjectId(ctx, undefined);
  return {
    judge_id: judge.id,
    judge_name: judge.name,
    judge_version: judge.version,
    evaluator_id: null,
    evaluator_name: null,
    evaluator_version: null,
    project_id: projectId,
  };
}

/** One evaluator's header, filed in the project named (else the caller's default). */
export async function evaluatorHeader(ctx: RequestContext, evaluator: EvaluatorRecord, projectId: string | undefined): Promise<LogHeader> {
  const project_id = await resolveProjectId(ctx, projectId);
  return {
    judge_id: null,
    judge_name: null,
    judge_version: null,
    evaluator_id: evaluator.id,
    evaluator_name: evaluator.name,
    evaluator_version: evaluator.version,
    project_id,
  };
}

/** The material a log keeps, as given (absent fields are null). */
export interface LogMaterial {
  request?: string;
  response: string;
  turns?: ExecutionLogRecord['turns'];
  system_prompt?: string;
  contexts?: string[];
  expected_output?: string;
}

/**
 * A log's first fields: the stamp's id and organization, who ran, and the material. One literal,
 * and the caller adds the rest in its order: on Node 20 (V8 11.3) a record made of spreads got a
 * map of its own for every log, so its JSON line and every later reader took the slow path.
 */
export const logOpening = (stamp: Pick<Stamp, 'id' | 'org_id'>, type: ExecutionLogRecord['type'], header: LogHeader, x: LogMaterial): ExecutionLogRecord =>
  ({
    id: stamp.id,
    org_id: stamp.org_id,
    type,
    judge_id: header.judge_id,
    judge_name: header.judge_name,
    judge_version: header.judge_version,
    evaluator_id: header.evaluator_id,
    evaluator_name: header.evaluator_name,
    evaluator_version: header.evaluator_version,
    project_id: header.project_id,
    request: x.request ?? null,
    response: x.response,
    turns: x.turns ?? null,
    system_prompt: x.system_prompt ?? null,
    contexts: x.contexts ?? null,
    expected_output: x.expected_output ?? null,
  }) as ExecutionLogRecord;

/** Adds who and what the run is about, for filtering logs. */
export function addLogLabels(record: ExecutionLogRecord, x: { user_id?: string; session_id?: string; tags?: string[] }): void {
  record.user_id = x.user_id ?? null;
  record.session_id = x.session_id ?? null;
  record.tags = x.tags ?? [];
}

/** What the frame stamps on the log. */
export interface Stamp {
  id: string;
  org_id: string;
  created_at: string;
  latency_ms: number;
}

type Answer = { execution_log_id: string; evaluator_results: Array<{ evaluator_name: string; error?: string }> };

/** What a use case scored: the failures, and how its log and its answer are made. */
export interface Framed<R extends Answer> {
  failures: ModelErrorKind[];
  record(stamp: Stamp): ExecutionLogRecord;
  answer(record: ExecutionLogRecord): R;
}

export interface FrameSpec<R extends Answer> {
  /** "judge <name>" or "evaluator <name>", for the message of a run in which every evaluator failed. */
  what: string;
  /** What such a run has none of, and what its log is called. */
  lacks: 'score' | 'preference';
  logged: 'run' | 'comparison';
  logId?: string;
  /** File ids to load before anything runs. */
  attachments?: readonly string[];
  /** Review queues whose sources match the log add it. */
  feedsReview: boolean;
  score(attached: ModelAttachment[] | undefined): Promise<Framed<R>>;
}

/** h-review: review queues whose sources match this run add it (never fails the run). */
const feed = (ctx: RequestContext, record: ExecutionLogRecord) =>
  feedReviewQueues(ctx.store, record).then(
    () => {},
    (err: Error) => processLog.error(`review queue sources: ${err.message}`),
  );

export async function runFrame<R extends Answer>(ctx: RequestContext, spec: FrameSpec<R>): Promise<Outcome<R>> {
  const id = spec.logId ?? newId('log');
  const created_at = isoNow();
  const started = performance.now();
  // h-attach: stored files by id (a 404 before anything runs).
  // Without files, no await for them (a run without attachments is the common one).
  const framed = await spec.score(spec.attachments?.length ? await loadAttachments(ctx, spec.attachments) : undefined);
  const record = framed.record({ id, org_id: ctx.caller.org.id, created_at, latency_ms: roundMs(performance.now() - started) });
  if (ctx.carryLog && ctx.store.appendExecutionLogCarried) {
    // An evaluation rule's run (issue 33): no fdatasync of its own, and the run goes on before its log is
    // on disk; the review queues are fed only after it is (an item never names a log a crash lost).
    const carried = ctx.store.appendExecutionLogCarried.bind(ctx.store, record);
    const written = ctx.spans ? ctx.spans.inSpan('store appendExecutionLog', { 'tribunal.execution_log_id': id }, carried) : carried();
    ctx.carryLog(spec.feedsReview ? written.then(() => feed(ctx, record)) : written);
  } else {
    // No named closure for the write: under tsx each is given its name by a defineProperty per run.
    await (ctx.spans
      ? ctx.spans.inSpan('store appendExecutionLog', { 'tribunal.execution_log_id': id }, () => ctx.store.appendExecutionLog(record))
      : ctx.store.appendExecutionLog(record));
    if (spec.feedsReview) await feed(ctx, record);
  }
  const result = framed.answer(record);
  const { failures } = framed;
  const results = result.evaluator_results;
  if (!results.length || failures.length < results.length) return result;
  // Every evaluator failed: logged, answered as a value that says so (outcome.ts).
  const reasons = results.map((r) => `${r.evaluator_name}: ${r.error}`).join(' | ');
  const message = `The judge model failed for every evaluator of ${spec.what}, so there is no ${spec.lacks} (the ${spec.logged} is logged as ${id}). ${reasons}`;
  return { ...result, failed: { status: failureStatus(failures), message } };
}
