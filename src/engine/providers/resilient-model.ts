// Wraps a JudgeModel with what every judge-model caller needs: the server-wide concurrency limit,
// a per-attempt timeout, and retries with exponential backoff and jitter for rate limits (429),
// overload (529), server errors (5xx), dropped connections and timeouts, honouring retry-after.
// Malformed answers are passed through: the caller validates the answer and decides (scoring
// retries them at most twice). Scoring and judge generation share one instance (createJudgeModel).
import type { Limiter } from './limiter.ts';
import type { JudgeModel, StructuredAnswer, StructuredCall } from './model.ts';
import { ModelCallError } from './model-errors.ts';

export interface RetryPolicy {
  /** Retries after the first attempt (TRIBUNAL_MODEL_RETRIES). */
  retries: number;
  /** Per-attempt timeout (TRIBUNAL_MODEL_TIMEOUT). */
  timeoutMs: number;
  /** Base of the exponential backoff (TRIBUNAL_MODEL_BACKOFF). */
  backoffMs: number;
  /** Cap of the exponential backoff (TRIBUNAL_MODEL_BACKOFF_MAX). */
  backoffMaxMs: number;
  /** A retry-after longer than this is not waited for: the call fails at once. Default 60 s. */
  maxRetryAfterMs?: number;
}

/** One finished attempt, as an observer (logs, metrics, traces) sees it: never the prompt or the answer. */
export interface ModelAttemptEvent {
  /** The model asked for. */
  model: string;
  attempt: number;
  /** 'ok', or the kind of the ModelCallError the attempt failed with. */
  outcome: 'ok' | ModelCallError['kind'];
  /** True when a failed attempt is followed by another. */
  retrying: boolean;
  /** Epoch ms when the attempt got its limiter slot (the wait for a slot is not model latency). */
  startedAt: number;
  durationMs: number;
  usage?: StructuredAnswer['usage'];
}

/** Watches the model calls without the engine depending on whoever watches (src/observability). */
export interface ModelCallObserver {
  /** Called once with the server-wide limiter, so its queue depth can be read when wanted. */
  watchLimiter?(limiter: Limiter): void;
  attemptFinished(event: ModelAttemptEvent): void;
}

export interface ResilientModelOptions {
  policy: RetryPolicy;
  limiter: Limiter;
  observer?: ModelCallObserver;
  /** Injectable for tests; default Math.random. */
  random?: () => number;
}

/** A batch run's check before each of its calls starts (ResilientJudgeModel.forBatch): throws, or answers a promise that rejects, to refuse. */
export type BatchGate = () => Promise<void> | undefined;

/** A marker reason so a timeout can be told from the caller cancelling. */
class AttemptTimeout extends Error {}

export class ResilientJudgeModel implements JudgeModel {
  readonly limiter: Limiter;
  private readonly policy: Required<RetryPolicy>;
  private readonly random: () => number;
  private readonly observer?: ModelCallObserver;

  constructor(
    private readonly inner: JudgeModel,
    opts: ResilientModelOptions,
  ) {
    this.limiter = opts.limiter;
    this.policy = { maxRetryAfterMs: 60_000, ...opts.policy };
    this.random = opts.random ?? Math.random;
    this.observer = opts.observer;
    this.observer?.watchLimiter?.(this.limiter);
  }

  get configured(): boolean {
    return this.inner.configured;
  }

  /** Exponential backoff with equal jitter: half the step fixed, half random. */
  backoffDelay(retryIndex: number): number {
    const step = Math.min(this.policy.backoffMaxMs, this.policy.backoffMs * 2 ** retryIndex);
    return step / 2 + (step / 2) * this.random();
  }

  call(request: StructuredCall, signal?: AbortSignal): Promise<StructuredAnswer> {
    return this.callWith(request, signal);
  }

  /**
   * A batch row's view of this model (batch/work.ts hands it to the run as RunOptions.retarget): its
   * calls wait in the limiter's batch queue, behind interactive calls, and `gate` runs once a call
   * has its slot, before it starts; when it throws (or its promise rejects), the call does not start
   * and the slot is given back. It answers nothing when it can tell at once (no await then).
   */
  forBatch(gate: BatchGate): JudgeModel {
    return { configured: this.configured, call: (request, signal) => this.callWith(request, signal, gate) };
  }

  private async callWith(request: StructuredCall, signal?: AbortSignal, gate?: BatchGate): Promise<StructuredAnswer> {
    const attempts = this.policy.retries + 1;
    for (let attempt = 1; ; attempt++) {
      let error: ModelCallError;
      const slot = { at: 0 };
      try {
        const answer = await this.attempt(request, signal, slot, gate);
        this.observer?.attemptFinished(attemptEvent(request.model, attempt, 'ok', false, slot.at, answer.usage));
        return answer;
      } catch (err) {
        error = err instanceof ModelCallError ? err : new ModelCallError('server_error', String((err as Error)?.message ?? err), { cause: err });
      }
      error.attempts = attempt;
      const retryAfter = error.retryAfterMs;
      const retrying = error.retryable && attempt < attempts && !signal?.aborted && !(retryAfter !== undefined && retryAfter > this.policy.maxRetryAfterMs);
      this.observer?.attemptFinished(attemptEvent(request.model, attempt, error.kind, retrying, slot.at));
      if (!retrying) throw error;
      const delay = Math.max(retryAfter ?? 0, this.backoffDelay(attempt - 1));
      await sleep(delay, signal);
    }
  }

  /** One attempt: wait for a slot (not timed; in the batch queue when gated), then call with the per-attempt timeout. */
  private async attempt(request: StructuredCall, signal: AbortSignal | undefined, slot: { at: number }, gate: BatchGate | undefined): Promise<StructuredAnswer> {
    let release: () => void;
    try {
      release = await this.limiter.acquire(signal, gate !== undefined);
    } catch {
      throw new ModelCallError('aborted', 'The judge-model call was cancelled while waiting for a free slot.');
    }
    if (gate) {
      try {
        const passing = gate();
        if (passing) await passing;
      } catch (err) {
        release();
        throw new ModelCallError('aborted', (err as Error).message, { cause: err });
      }
    }
    slot.at = performance.now();
    if (!signal && this.inner.appliesTimeout) {
      // The inner model times the attempt out itself (the SDK's per-request timeout): no controller,
      // listener and timer of our own per attempt. Only the message is ours.
      try {
        return await this.inner.call(request, undefined, this.policy.timeoutMs);
      } catch (err) {
        if (err instanceof ModelCallError && err.kind === 'timeout') {
          throw new ModelCallError('timeout', `The judge model did not answer within ${this.policy.timeoutMs} ms (TRIBUNAL_MODEL_TIMEOUT).`, { cause: err });
        }
        throw err;
      } finally {
        release();
      }
    }
    const controller = new AbortController();
    const onAbort = () => controller.abort(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(() => controller.abort(new AttemptTimeout()), this.policy.timeoutMs);
    try {
      return await this.inner.call(request, controller.signal);
    } catch (err) {
      if (controller.signal.reason instanceof AttemptTimeout) {
        throw new ModelCallError('timeout', `The judge model did not answer within ${this.policy.timeoutMs} ms (TRIBUNAL_MODEL_TIMEOUT).`, { cause: err });
      }
      throw err;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      release();
    }
  }
}

function attemptEvent(
  model: string,
  attempt: number,
  outcome: ModelAttemptEvent['outcome'],
  retrying: boolean,
  slotAt: number,
  usage?: StructuredAnswer['usage'],
): ModelAttemptEvent {
  const now = performance.now();
  const at = slotAt || now; // never got a slot (cancelled while queued): no model time
  return { model, attempt, outcome, retrying, startedAt: performance.timeOrigin + at, durationMs: now - at, usage };
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new ModelCallError('aborted', 'The judge-model call was cancelled.'));
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new ModelCallError('aborted', 'The judge-model call was cancelled.'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
