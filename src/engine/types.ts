// The seam between the tool handlers and scoring. The real engine lives beside this file.
import type { RequestContext } from '../context.ts';
import type { ComparisonInput, ComparisonResult, ExecutionInput, ExecutionResult } from '../schemas.ts';
import type { EvaluatorRecord, JudgeRecord } from '../store/types.ts';

export interface ScoringEngine {
  /** Runs every evaluator of the judge on the inputs and writes one execution log. */
  runJudge(ctx: RequestContext, judge: JudgeRecord, input: ExecutionInput): Promise<ExecutionResult>;
  /** Runs one evaluator on the inputs and writes one execution log. */
  runEvaluator(ctx: RequestContext, evaluator: EvaluatorRecord, input: ExecutionInput & { project_id?: string }): Promise<ExecutionResult>;
  /** Compares two responses with every evaluator of the judge, in both orders (pairwise.ts); writes one comparison log. */
  compareJudge(ctx: RequestContext, judge: JudgeRecord, input: ComparisonInput): Promise<ComparisonResult>;
  /** Compares two responses with one evaluator, in both orders; writes one comparison log. */
  compareEvaluator(ctx: RequestContext, evaluator: EvaluatorRecord, input: ComparisonInput & { project_id?: string }): Promise<ComparisonResult>;
}
