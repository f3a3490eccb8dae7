// A run: a judge's or one evaluator's evaluators score one response, and one execution log is
// written. Order: load the exact evaluator versions -> refuse missing inputs (no model call) ->
// (the frame, frame.ts: attachments) -> resolve the models only when a kind of the run uses one
// (a degenerate response scores 0 everywhere without the model; check and code evaluators need none)
// and refuse when the server's model is needed and not configured -> the engine scores every
// evaluator concurrently -> the log -> the answer. The run's score: engine/scoring.ts's runScore.
import type { RequestContext } from '../context.ts';
import { prepareRunInput, type RunInput } from '../conversation/validate.ts';
import { loadJudgeEvaluators } from '../domain/judges.ts';
import { withConfidence } from '../engine/confidence.ts';
import type { Engine } from '../engine/engine.ts';
import type { Outcome } from '../engine/outcome.ts';
import type { ModelAttachment } from '../engine/providers/model.ts';
import type { ModelErrorKind } from '../engine/providers/model-errors.ts';
import { sumCosts } from '../engine/providers/cost.ts';
import { runScore } from '../engine/scoring.ts';
import type { ScoringTarget } from '../engine/target.ts';
import type { ExecutionInput, ExecutionResult } from '../schemas.ts';
import type { EvaluatorRecord, ExecutionLogRecord, JudgeRecord } from '../store/types.ts';
import { checkAttachmentTargets } from './attachments.ts';
import { addLogLabels, evaluatorHeader, type Framed, type FrameSpec, judgeHeader, logOpening, runFrame, type LogHeader, type Stamp } from './frame.ts';
import { checkRequiredInputs } from './inputs.ts';
import type { Targets } from './targets.ts';
import type { RunOptions } from './types.ts';

/** What the runs are made of: the pure engine, and the models it scores with. */
export interface RunParts {
  engine: Engine;
  targets: Targets;
}

const NO_TARGETS: ReadonlyMap<string, ScoringTarget> = new Map();

/** The models of a run: resolved (or prepared), the server's checked, retargeted for a provider batch, checked against the attachments. */
async function targetsOf(parts: RunParts, ctx: RequestContext, evaluators: EvaluatorRecord[], input: RunInput, options: RunOptions) {
  const found = (options.prepared?.targets as Map<string, ScoringTarget> | undefined) ?? (await parts.targets.resolve(ctx, evaluators));
  parts.targets.requireModels(found);
  // Issue 32: a provider_batch row's calls go through the provider's batch API (batch/provider-model.ts).
  const targets = options.retarget ? new Map([...found].map(([k, t]) => [k, options.retarget!(t)])) : found;
  checkAttachmentTargets(evaluators, found, input.attached);
  return targets;
}

function execute(
  parts: RunParts,
  ctx: RequestContext,
  evaluators: EvaluatorRecord[],
  given: RunInput,
  type: ExecutionLogRecord['type'],
  header: LogHeader,
  what: string,
  options: RunOptions,
): Promise<Outcome<ExecutionResult>> {
  return runFrame<ExecutionResult>(ctx, new ScoredRun(parts, ctx, evaluators, given, type, header, what, options));
}

/**
 * A scored run as the frame takes it: its spec (score) and, once scored, what it made (record,
 * answer). One object of a class, not a spec and a result of closures made per run: under tsx
 * (esbuild keepNames) each named closure is also given its name by a defineProperty per run.
 */
class ScoredRun implements FrameSpec<ExecutionResult>, Framed<ExecutionResult> {
  readonly lacks = 'score';
  readonly logged = 'run';
  readonly feedsReview = true;
  readonly logId: string | undefined;
  readonly attachments: readonly string[] | undefined;
  failures: ModelErrorKind[] = [];
  private input: RunInput;
  private results: ExecutionResult['evaluator_results'] = [];

  constructor(
    private readonly parts: RunParts,
    private readonly ctx: RequestContext,
    private readonly evaluators: EvaluatorRecord[],
    given: RunInput,
    private readonly type: ExecutionLogRecord['type'],
    private readonly header: LogHeader,
    readonly what: string,
    private readonly options: RunOptions,
  ) {
    this.input = given;
    this.logId = options.log_id;
    this.attachments = given.attachments;
  }

  async score(loaded: ModelAttachment[] | undefined): Promise<Framed<ExecutionResult>> {
    const { parts, ctx, evaluators, options } = this;
    const given = this.input;
    // Stored files after any the door gave inline (the proxy's data URLs).
    // Object.assign, and only when files were loaded: a spread then a field gets a map of its own
    // every time on Node 20 (V8 11.3), and every reader of the input would see a new shape.
    const input: RunInput = loaded?.length ? Object.assign({}, given, { attached: given.attached?.length ? [...given.attached, ...loaded] : loaded }) : given;
    this.input = input;
    const subjects = parts.engine.scoreSubjects(evaluators, input);
    const targets = parts.engine.needsModel(subjects) ? await targetsOf(parts, ctx, evaluators, input, options) : NO_TARGETS;
    const cache = { store: ctx.store, orgId: ctx.caller.org.id, maxEntries: ctx.config.model.resultCacheMax };
    const scored = await parts.engine.score({ ctx, orgId: ctx.caller.org.id, targets, cache }, subjects);
    const results: ExecutionResult['evaluator_results'] = [];
    for (const s of scored) {
      results.push(withConfidence(s.result)); // confidence: room surface (confidence.ts)
      if (s.failure) this.failures.push(s.failure);
    }
    this.results = results;
    return this;
  }

  record(stamp: Stamp): ExecutionLogRecord {
    const { input, results, options } = this;
    // Field by field, in the order logs have always been written (the JSON line keeps it);
    // fields given only when set are added in place (frame.ts, logOpening).
    const built = logOpening(stamp, this.type, this.header, input);
    if (input.attachments?.length) built.attachments = input.attachments;
    addLogLabels(built, input);
    // Only when given, so the logs of ordinary runs stay as they were written before (issue 28).
    if (input.trace_id) built.trace_id = input.trace_id;
    if (input.span_id) built.span_id = input.span_id;
    built.evaluator_results = results;
    built.score = runScore(results);
    built.cost_usd = sumCosts(results.map((r) => r.cost_usd));
    built.latency_ms = stamp.latency_ms;
    if (options.batch_execution_id) built.batch_execution_id = options.batch_execution_id;
    built.created_at = stamp.created_at;
    return options.decorate ? options.decorate(built) : built; // h-proxy
  }

  answer(record: ExecutionLogRecord): ExecutionResult {
    return {
      execution_log_id: record.id,
      evaluator_results: this.results,
      score: record.score,
      cost_usd: record.cost_usd,
      latency_ms: record.latency_ms,
    };
  }
}

export async function runJudge(parts: RunParts, ctx: RequestContext, judge: JudgeRecord, given: ExecutionInput, options: RunOptions = {}): Promise<Outcome<ExecutionResult>> {
  const evaluators = options.prepared?.evaluators ?? (await loadJudgeEvaluators(ctx, judge));
  const input = prepareRunInput(given, evaluators, ctx.config.limits);
  checkRequiredInputs(evaluators, input);
  const header = await judgeHeader(ctx, judge);
  return execute(parts, ctx, evaluators, input, 'judge', header, `judge ${judge.name}`, options);
}

export async function runEvaluator(
  parts: RunParts,
  ctx: RequestContext,
  evaluator: EvaluatorRecord,
  input: ExecutionInput & { project_id?: string },
  options: RunOptions = {},
): Promise<Outcome<ExecutionResult>> {
  const { project_id, ...given } = input;
  const inputs = prepareRunInput(given, [evaluator], ctx.config.limits);
  checkRequiredInputs([evaluator], inputs);
  const header = await evaluatorHeader(ctx, evaluator, project_id);
  return execute(parts, ctx, [evaluator], inputs, 'evaluator', header, `evaluator ${evaluator.name}`, options);
}
