// The seam between the tool handlers and scoring. The real engine lives beside this file.
import type { RequestContext } from '../context.ts';
import type { ExecutionInput, ExecutionResult } from '../schemas.ts';
import type { EvaluatorRecord, JudgeRecord } from '../store/types.ts';

/** How a run is filed: a row of a batch run gets the batch's id and a log id fixed by its position. */
export interface RunOptions {
  batch_execution_id?: string;
  /** The execution log's id (default: a new one). A second log with the same id is refused by the store. */
  log_id?: string;
}

export interface ScoringEngine {
  /** Runs every evaluator of the judge on the inputs and writes one execution log. */
  runJudge(ctx: RequestContext, judge: JudgeRecord, input: ExecutionInput, options?: RunOptions): Promise<ExecutionResult>;
  /** Runs one evaluator on the inputs and writes one execution log. */
  runEvaluator(ctx: RequestContext, evaluator: EvaluatorRecord, input: ExecutionInput & { project_id?: string }, options?: RunOptions): Promise<ExecutionResult>;
}
