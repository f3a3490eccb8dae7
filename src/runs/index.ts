// The runs (issue 25: a run is a room): the use cases every door and the batch call through the
// ScoringEngine seam (types.ts): execute a judge or an evaluator (execute.ts), compare two responses
// (compare.ts), prepare a judge's versions and models once for many rows, check a batch can score.
// They load versions, check declared inputs, resolve the models (targets.ts), ask the pure engine
// (engine/engine.ts) to score, and file the log through one frame (frame.ts).
import type { RequestContext } from '../context.ts';
import { loadJudgeEvaluators } from '../domain/judges.ts';
import { Engine } from '../engine/engine.ts';
import type { JudgeModel } from '../engine/providers/model.ts';
import type { ModelCallObserver } from '../engine/providers/resilient-model.ts';
import type { ComparisonInput, ExecutionInput } from '../schemas.ts';
import type { EvaluatorRecord, JudgeRecord } from '../store/types.ts';
import { compareEvaluator, compareJudge } from './compare.ts';
import { runEvaluator, runJudge, type RunParts } from './execute.ts';
import { Targets } from './targets.ts';
import type { PreparedRun, RunOptions, ScoringEngine } from './types.ts';

export class Runs implements ScoringEngine {
  private readonly parts: RunParts;

  constructor(
    readonly model: JudgeModel,
    observer?: ModelCallObserver,
  ) {
    this.parts = { engine: new Engine(model), targets: new Targets(model, observer) };
  }

  async prepare(ctx: RequestContext, subject: { judge: JudgeRecord } | { evaluator: EvaluatorRecord }): Promise<PreparedRun> {
    const evaluators = 'judge' in subject ? await loadJudgeEvaluators(ctx, subject.judge) : [subject.evaluator];
    return { evaluators, targets: await this.parts.targets.resolve(ctx, evaluators) };
  }

  async assertCanScore(ctx: RequestContext, evaluators: EvaluatorRecord[]): Promise<void> {
    this.parts.targets.requireModels(await this.parts.targets.resolve(ctx, evaluators));
  }

  runJudge(ctx: RequestContext, judge: JudgeRecord, input: ExecutionInput, options?: RunOptions) {
    return runJudge(this.parts, ctx, judge, input, options);
  }

  runEvaluator(ctx: RequestContext, evaluator: EvaluatorRecord, input: ExecutionInput & { project_id?: string }, options?: RunOptions) {
    return runEvaluator(this.parts, ctx, evaluator, input, options);
  }

  compareJudge(ctx: RequestContext, judge: JudgeRecord, input: ComparisonInput) {
    return compareJudge(this.parts, ctx, judge, input);
  }

  compareEvaluator(ctx: RequestContext, evaluator: EvaluatorRecord, input: ComparisonInput & { project_id?: string }) {
    return compareEvaluator(this.parts, ctx, evaluator, input);
  }
}

/** `observer` also watches the calls to organizations' registered models (their limiters are their own). */
export function createScoringEngine(model: JudgeModel, observer?: ModelCallObserver): ScoringEngine {
  return new Runs(model, observer && { attemptFinished: (event) => observer.attemptFinished(event) });
}
