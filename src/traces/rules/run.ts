// One unit of work, judged through the same path as POST /v1/judges/{id}/execute/ (the run_judge or
// run_evaluator tool, acting as the key that created the rule), its outcome counted, its result
// linked to the span (trace_evaluations) and, when an export endpoint is set, written back as OTLP.
import type { Caller } from '../../auth.ts';
import { TribunalError } from '../../errors.ts';
import { inToolSpan, toolInput, type Services } from '../../tool.ts';
import { tools } from '../../../tools/index.ts';
import { runEvaluatorOutcome } from '../../../tools/run_evaluator.ts';
import { runJudgeOutcome } from '../../../tools/run_judge.ts';
import type { SpanRecord, TraceStore } from '../types.ts';
import type { ExecutionResult } from '../../schemas.ts';
import { assemble } from './assemble.ts';
import { today } from './intake.ts';
import type { EvalJob, RuleRecord, RuleStore } from './types.ts';
import { writeBack } from './writeback.ts';
import { log } from '../../log.ts';
import { isoNow, isoOfMs } from '../../iso-time.ts';

/** What a rule judges with, as a link's name when the rule has none. */
const ruleTarget = (rule: RuleRecord) => (rule.judge_id ? `judge ${rule.judge_id}` : `evaluator ${rule.evaluator_id}`);

/**
 * The log of this unit's earlier run, if one is on disk and it scored (not every evaluator failed):
 * the rule's tag on a log of the unit's trace (and span, for span scope), as the link is matched.
 */
async function loggedRun(services: Services, rule: RuleRecord, job: EvalJob) {
  const filter = { org_id: job.org_id, trace_id: job.trace_id, tags: [`evaluation_rule:${rule.id}`], ...(job.scope === 'span' ? { span_id: job.span_id ?? undefined } : {}) };
  const { items } = await services.store.listExecutionLogs(filter, { limit: 20 });
  return items.find((l) => !l.evaluator_results.length || l.evaluator_results.some((r) => !r.error));
}

/**
 * A judged unit's last steps, once its run's log is on disk: the link, then the finish (the run's cost
 * counted on `day`, today unless given), then the write-back. A failure is the caller's to count.
 */
async function conclude(services: Services, rules: RuleStore, traces: TraceStore, job: EvalJob, rule: RuleRecord, span: SpanRecord, result: ExecutionResult, day?: string) {
  await traces.addEvaluation({
    org_id: job.org_id,
    trace_id: span.trace_id,
    span_id: span.span_id,
    rule_id: rule.id,
    execution_log_id: result.execution_log_id,
    name: rule.name || ruleTarget(rule),
    score: result.score,
    created_at: isoNow(),
  });
  await rules.finish(job.id, { done: 1, ...(result.cost_usd ? { [`day:${day ?? today()}:cost_usd`]: result.cost_usd } : {}) });
  if (services.config.traces.evalExportEndpoint)
    writeBack(services.config.traces.evalExportEndpoint, span, rule.name, result).catch((err) => log.warn('evaluation rules: write-back to the export endpoint failed', { err }));
}

/** How soon a unit waiting for its spans' content is looked at again (the worker's poll takes it then). */
const RECHECK_MS = 1000;

/**
 * `cached` is the rule as the worker holds it (read again within seconds of a change), saving a read per unit.
 * `settle`, when given, is handed the unit's last steps once it is judged (its link made durable, then
 * its finish) and runUnit resolves without waiting for them: the worker's slot is free for the next
 * unit while the link waits for its file's shared sync (json-traces.ts addEvaluation). Without it
 * runUnit waits for them.
 */
export async function runUnit(services: Services, rules: RuleStore, traces: TraceStore, job: EvalJob, cached?: RuleRecord, settle?: (rest: Promise<void>) => void): Promise<void> {
  const { store } = services;
  const rule = cached ?? (await rules.getRule(job.rule_id));
  if (!rule) return void (await rules.finish(job.id, {}));
  // Read together (each is a round trip on PostgreSQL); the unit's spans are only a read, used below
  // once the owner and the previous attempt are checked.
  const [org, key, unit] = await Promise.all([store.getOrganization(rule.org_id), store.getApiKey(rule.key_id), assemble(traces, rule, job, services.config.traces.contentWaitMs)]);
  if (!org || !key) return void (await rules.finish(job.id, { 'skipped:owner_gone': 1 }));
  const caller: Caller = { org, key };
  // A crash after the result was linked but before the unit left the queue: done already, not run twice.
  // Only a unit taken again (or read from disk at start) can have been linked already: others skip the read.
  if (rules.mayHaveRun(job)) {
    const linked = (await traces.listEvaluations(job.org_id, job.trace_id)).find((e) => e.rule_id === rule.id && (job.scope !== 'span' || e.span_id === job.span_id));
    if (linked) return void (await rules.finish(job.id, { done: 1 }));
    // A crash after the run's log was on disk but before its link was: the log is found and linked,
    // not judged again (a run whose evaluators all failed is tried again, as below).
    if (unit.ok) {
      const logged = await loggedRun(services, rule, job);
      if (logged) return conclude(services, rules, traces, job, rule, unit.span, { ...logged, execution_log_id: logged.id }, logged.created_at.slice(0, 10));
    }
  }

  // A GenAI span whose content (log records) may not have arrived yet: looked at again shortly, still queued.
  if (!unit.ok && unit.recheck) return void (await rules.postpone(job.id, isoOfMs(Date.now() + RECHECK_MS)));
  if (!unit.ok) return void (await rules.finish(job.id, { [`skipped:${unit.reason}`]: 1 }));
  // The tool's input, built field by field in the order it always had (the target, the extracted
  // conversation, the log fields): a conditional spread per optional field made a throwaway object
  // each, and the target was spread in again (issue 33).
  const x = unit.inputs;
  const input: Record<string, unknown> = rule.judge_id ? { judge_id: rule.judge_id } : { evaluator_id: rule.evaluator_id! };
  if (x.turns) input.turns = x.turns;
  else {
    input.response = x.response;
    if (x.request !== undefined) input.request = x.request;
  }
  if (x.system_prompt !== undefined) input.system_prompt = x.system_prompt;
  if (x.contexts?.length) input.contexts = x.contexts;
  if (job.session_id) input.session_id = job.session_id.slice(0, 200);
  // trace_id/span_id are log fields (filters, the link from the log page to the trace page).
  input.trace_id = unit.span.trace_id;
  input.span_id = unit.span.span_id;
  input.tags = [`evaluation_rule:${rule.id}`];
  // The run's execution log is carried (src/runs/frame.ts): written with the log file's next commit,
  // not one of its own; its durability is waited for below, before anything that names the log.
  const carried = new CarriedLog();
  try {
    // Object.assign, not { ...services, caller }: that form gets a map of its own per unit on Node 20.
    const ctx = Object.assign({ caller, carryLog: carried.carry }, services);
    // The tool's own run (its input checks, then the engine), read as a value (engine/outcome.ts).
    const result = rule.judge_id
      ? await inToolSpan(tools.runJudge, ctx, () => runJudgeOutcome(toolInput(tools.runJudge, input, ctx), ctx))
      : await inToolSpan(tools.runEvaluator, ctx, () => runEvaluatorOutcome(toolInput(tools.runEvaluator, input, ctx), ctx));
    const logWritten = carried.written;
    if (result.failed) {
      // Every evaluator failed (the run is logged, on disk before the unit may finish; a rare path,
      // so waited for in the slot): the model is unavailable; the unit stays and is
      // taken again after its lease, at most 3 attempts in all.
      await logWritten;
      if (job.attempts < 3) return void log.warn(`evaluation rules: unit ${job.id} will be tried again: ${result.failed.message}`);
      log.error(`evaluation rules: unit ${job.id} failed: ${result.failed.message}`);
      return void (await rules.finish(job.id, { failed: 1, 'failure:model_unavailable': 1 }));
    }
    // The order is the guarantee: the execution log is on disk (and the review queues it feeds are
    // fed), then the link is written, and once it is on disk the finish is handed to the queue. A
    // finish on disk thus always has its link on disk, and a link its log; a crash earlier leaves the
    // unit queued: after the restart its log, if on disk, is linked (loggedRun above), else it is
    // judged again. The write-back comes last too, so a unit taken again after a crash has not been
    // written back yet. None of it holds the worker's slot (`settle`).
    const rest = concludeOnceLogged(logWritten, services, rules, traces, job, rule, unit.span, result);
    if (settle) settle(rest);
    else await rest;
  } catch (err) {
    // A log carried before the throw: on disk (or failed) before the unit may finish.
    await carried.written?.catch(() => {});
    await failed(rules, job, err);
  }
}

/**
 * The unit's last steps once its log is on disk (the carried commit: up to CARRY_MS). Made here, not
 * as a closure inside runUnit: that one kept runUnit's whole scope alive while it waited (the tool's
 * input with the span's text, the run's context, the assembled unit), so each unit's objects outlived
 * the young generation's collections and were copied and promoted (issue 33). This keeps what
 * conclude reads.
 */
function concludeOnceLogged(
  logWritten: Promise<void> | undefined,
  services: Services,
  rules: RuleStore,
  traces: TraceStore,
  job: EvalJob,
  rule: RuleRecord,
  span: SpanRecord,
  result: ExecutionResult,
): Promise<void> {
  return Promise.resolve(logWritten)
    .then(() => conclude(services, rules, traces, job, rule, span, result))
    .catch((err) => failed(rules, job, err));
}

/**
 * The run's carried execution log (src/runs/frame.ts hands it over through ctx.carryLog). A class
 * with a bound method, not a named closure made per unit: tsx (esbuild keepNames) names every named
 * closure with a defineProperty call as it is made (issue 33: __name was runUnit's only caller in
 * the span bench's profile, 53 ms of 15 s with its defineProperty).
 */
class CarriedLog {
  written: Promise<void> | undefined;
  readonly carry: (written: Promise<void>) => void;

  constructor() {
    this.carry = this.take.bind(this);
  }

  private take(written: Promise<void>): void {
    // Its failure is read by runUnit; until then it is not an unhandled rejection.
    written.catch(noop);
    this.written = written;
  }
}

const noop = () => {};

/** A unit whose judging or linking threw: skipped, left for another attempt, or finished as failed. */
async function failed(rules: RuleStore, job: EvalJob, err: unknown): Promise<void> {
  const code = err instanceof TribunalError ? err.code : 'internal_error';
  if (code === 'not_found') return void (await rules.finish(job.id, { 'skipped:target_deleted': 1 }));
  if (err instanceof TribunalError && err.status >= 500 && job.attempts < 3) {
    // The model or the store is unavailable: the unit stays and is taken again after its lease.
    log.warn(`evaluation rules: unit ${job.id} will be tried again`, { err });
    return;
  }
  log.error(`evaluation rules: unit ${job.id} failed`, { err });
  await rules.finish(job.id, { failed: 1, [`failure:${code}`]: 1 });
}
