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
import { appliedCaps, dayOf, reserve, type RunScopes } from './budgets.ts';
import { callPricings, RunTally } from './estimate.ts';

/** A run is done and logged: a failure to count its cost is logged, not answered (one function, not a closure per run). */
const countingFailed = (err: unknown) => log.error("budget: counting a run's cost", { err });

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

  private async gate<T extends CostedResult>(
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
    if (!applied.length) return this.uncapped(ctx, evaluatorIds, options, run);
    // Only a capped run needs an estimate: it bounds how far runs admitted together can pass the cap.
    const evs = await evaluators();
    const tally = new RunTally(ctx, evs, await callPricings(ctx, evs));
    for (let i = 0; i < callsPerEvaluator; i++) tally.add(input);
    const byEvaluator = tally.liveByEvaluator();
    const estimate = [...byEvaluator.values()].reduce((a, b) => a + b, 0);
    const reservation = await reserve(ctx.store, scopes, applied, estimate, byEvaluator);
    let result: T;
    try {
      result = await run();
    } catch (err) {
      // Thrown before any model call (a refusal) or by the store: nothing was spent.
      await reservation.settle(0, new Map()).catch((err) => log.error('budget: settling a failed run', { err }));
      throw err;
    }
    const spent = spentBy(result, evaluatorIds);
    // The run is done and logged: a failure to count it is logged, not answered.
    await reservation.settle(spent.total, spent.by).catch((err) => log.error("budget: counting a run's cost", { err }));
    return result;
  }

  /**
   * A run no cap applies to: nothing to reserve or to let go (reserve and settle would do nothing
   * but the org's count), so the run only adds what it cost to the org's spend of the day it
   * started, as settle does for the org key. Without the reservation's objects and promises.
   */
  private async uncapped<T extends CostedResult>(ctx: RequestContext, evaluatorIds: string[], options: Pick<RunOptions, 'spend'> | undefined, run: () => Promise<T>): Promise<T> {
    // Epoch ms, not a Date: dayOf makes one only when the day changes.
    const at = Date.now();
    // A throw (a refusal, or the store): nothing was reserved, so nothing is settled.
    const result = await run();
    const total = spentTotal(result, evaluatorIds);
    const orgId = ctx.caller.org.id;
    const key = { org_id: orgId, scope: 'org' as const, scope_id: orgId, period: dayOf(at) };
    // A batch row to record: its spend is counted in the statement that records the row (Store.recordBatchRow).
    if (options?.spend) {
      options.spend.counted = { key, usd: total };
      return result;
    }
    if (total !== 0) await ctx.store.settleBudget(key, 0, total).catch(countingFailed);
    return result;
  }
}

type CostedResult = { cost_usd: number | null; evaluator_results: Array<{ evaluator_id: string; cost_usd?: number | null }> };

/** What a run spent in all and per evaluator. A run that failed after its model calls (every evaluator failed: `failed`) still spent them. */
function spentBy(result: CostedResult, evaluatorIds: string[]): { total: number; by: Map<string, number> } {
  const perEvaluator = result.evaluator_results.every((r) => 'cost_usd' in r);
  return perEvaluator
    ? spentOf(result.evaluator_results as Array<Pick<EvaluatorResult, 'evaluator_id' | 'cost_usd'>>)
    : { total: usd(result.cost_usd), by: new Map(evaluatorIds.map((id) => [id, usd(result.cost_usd) / evaluatorIds.length])) };
}

/** spentBy's total alone, the same sum in the same order (per evaluator, then over them), without its Map when ids do not repeat. */
function spentTotal(result: CostedResult, evaluatorIds: string[]): number {
  const results = result.evaluator_results;
  if (!results.every((r) => 'cost_usd' in r)) return usd(result.cost_usd);
  let total = 0;
  for (let i = 0; i < results.length; i++) {
    // An evaluator twice in one run: its costs are added up first, as spentBy does.
    for (let j = 0; j < i; j++) if (results[j]!.evaluator_id === results[i]!.evaluator_id) return spentBy(result, evaluatorIds).total;
    total += usd(results[i]!.cost_usd);
  }
  return total;
}
