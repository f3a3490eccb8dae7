// The seam between the tool handlers and the runs (a run, a comparison, a batch's preparation). The
// runs live beside this file (index.ts); the pure scoring engine under them is engine/engine.ts.
import type { RequestContext } from '../context.ts';
import type { JudgeModel } from '../engine/providers/model.ts';
import type { PriceTable, PricedProvider } from '../engine/providers/cost.ts';
import type { ComparisonInput, ComparisonResult, ExecutionInput, ExecutionResult } from '../schemas.ts';
import type { EvaluatorRecord, ExecutionLogRecord, JudgeRecord, RowSpend } from '../store/types.ts';
import type { Outcome } from '../engine/outcome.ts';

/** RunOptions.spend: filled by the budget gate with the spend it left to the row. */
export interface SpendHolder {
  counted?: RowSpend;
}

/** How a run is filed: a row of a batch run gets the batch's id and a log id fixed by its position. */
export interface RunOptions {
  batch_execution_id?: string;
  /** The execution log's id (default: a new one). A second log with the same id is refused by the store. */
  log_id?: string;
  /** h-proxy: adjusts the log record just before it is written (the judge proxy files type proxy, with the upstream call). */
  decorate?: (record: ExecutionLogRecord) => ExecutionLogRecord;
  /**
   * Issue 32: replaces each evaluator's scoring target (model, prices). A row of a provider_batch run
   * sends its calls through the provider's batch API, priced at its batch rate (batch/provider-model.ts).
   */
  /** Loaded once for many runs (prepare): the run neither reloads the versions nor resolves the models again. */
  prepared?: PreparedRun;
  /**
   * Budgets: a batch row's empty holder. When no cap applies (nothing reserved), the budget gate
   * (budgets/engine.ts) leaves the run's spend here, for the row to count it in the statement that
   * records the row (Store.recordBatchRow), instead of a counter write of its own.
   */
  spend?: SpendHolder;
  retarget?: <T extends { model: JudgeModel; modelName: string; prices: PriceTable; provider?: PricedProvider; identity?: string }>(target: T) => T;
}

/**
 * A judge's (or an evaluator's) exact versions and each model's scoring target, loaded once for many
 * runs (the rows of a batch chunk) by prepare and handed to each run as RunOptions.prepared. The
 * targets are the runs' own (targets.ts); opaque to everyone else.
 */
export interface PreparedRun {
  readonly evaluators: EvaluatorRecord[];
  readonly targets: ReadonlyMap<string, unknown>;
}

export interface ScoringEngine {
  /** h-proxy: the server's own judge model (refine rewrites with it unless a model is named). */
  readonly model?: JudgeModel;
  /**
   * Throws what a run of these evaluators would throw before any model call because of the models
   * (the server's model not configured; an evaluator's registered model no longer allowed): a batch
   * checks it when it starts rather than failing every row.
   */
  assertCanScore(ctx: RequestContext, evaluators: EvaluatorRecord[]): Promise<void>;
  // A run in which every evaluator failed is a value marked `failed` (outcome.ts), never an exception;
  // refusals before any model call (missing inputs, no model, a budget spent) are still thrown.
  /** The versions and scoring targets of a judge or an evaluator, for RunOptions.prepared (a batch loads them once per run: batch/prepared-runs.ts). */
  prepare(ctx: RequestContext, subject: { judge: JudgeRecord } | { evaluator: EvaluatorRecord }): Promise<PreparedRun>;
  /** Runs every evaluator of the judge on the inputs and writes one execution log. */
  runJudge(ctx: RequestContext, judge: JudgeRecord, input: ExecutionInput, options?: RunOptions): Promise<Outcome<ExecutionResult>>;
  /** Runs one evaluator on the inputs and writes one execution log. */
  runEvaluator(ctx: RequestContext, evaluator: EvaluatorRecord, input: ExecutionInput & { project_id?: string }, options?: RunOptions): Promise<Outcome<ExecutionResult>>;
  /** Compares two responses with every evaluator of the judge, in both orders (compare.ts); writes one comparison log. */
  compareJudge(ctx: RequestContext, judge: JudgeRecord, input: ComparisonInput): Promise<Outcome<ComparisonResult>>;
  /** Compares two responses with one evaluator, in both orders; writes one comparison log. */
  compareEvaluator(ctx: RequestContext, evaluator: EvaluatorRecord, input: ComparisonInput & { project_id?: string }): Promise<Outcome<ComparisonResult>>;
}
