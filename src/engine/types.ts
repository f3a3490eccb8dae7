// The seam between the tool handlers and scoring. The real engine lives beside this file.
import type { RequestContext } from '../context.ts';
import type { ExecutionInput, ExecutionResult } from '../schemas.ts';
import type { EvaluatorRecord, JudgeRecord } from '../store/types.ts';

export interface ScoringEngine {
  /** Runs every evaluator of the judge on the inputs and writes one execution log. */
  runJudge(ctx: RequestContext, judge: JudgeRecord, input: ExecutionInput): Promise<ExecutionResult>;
  /** Runs one evaluator on the inputs and writes one execution log. */
  runEvaluator(ctx: RequestContext, evaluator: EvaluatorRecord, input: ExecutionInput & { project_id?: string }): Promise<ExecutionResult>;
}
