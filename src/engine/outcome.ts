// A run's outcome is a value. A run in which every evaluator failed is logged like any other and
// comes back with `failed` (why, and the status the doors answer) instead of as an exception, so the
// callers that keep going (a batch row, the judge proxy, refine) read it like a result. The doors
// (REST, MCP) turn it into the model_unavailable error they have always answered: answerOf.
import { TribunalError } from '../errors.ts';

/** Why a run has no score: every evaluator failed (502 model error, 503 overloaded or rate limited, 504 timed out). */
export interface RunFailure {
  status: 502 | 503 | 504;
  message: string;
}

/** A run's result, or a logged run that failed (its log id and every evaluator's error are kept). */
export type Outcome<T extends { execution_log_id: string; evaluator_results: unknown[] }> = T & { failed?: RunFailure };

/** The answer a door gives: the result, or the model_unavailable error of a failed run. */
export function answerOf<T extends { execution_log_id: string; evaluator_results: unknown[] }>(outcome: Outcome<T>): T {
  const { failed, ...result } = outcome;
  if (!failed) return result as unknown as T;
  throw new TribunalError('model_unavailable', failed.status, failed.message, {
    extra: { execution_log_id: outcome.execution_log_id, evaluator_results: outcome.evaluator_results },
  });
}
