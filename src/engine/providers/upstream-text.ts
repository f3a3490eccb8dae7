// What of a registered model's own words may reach the caller, the logs and stored results: its
// error text shortened, stripped of control characters, and with the model's API key (and any
// other secret given) redacted. A provider that echoes the key in its error must not put the key
// into a verify error, a result or a log line; a target that answers with a page of its own text
// must not have it echoed back verbatim (SSRF read-back).
import type { ModelCapabilities } from '../../schemas.ts';
import { AddressRefusedError } from './address-policy.ts';
import { UpstreamTooLargeError } from './bounded-body.ts';
import type { JudgeModel, StructuredAnswer, StructuredCall } from './model.ts';
import { ModelCallError } from './model-errors.ts';

/** How much of an upstream error text is kept. */
export const UPSTREAM_TEXT_MAX = 200;

/** `text` with every secret (at least 4 characters) replaced by [redacted]. */
export function redactSecrets(text: string, secrets: Array<string | null | undefined>): string {
  let out = text;
  for (const secret of secrets) {
    if (!secret || secret.length < 4) continue;
    out = out.split(secret).join('[redacted]');
    // Also a key the provider quoted in part (its first 12 characters and more).
    if (secret.length >= 16) out = out.split(secret.slice(0, 12)).join('[redacted]');
  }
  return out;
}

/** Upstream text as it may be shown: one line, control characters gone, at most UPSTREAM_TEXT_MAX characters. */
export function upstreamText(text: string, secrets: Array<string | null | undefined> = []): string {
  const clean = redactSecrets(text, secrets)
    .replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ')
    .trim();
  return clean.length > UPSTREAM_TEXT_MAX ? `${clean.slice(0, UPSTREAM_TEXT_MAX)}… (shortened)` : clean;
}

/** A bounded-read or address refusal somewhere in an SDK error's causes, as a ModelCallError. */
export function refusalOf(err: unknown): ModelCallError | null {
  for (let e = err as { cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (e instanceof UpstreamTooLargeError) return new ModelCallError('server_error', `The judge model's answer was not read: ${e.message}.`);
    if (e instanceof AddressRefusedError) return new ModelCallError('rejected', `The judge model's base_url is refused: ${e.message}; see docs/DEPLOYMENT.md, "Security".`);
  }
  return null;
}

function cleaned(err: unknown, secrets: Array<string | null>): unknown {
  if (!(err instanceof ModelCallError)) return err;
  // A fresh error without the cause: the SDK's error (and its raw body) stays out of logs.
  const next = new ModelCallError(err.kind, upstreamText(err.message, secrets), { status: err.status, retryAfterMs: err.retryAfterMs, usage: err.usage, model: err.model });
  next.attempts = err.attempts;
  return next;
}

/** A provider model whose every error is shortened and has the model's key redacted. */
export class RedactingModel<M extends JudgeModel & { verify(model: string, timeoutMs: number): Promise<ModelCapabilities> }> implements JudgeModel {
  readonly configured: boolean;
  readonly appliesTimeout?: boolean;
  constructor(
    private readonly inner: M,
    private readonly secrets: Array<string | null>,
  ) {
    this.configured = inner.configured;
    this.appliesTimeout = inner.appliesTimeout;
  }
  async call(request: StructuredCall, signal?: AbortSignal, timeoutMs?: number): Promise<StructuredAnswer> {
    try {
      return await this.inner.call(request, signal, timeoutMs);
    } catch (err) {
      throw cleaned(err, this.secrets);
    }
  }
  async verify(model: string, timeoutMs: number): Promise<ModelCapabilities> {
    try {
      return await this.inner.verify(model, timeoutMs);
    } catch (err) {
      throw cleaned(err, this.secrets);
    }
  }
}
