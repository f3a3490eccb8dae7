// The one loop every structured judge-model call goes through, for scoring and for generation:
// call, add up the tokens spent (failed and malformed attempts are billed too), validate the answer,
// and ask again with the problems when it is malformed. Transport retries (rate limits, overload,
// timeouts) happen below, in resilient-model.ts; this loop retries only answers it cannot use.
import type { JudgeModel, ModelUsage, StructuredAnswer, StructuredCall } from './providers/model.ts';
import { ModelCallError, type ModelErrorKind } from './providers/model-errors.ts';

export interface CallUsage {
  calls: number;
  input_tokens: number;
  output_tokens: number;
  /** Prompt tokens read from / written to the provider's prompt cache (parts of input_tokens). */
  cache_read_tokens: number;
  cache_write_tokens: number;
  /** The temperature the last answered call carried (null: the provider default); absent when none answered. */
  temperature?: number | null;
}

function addUsage(total: CallUsage, usage: ModelUsage): void {
  total.input_tokens += usage.input_tokens;
  total.output_tokens += usage.output_tokens;
  total.cache_read_tokens += usage.cache_read_tokens ?? 0;
  total.cache_write_tokens += usage.cache_write_tokens ?? 0;
}

/** What a caller's check makes of an answer: its value, or what is wrong with it (said to the model). */
export type Checked<T> = { ok: true; value: T } | { ok: false; problems: string[] };

export interface CallFailure {
  kind: ModelErrorKind;
  /** The model layer's message; for `malformed`, the last answer's problems joined. */
  message: string;
  /** Transport attempts the model layer made on the failing call (1 when it did not retry). */
  attempts: number;
  /** The last answer's problems, for `malformed`. */
  problems: string[];
}

export type CallOutcome<T> = { usage: CallUsage; model: string | null } & ({ ok: true; value: T } | { ok: false; failure: CallFailure });

export interface StructuredCallSpec<T> {
  /** Answers asked for at most: the first plus the malformed-answer retries. */
  attempts: number;
  /** The call of one attempt; `problems` are those of the previous answer ([] on the first). */
  request: (problems: string[]) => StructuredCall;
  check: (input: unknown) => Checked<T>;
}

const asModelError = (err: unknown) =>
  err instanceof ModelCallError ? err : new ModelCallError('server_error', `Unexpected failure calling the judge model: ${(err as Error)?.message ?? err}`);

/** Never throws: a failure is an outcome, so the caller decides (a result with an error, or a 5xx). */
export async function callStructured<T>(model: JudgeModel, spec: StructuredCallSpec<T>): Promise<CallOutcome<T>> {
  const usage: CallUsage = { calls: 0, input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0 };
  let answeredBy: string | null = null;
  let problems: string[] = [];
  for (let attempt = 1; attempt <= spec.attempts; attempt++) {
    let answer: StructuredAnswer;
    usage.calls++;
    try {
      answer = await model.call(spec.request(problems));
    } catch (err) {
      const error = asModelError(err);
      addUsage(usage, error.usage);
      if (error.model) answeredBy = error.model;
      if (error.kind === 'malformed') {
        problems = [error.message];
        continue;
      }
      return { ok: false, usage, model: answeredBy, failure: { kind: error.kind, message: error.message, attempts: error.attempts, problems: [] } };
    }
    addUsage(usage, answer.usage);
    if (answer.temperature !== undefined) usage.temperature = answer.temperature;
    answeredBy = answer.model;
    const checked = spec.check(answer.input);
    if (checked.ok) return { ok: true, usage, model: answeredBy, value: checked.value };
    problems = checked.problems;
  }
  return { ok: false, usage, model: answeredBy, failure: { kind: 'malformed', message: problems.join('; '), attempts: 1, problems } };
}

// The HTTP status of failed calls is the model layer's (providers/model-errors.ts); re-exported for
// the callers of this loop.
export { failureStatus } from './providers/model-errors.ts';

/** " Gave up after N attempts." when the model layer retried, else "". */
export const gaveUp = (failure: CallFailure) => (failure.attempts > 1 ? ` Gave up after ${failure.attempts} attempts.` : '');
