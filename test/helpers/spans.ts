// A stored span for store-level tests: every field a Span has, at one instant, overridable.
import type { Span } from '../../src/traces/types.ts';

/** A hex id of `len` digits from a number: n 1 → 00…01. */
export const hex = (n: number, len: number) => n.toString(16).padStart(len, '0');

/**
 * A span that starts and ends at `start` (ISO text), received then. `nanoOffset` is added to the start's
 * nanoseconds only (two spans of one millisecond kept in order); `extra` overrides any field.
 */
export function storedSpan(traceId: string, spanId: string, start: string, opts: { nanoOffset?: number; extra?: Partial<Span> } = {}): Span {
  const nanos = BigInt(Date.parse(start)) * 1_000_000n;
  return {
    trace_id: traceId,
    span_id: spanId,
    parent_span_id: null,
    name: 'op',
    kind: 'internal',
    service_name: 'svc',
    start_time: start,
    end_time: start,
    start_time_unix_nano: String(nanos + BigInt(opts.nanoOffset ?? 0)),
    end_time_unix_nano: String(nanos),
    status: { code: 'unset', message: null },
    attributes: {},
    resource_attributes: {},
    events: [],
    scope: { name: null, version: null },
    received_at: start,
    ...opts.extra,
  };
}
