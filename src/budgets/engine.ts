// The budget gate around the scoring engine (room h-cost): every run, from any door (REST, MCP, a
// batch row), reserves its estimated cost on the caps that apply before the engine calls a model,
// and settles with what it really cost after. Without a cap the run is only counted (the org's
// spend today). The engine itself knows nothing of budgets.
import type { RequestContext } from '../context.ts';
import { log } from '../log.ts';
import { loadJudgeEvaluators } from '../domain/judges.ts';
import type { RunOptions, ScoringEngine } from '../runs/types.ts';
import type { ComparisonInput, EvaluatorResult, ExecutionInput } from '../schemas.ts';
import type { EvaluatorRecord, JudgeRecord } from '../store/types.ts';
import { appliedCaps, reserve, type RunScopes } from './budgets.ts';
import { callPricings, RunTally } from './estimate.ts';

/** Unknown costs (a model without a price) count as 0: they cannot be weighed against a cap. */
const usd = (v: number | null | undefined) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

function spentOf(results: Array<Pick<EvaluatorResult, 'evaluator_id' | 'cost_usd'>>): { total: number; by: Map<string, number> } {
  const by = new Map<string, number>();
  for (const r of results) by.set(r.evaluator_id, (by.get(r.evaluator_id) ?? 0) + usd(r.cost_usd));
  return { total: [...by.values()].reduce((a, b) => a + b, 0), by };
}

export class BudgetedEngine implements ScoringEngine {
  constructor(private readonly inner: ScoringEngine) {}

  /** The server's judge model, as the inner engine has it (refine rewrites with it). */
  get model() {
    return this.inner.model;
  }

  prepare(ctx: RequestContext, subject: { judge: JudgeRecord } | { evaluator: EvaluatorRecord }) {
    return this.inner.prepare(ctx, subject);
  }

  assertCanScore(ctx: RequestContext, evaluators: EvaluatorRecord[]) {
    return this.inner.assertCanScore(ctx, evaluators);
  }

  runJudge(ctx: RequestContext, judge: JudgeRecord, input: ExecutionInput, options?: RunOptions) {
    const ids = judge.evaluators.map((e) => e.id);
    return this.gate(
      ctx,
      ids,
      options,
      input,
      async () => options?.prepared?.evaluators ?? loadJudgeEvaluators(ctx, judge),
      () => this.inner.runJudge(ctx, judge, input, options),
    );
  }

  runEvaluator(ctx: RequestContext, evaluator: EvaluatorRecord, input: ExecutionInput & { project_id?: string }, options?: RunOptions) {
    return this.gate(
      ctx,
      [evaluator.id],
      options,
      input,
      async () => [evaluator],
      () => this.inner.runEvaluator(ctx, evaluator, input, options),
    );
  }

  // A comparison asks each evaluator twice, once per order: estimated from response A, doubled.
  compareJudge(ctx: RequestContext, judge: JudgeRecord, input: ComparisonInput) {
    const ids = judge.evaluators.map((e) => e.id);
    return this.gate(
      ctx,
      ids,
      undefined,
      { ...input, response: input.response_a } as ExecutionInput,
      () => loadJudgeEvaluators(ctx, judge),
      () => this.inner.compareJudge(ctx, judge, input),
      2,
    );
  }

  compareEvaluator(ctx: RequestContext, evaluator: EvaluatorRecord, input: ComparisonInput & { project_id?: string }) {
    return this.gate(
      ctx,
      [evaluator.id],
      undefined,
      { ...input, response: input.response_a } as ExecutionInput,
      async () => [evaluator],
      () => this.inner.compareEvaluator(ctx, evaluator, input),
      2,
    );
  }

  private async gate<T extends { cost_usd: number | null; evaluator_results: Array<{ evaluator_id: string; cost_usd?: number | null }> }>(
    ctx: RequestContext,
    evaluatorIds: string[],
    options: Pick<RunOptions, 'batch_execution_id' | 'spend'> | undefined,
    input: ExecutionInput,
    evaluators: () => Promise<EvaluatorRecord[]>,
    run: () => Promise<T>,
    callsPerEvaluator = 1,
  ): Promise<T> {
    const orgId = ctx.caller.org.id;
    const batchId = options?.batch_execution_id;
    const scopes: RunScopes = batchId ? { orgId, evaluatorIds, batchId } : { orgId, evaluatorIds };
    const applied = await appliedCaps(ctx.store, ctx.config, scopes);
    // Only a capped run needs an estimate: it bounds how far runs admitted together can pass the cap.
    let estimate = 0;
    let byEvaluator = new Map<string, number>();
    if (applied.length) {
      const evs = await evaluators();
      const tally = new RunTally(ctx, evs, await callPricings(ctx, evs));
      for (let i = 0; i < callsPerEvaluator; i++) tally.add(input);
      byEvaluator = tally.liveByEvaluator();
      estimate = [...byEvaluator.values()].reduce((a, b) => a + b, 0);
    }
    const reservation = await reserve(ctx.store, scopes, applied, estimate, byEvaluator);
    let result: T;
    try {
      result = await run();
    } catch (err) {
      // Thrown before any model call (a refusal) or by the store: nothing was spent.
      await reservation.settle(0, new Map()).catch((err) => log.error('budget: settling a failed run', { err }));
      throw err;
    }
    // A run that failed after its model calls (every evaluator failed: `failed`) still spent them.
    const perEvaluator = result.evaluator_results.every((r) => 'cost_usd' in r);
    const spent = perEvaluator
      ? spentOf(result.evaluator_results as Array<Pick<EvaluatorResult, 'evaluator_id' | 'cost_usd'>>)
      : { total: usd(result.cost_usd), by: new Map(evaluatorIds.map((id) => [id, usd(result.cost_usd) / evaluatorIds.length])) };
    // Nothing reserved (no cap applies) and a row to record: the spend is counted with the row.
    if (options?.spend && !applied.length) {
      options.spend.counted = { key: reservation.orgKey, usd: spent.total };
      return result;
    }
    // The run is done and logged: a failure to count it is logged, not answered.
    await reservation.settle(spent.total, spent.by).catch((err) => log.error("budget: counting a run's cost", { err }));
    return result;
  }
}
