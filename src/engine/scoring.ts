// The scoring engine: runs evaluators on the judge model and writes one execution log per run.
// Order of a run: load the exact evaluator versions -> refuse missing inputs (no model call) ->
// a degenerate response scores 0 everywhere without the model (degenerate.ts) -> refuse when no
// model is configured -> score every evaluator concurrently (the server-wide limit in the model
// queues the excess) -> write the log (also when evaluators failed) -> answer: the result, or, when
// every evaluator failed, the result marked `failed` (outcome.ts; the doors answer model_unavailable). The run's score: runScore below (docs/SCORING.md).
import { performance } from 'node:perf_hooks';
import type { RequestContext } from '../context.ts';
import { loadJudgeEvaluators } from '../domain/judges.ts';
import { resolveProjectId } from '../domain/projects.ts';
import { TribunalError, type FieldError } from '../errors.ts';
import { newId } from '../ids.ts';
import { hasRequestMaterial, prepareRunInput, type RunInput } from '../conversation/validate.ts';
import type { EvaluatorResult, ExecutionInput, ExecutionResult } from '../schemas.ts';
import type { EvaluatorRecord, ExecutionLogRecord, JudgeRecord } from '../store/types.ts';
import { NOT_CONFIGURED_MESSAGE } from './providers/anthropic-model.ts';
import { parseAnswer } from './answer.ts';
import { costUsd, sumCosts, type PriceTable, type PricedProvider } from './providers/cost.ts';
import { checkBaseUrl, modelApiKey, registeredModelNamed } from '../domain/models.ts';
import { RegisteredModelPool, strategyFor } from './providers/index.ts';
import type { ModelCallObserver } from './providers/resilient-model.ts';
import type { AnswerStrategy } from './providers/json-answer.ts';
import type { JudgeModel } from './providers/model.ts';
import { ModelCallError, type ModelErrorKind } from './providers/model-errors.ts';
import { buildPrompt, SCORE_TOOL } from './prompt.ts';
import { versionNonce } from '../conversation/fence.ts';
import { withResultCache, type ResultSettings } from './result-cache.ts';
import { degenerateReason } from './degenerate.ts';
import { callStructured, failureStatus, gaveUp } from './structured-call.ts';
import { scoreJury } from './jury.ts';
import { callLogprobs } from './logprobs.ts';
import type { ModelCapabilities } from '../schemas.ts';
import type { PreparedRun, RunOptions } from './types.ts';
import type { Outcome } from './outcome.ts';
import { scoresWithoutModel, scoreWithoutModel } from '../checks/score.ts'; // h-checks
import { feedReviewQueues } from '../review/sources.ts'; // h-review
import { log as processLog } from '../log.ts';
import { confidenceOf, withConfidence } from './confidence.ts';
import { resultBase, roundMs } from '../checks/result-base.ts';
import { attachmentNote, checkAttachmentTargets, loadAttachments } from './attachments.ts';

/** A malformed or out-of-range answer is asked again at most this many times. */
export const MALFORMED_RETRIES = 2;

/** Which model scores an evaluator: the server's own, or a model the caller's organization registered. */
export interface ScoringTarget {
  model: JudgeModel;
  /** The model id sent to the provider. */
  modelName: string;
  prices: PriceTable;
  strategy?: AnswerStrategy;
  temperature?: number;
  /** A registered model's verified capabilities (logprobs scoring picks its answer format from them). */
  capabilities?: ModelCapabilities | null;
  /** Whose cache rates price cached prompt tokens (cost.ts); default anthropic. */
  provider?: PricedProvider;
  /** Changes when the model behind the name does: part of the result-cache key. */
  identity?: string;
  /** Whether the model takes images and documents (attachments.ts has the rule). */
  attachments?: boolean;
}

/** The settings a call of this evaluator asks for (the temperature actually sent is recorded after the call). */
const requestedSettings = (ctx: Pick<RequestContext, 'config'>, target?: ScoringTarget): ResultSettings => ({
  temperature: target?.temperature ?? 0,
  max_tokens: ctx.config.model.maxTokens,
  strategy: target?.strategy ?? 'tool',
});

interface Scored {
  result: EvaluatorResult;
  /** Why it failed, when it did. */
  failure?: ModelErrorKind;
}

const FIELD_HINTS = {
  request: 'pass the input that prompted the response as `request` (or a conversation as `turns`)',
  turns: 'pass the conversation as `turns`, a list of {role, content} turns ending with the assistant turn to judge',
  contexts: 'pass the retrieved snippets the response should be grounded in, as `contexts` (a list of strings)',
  expected_output: 'pass the reference answer as `expected_output`',
} as const;

/** Every missing input of every evaluator at once, before anything is spent. */
export function checkRequiredInputs(evaluators: EvaluatorRecord[], input: RunInput): void {
  const missing: Array<{ evaluator: EvaluatorRecord; field: keyof typeof FIELD_HINTS }> = [];
  const hasContexts = (input.contexts ?? []).some((c) => c.trim() !== '');
  const hasExpected = input.expected_output !== undefined && input.expected_output.trim() !== '';
  const hasRequest = hasRequestMaterial(input);
  for (const evaluator of evaluators) {
    if (evaluator.requires_turns && !input.turns) missing.push({ evaluator, field: 'turns' });
    else if (evaluator.requires_request && !hasRequest) missing.push({ evaluator, field: 'request' });
    if (evaluator.requires_contexts && !hasContexts) missing.push({ evaluator, field: 'contexts' });
    if (evaluator.requires_expected_output && !hasExpected) missing.push({ evaluator, field: 'expected_output' });
  }
  if (!missing.length) return;
  const detail = missing.map((m) => `evaluator ${m.evaluator.name} needs \`${m.field}\`: ${FIELD_HINTS[m.field]}`).join('; ');
  const errors: FieldError[] = missing.map((m) => ({ field: m.field, message: `required by evaluator ${m.evaluator.name} (${m.evaluator.id})` }));
  throw new TribunalError('missing_field', 400, `Missing input, nothing was run: ${detail}.`, { errors });
}

export function requireModel(model: JudgeModel): void {
  if (!model.configured) throw new TribunalError('model_unavailable', 503, NOT_CONFIGURED_MESSAGE, { reason: 'model_not_configured' });
}

const round4 = (x: number) => Math.round(x * 10_000) / 10_000;

/**
 * The run's score: the mean of the applicable scores (failed and not-applicable results have score
 * null and are left out), capped at the lowest critical score; null when no evaluator gave a score.
 */
export function runScore(results: Array<Pick<EvaluatorResult, 'score' | 'critical'>>): number | null {
  const scores = results.flatMap((r) => (r.score === null ? [] : [r.score]));
  if (!scores.length) return null;
  const mean = scores.reduce((a, b) => a + b, 0) / scores.length;
  const critical = results.flatMap((r) => (r.critical && r.score !== null ? [r.score] : []));
  return round4(Math.min(mean, ...critical));
}
/** Degenerate detection looks at the judged text; a judged turn that calls tools has something to judge. */
function degenerateInput(input: RunInput): string | null {
  if (input.turns && input.judged_turn !== undefined && input.turns[input.judged_turn].tool_calls?.length) return null;
  return degenerateReason(input.response);
}
/** Stands in for a model name that is neither registered in the caller's organization nor allowed. */
const unknownModel = (name: string): JudgeModel => ({
  configured: true,
  call: async () => {
    throw new ModelCallError(
      'rejected',
      `The evaluator's model ${JSON.stringify(name)} is neither registered in your organization (GET /v1/models/) nor allowed on this server; register it or set the evaluator's model to another.`,
    );
  },
});
const sumCost = (rs: EvaluatorResult[]) => sumCosts(rs.map((r) => r.cost_usd));

/** Scoring; pairwise.ts's ComparingEngine adds comparison on top and is the ScoringEngine the server uses. */
export class Engine {
  private readonly registered: RegisteredModelPool;

  constructor(
    readonly model: JudgeModel,
    observer?: ModelCallObserver,
  ) {
    this.registered = new RegisteredModelPool(observer);
  }

  /**
   * The model each evaluator scores with: a registered model of the caller's organization when its
   * `model` names one (another organization's models are never found), else the server's model.
   */
  protected async targets(ctx: RequestContext, evaluators: EvaluatorRecord[]): Promise<Map<string, ScoringTarget>> {
    const targets = new Map<string, ScoringTarget>();
    // A jury's every juror is a target of its own (jury.ts).
    // Check and code evaluators (h-checks) need no model.
    for (const name of new Set(evaluators.filter((e) => !scoresWithoutModel(e)).flatMap((e) => (e.models?.length ? e.models : [e.model ?? ''])))) {
      const record = name ? await registeredModelNamed(ctx, name) : null;
      if (!record) {
        // A registered model deleted since (or another organization's): a clear error, not a call to the server's provider.
        const known = !name || ctx.config.model.allowed.includes(name);
        const modelName = name || ctx.config.model.name;
        targets.set(name, {
          model: known ? this.model : unknownModel(name),
          modelName,
          prices: ctx.config.model.prices,
          temperature: 0,
          provider: 'anthropic',
          identity: `server:${modelName}`,
          // An unknown model fails with its own clear error; attachments are not what to report then.
          attachments: known ? ctx.config.model.attachments : true,
        });
        continue;
      }
      // TRIBUNAL_MODEL_HOSTS may have narrowed since the model was registered.
      checkBaseUrl(ctx, record.base_url, record.provider);
      targets.set(name, {
        model: this.registered.judgeModel(ctx.config, record, modelApiKey(ctx, record)),
        modelName: record.model,
        // No price given: the cost is unknown (null), never a silent 0.
        prices: record.price ? { [record.model]: record.price } : {},
        strategy: strategyFor(record.capabilities),
        temperature: 0,
        capabilities: record.capabilities,
        provider: record.provider,
        identity: `${record.id}@${record.updated_at}`,
        attachments: record.supports_attachments === true,
      });
    }
    return targets;
  }

  async prepare(ctx: RequestContext, subject: { judge: JudgeRecord } | { evaluator: EvaluatorRecord }): Promise<PreparedRun> {
    const evaluators = 'judge' in subject ? await loadJudgeEvaluators(ctx, subject.judge) : [subject.evaluator];
    return { evaluators, targets: await this.targets(ctx, evaluators) };
  }

  async assertCanScore(ctx: RequestContext, evaluators: EvaluatorRecord[]): Promise<void> {
    const targets = await this.targets(ctx, evaluators);
    if ([...targets.values()].some((t) => t.model === this.model)) requireModel(this.model);
  }

  /** Scores one evaluator; never throws: a failure becomes score null with an error. */
  async scoreEvaluator(ctx: Pick<RequestContext, 'config'>, evaluator: EvaluatorRecord, input: RunInput, target?: ScoringTarget): Promise<Scored> {
    const started = performance.now();
    const requested = target?.modelName ?? evaluator.model ?? ctx.config.model.name;
    const settings = requestedSettings(ctx, target);
    // The nonce of this evaluator version: the system prompt (the static part) is the same bytes on
    // every call, so the provider's prompt cache applies. The problems of a malformed answer are not fed back.
    const built = buildPrompt(evaluator, input, versionNonce(ctx.config.registry.secretKey, evaluator.id, evaluator.version));
    const { system } = built;
    const prompt = built.prompt + attachmentNote(input.attached, built.nonce); // h-attach
    const spec = {
      attempts: MALFORMED_RETRIES + 1,
      request: () => ({
        model: requested,
        system,
        prompt,
        tool: SCORE_TOOL,
        maxTokens: settings.max_tokens,
        strategy: target?.strategy,
        temperature: settings.temperature ?? undefined,
        cacheSystem: true,
        attachments: input.attached,
      }),
      check: parseAnswer,
    };
    const model = target?.model ?? this.model;
    // scoring "logprobs": the weighted mean grade (logprobs.ts), never a silent fallback to direct.
    const outcome = evaluator.scoring === 'logprobs' ? await callLogprobs(model, spec, target?.capabilities) : await callStructured(model, spec);
    const { usage } = outcome;
    const result: EvaluatorResult = {
      ...resultBase(evaluator, null, null),
      model: outcome.model ?? requested,
      input_tokens: usage.input_tokens,
      output_tokens: usage.output_tokens,
      // Priced by the model asked for: the API may answer with a dated name of the same model.
      cost_usd: costUsd(requested, usage, target?.prices ?? ctx.config.model.prices, target?.provider),
      latency_ms: 0,
      cache_read_tokens: usage.cache_read_tokens,
      cache_write_tokens: usage.cache_write_tokens,
      settings: { ...settings, temperature: usage.temperature !== undefined ? usage.temperature : settings.temperature },
    };
    const done = (fields: Partial<EvaluatorResult>, failure?: ModelErrorKind): Scored => ({
      result: { ...result, ...fields, latency_ms: roundMs(performance.now() - started) },
      failure,
    });
    if (outcome.ok) {
      // The stated confidence counts only when nothing better measures it (confidence.ts).
      const { confidence: stated, ...verdict } = outcome.value as typeof outcome.value & { confidence?: number | null };
      return done({ ...verdict, confidence: confidenceOf({ ...result, ...verdict }, stated ?? null) });
    }
    const { failure } = outcome;
    if (failure.kind === 'malformed') {
      return done({ error: `No valid answer from the judge model in ${MALFORMED_RETRIES + 1} attempts; the last: ${failure.message}` }, 'malformed');
    }
    return done({ error: `${failure.message}${gaveUp(failure)}` }, failure.kind);
  }

  /** A degenerate response: 0 from every evaluator, no model call (degenerate.ts). */
  private degenerateResult(evaluator: EvaluatorRecord, reason: string): Scored {
    return {
      result: {
        ...resultBase(evaluator, 0, reason),
        degenerate: true,
        model: null,
        input_tokens: 0,
        output_tokens: 0,
        cost_usd: 0,
        latency_ms: 0,
      },
    };
  }

  private async run(
    ctx: RequestContext,
    evaluators: EvaluatorRecord[],
    input: RunInput,
    log: Pick<ExecutionLogRecord, 'type' | 'judge_id' | 'judge_name' | 'judge_version' | 'evaluator_id' | 'evaluator_name' | 'evaluator_version' | 'project_id'>,
    what: string,
    options: RunOptions = {},
  ): Promise<Outcome<ExecutionResult>> {
    const id = options.log_id ?? newId('log');
    const created_at = new Date().toISOString();
    const started = performance.now();
    // h-attach: stored files by id (a 404 before anything runs), after any the door gave inline (the proxy's data URLs).
    const loaded = await loadAttachments(ctx, input.attachments);
    input = { ...input, attached: input.attached?.length ? [...input.attached, ...(loaded ?? [])] : loaded };
    const degenerate = degenerateInput(input);
    let scored: Scored[];
    if (degenerate) scored = evaluators.map((e) => this.degenerateResult(e, degenerate));
    else {
      const found = (options.prepared?.targets as Map<string, ScoringTarget> | undefined) ?? (await this.targets(ctx, evaluators));
      if ([...found.values()].some((t) => t.model === this.model)) requireModel(this.model);
      // Issue 32: a provider_batch row's calls go through the provider's batch API (batch/provider-model.ts).
      const targets = options.retarget ? new Map([...found].map(([k, t]) => [k, options.retarget!(t)])) : found;
      checkAttachmentTargets(evaluators, found, input.attached);
      const score = (e: EvaluatorRecord, target?: ScoringTarget) => () => this.scoreEvaluator(ctx, e, input, target);
      const cache = { store: ctx.store, orgId: ctx.caller.org.id, maxEntries: ctx.config.model.resultCacheMax };
      scored = await Promise.all(
        evaluators.map((e) => {
          // h-checks: a check or code evaluator: no model call, no cache (it is cheaper than a lookup).
          if (scoresWithoutModel(e)) return scoreWithoutModel(ctx.config, ctx.caller.org.id, e, input).then((result): Scored => ({ result }));
          const target = targets.get(e.model ?? '');
          // A jury scores with each of its models (jury.ts); every juror's model is part of the cache key.
          const jurors = e.models?.length ? e.models : null;
          const run = jurors ? () => scoreJury(e, (name) => this.scoreEvaluator(ctx, e, input, targets.get(name))) : score(e, target);
          if (!input.use_cache) return run();
          const models = jurors ? jurors.map((name) => targets.get(name)?.identity ?? name) : [target?.identity ?? ''];
          // use_cache: an identical earlier result of this organization, without a model call (result-cache.ts).
          return withResultCache(cache, { evaluator: e, input, models, settings: requestedSettings(ctx, target) }, e, run) as Promise<Scored>;
        }),
      );
    }
    const results = scored.map((s) => withConfidence(s.result)); // confidence: room surface (confidence.ts)
    const built: ExecutionLogRecord = {
      id,
      org_id: ctx.caller.org.id,
      ...log,
      request: input.request ?? null,
      response: input.response,
      turns: input.turns ?? null,
      system_prompt: input.system_prompt ?? null,
      contexts: input.contexts ?? null,
      expected_output: input.expected_output ?? null,
      ...(input.attachments?.length ? { attachments: input.attachments } : {}),
      user_id: input.user_id ?? null,
      session_id: input.session_id ?? null,
      tags: input.tags ?? [],
      // Only when given, so the logs of ordinary runs stay as they were written before (issue 28).
      ...(input.trace_id ? { trace_id: input.trace_id } : {}),
      ...(input.span_id ? { span_id: input.span_id } : {}),
      evaluator_results: results,
      score: runScore(results),
      cost_usd: sumCost(results),
      latency_ms: roundMs(performance.now() - started),
      ...(options.batch_execution_id ? { batch_execution_id: options.batch_execution_id } : {}),
      created_at,
    };
    const record = options.decorate ? options.decorate(built) : built; // h-proxy
    const write = () => ctx.store.appendExecutionLog(record);
    await (ctx.spans ? ctx.spans.inSpan('store appendExecutionLog', { 'tribunal.execution_log_id': id }, write) : write());
    // h-review: review queues whose sources match this run add it (never fails the run).
    await feedReviewQueues(ctx.store, record).catch((err: Error) => processLog.error(`review queue sources: ${err.message}`));
    const result = { execution_log_id: id, evaluator_results: results, score: record.score, cost_usd: record.cost_usd, latency_ms: record.latency_ms };
    const failures = scored.filter((s) => s.failure);
    if (!results.length || failures.length < results.length) return result;
    // Every evaluator failed: logged, answered as a value that says so (outcome.ts).
    const reasons = results.map((r) => `${r.evaluator_name}: ${r.error}`).join(' | ');
    const message = `The judge model failed for every evaluator of ${what}, so there is no score (the run is logged as ${id}). ${reasons}`;
    return { ...result, failed: { status: failureStatus(failures.map((f) => f.failure!)), message } };
  }

  async runJudge(ctx: RequestContext, judge: JudgeRecord, given: ExecutionInput, options?: RunOptions): Promise<Outcome<ExecutionResult>> {
    const evaluators = options?.prepared?.evaluators ?? (await loadJudgeEvaluators(ctx, judge));
    const input = prepareRunInput(given, evaluators, ctx.config.limits);
    checkRequiredInputs(evaluators, input);
    // A public judge of another organization: the log is the caller's, filed in the caller's default project.
    const projectId = judge.org_id === ctx.caller.org.id ? judge.project_id : await resolveProjectId(ctx, undefined);
    return this.run(
      ctx,
      evaluators,
      input,
      {
        type: 'judge',
        judge_id: judge.id,
        judge_name: judge.name,
        judge_version: judge.version,
        evaluator_id: null,
        evaluator_name: null,
        evaluator_version: null,
        project_id: projectId,
      },
      `judge ${judge.name}`,
      options,
    );
  }

  async runEvaluator(ctx: RequestContext, evaluator: EvaluatorRecord, input: ExecutionInput & { project_id?: string }, options?: RunOptions): Promise<Outcome<ExecutionResult>> {
    const { project_id, ...given } = input;
    const inputs = prepareRunInput(given, [evaluator], ctx.config.limits);
    checkRequiredInputs([evaluator], inputs);
    const projectId = await resolveProjectId(ctx, project_id);
    return this.run(
      ctx,
      [evaluator],
      inputs,
      {
        type: 'evaluator',
        judge_id: null,
        judge_name: null,
        judge_version: null,
        evaluator_id: evaluator.id,
        evaluator_name: evaluator.name,
        evaluator_version: evaluator.version,
        project_id: projectId,
      },
      `evaluator ${evaluator.name}`,
      options,
    );
  }
}
