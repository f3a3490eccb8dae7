// The span as Tribunal keeps it (one per OTLP span, per organization) and the store parts for
// traces: one interface, a JSON and a PostgreSQL implementation (src/store/json-traces.ts,
// src/store/postgres/traces.ts), one contract test (test/store-contract-traces.ts).
import { createHash } from 'node:crypto';
import { z } from 'zod';

export const SpanKind = z.enum(['unspecified', 'internal', 'server', 'client', 'producer', 'consumer']);
export const SpanStatusCode = z.enum(['unset', 'ok', 'error']);

export const SpanEvent = z.object({
  name: z.string(),
  time: z.string().describe('ISO-8601 instant'),
  attributes: z.record(z.string(), z.unknown()),
});

export const Span = z.object({
  trace_id: z.string().describe('32 lowercase hex digits'),
  span_id: z.string().describe('16 lowercase hex digits'),
  parent_span_id: z.string().nullable(),
  name: z.string(),
  kind: SpanKind,
  service_name: z.string().nullable().describe('the resource attribute service.name'),
  start_time: z.string().describe('ISO-8601 instant'),
  end_time: z.string().describe('ISO-8601 instant'),
  start_time_unix_nano: z.string(),
  end_time_unix_nano: z.string(),
  status: z.object({ code: SpanStatusCode, message: z.string().nullable() }),
  attributes: z.record(z.string(), z.unknown()),
  resource_attributes: z.record(z.string(), z.unknown()),
  events: z.array(SpanEvent),
  scope: z.object({ name: z.string().nullable(), version: z.string().nullable() }),
  received_at: z.string().describe('ISO-8601 instant'),
});
export type Span = z.infer<typeof Span>;
export type SpanRecord = Span & { org_id: string };

export interface TraceFilter {
  org_id: string;
  service_name?: string;
  span_name?: string;
  /** `key` present, or `key` equal to `value` (compared as text). */
  attribute?: { key: string; value?: string };
  date_from?: string;
  date_to?: string;
  /** Only traces whose spans were judged (true) or not (false). */
  has_evaluation?: boolean;
}

/** One trace in a list: counted over all of its stored spans. */
export interface TraceSummary {
  trace_id: string;
  root_span_name: string | null;
  service_name: string | null;
  start_time: string;
  end_time: string;
  span_count: number;
  error_count: number;
  evaluation_count: number;
}

export interface TracePageQuery {
  limit: number;
  /** The last trace of the previous page (start_time desc, trace_id desc). */
  after?: { start_time: string; trace_id: string };
}

/** An evaluation result linked to a span (kept so that a trace shows its scores, and has_evaluation filters). */
export interface SpanEvaluation {
  org_id: string;
  trace_id: string;
  span_id: string;
  rule_id: string | null;
  execution_log_id: string;
  name: string;
  score: number | null;
  created_at: string;
}

/**
 * A GenAI event that arrived as an OTLP log record (POST /otel/v1/logs), for the span its trace and
 * span ids name. Kept beside the spans and merged into that span's `events` whenever the span is
 * read, so a record that arrives before its span and one that arrives after it read the same.
 */
export interface SpanLogEvent {
  trace_id: string;
  span_id: string;
  /** The record's time in nanoseconds since the epoch (time_unix_nano, else observed_time_unix_nano, else arrival). */
  time_unix_nano: string;
  received_at: string;
  /** Its place in its request: records of one instant keep the order they were sent in. */
  seq: number;
  event: SpanEvent;
}
export type SpanEvent = z.infer<typeof SpanEvent>;

export interface TraceStore {
  /**
   * Stores spans of one organization, skipping any (trace_id, span_id) already stored (an exporter's
   * retry). At most `maxSpans` spans are kept per organization: the spans beyond are refused, not stored,
   * and counted in `refused`. Answers how many were new.
   *
   * `decided`, if given, may be called once (the JSON store does; PostgreSQL does not) with the spans
   * that will be stored, as soon as that is decided and before they are on disk, so that the caller's
   * own durable write (the rules' enqueue) is synced at the same time as the spans rather than after
   * them (issue 33). A caller that passes it must still wait for insertSpans before answering.
   */
  insertSpans(
    orgId: string,
    spans: Span[],
    maxSpans: number,
    decided?: (stored: Span[]) => void,
  ): Promise<{ inserted: number; duplicates: number; refused: number; stored: Span[] }>;
  /**
   * Keeps log events of one organization, skipping any already kept (an exporter's retry: the same
   * span, time, name and content). At most `maxEvents` are held per organization; those beyond are
   * refused and counted. Their spans need not be stored yet.
   */
  insertLogEvents(orgId: string, events: SpanLogEvent[], maxEvents: number): Promise<{ inserted: number; duplicates: number; refused: number }>;
  countLogEvents(orgId: string): Promise<number>;
  /** The spans of one trace of one organization, by start time. Reads of spans include their log events. */
  getTrace(orgId: string, traceId: string): Promise<SpanRecord[]>;
  /** One span with its log events, to be read only (the JSON store may answer the record it holds). */
  getSpan(orgId: string, traceId: string, spanId: string): Promise<Readonly<SpanRecord> | null>;
  listTraces(filter: TraceFilter, page: TracePageQuery): Promise<{ items: TraceSummary[]; last?: { start_time: string; trace_id: string } }>;
  /** Spans of one organization received in [from, to), oldest first, at most `limit`, after the cursor. */
  listSpans(orgId: string, q: { from?: string; to?: string; limit: number; after?: { received_at: string; key: string } }): Promise<SpanRecord[]>;
  /** Removes spans that started before `before`, and log events from before it (retention); answers how many spans. */
  prune(before: string): Promise<number>;
  countSpans(orgId: string): Promise<number>;
  addEvaluation(e: SpanEvaluation): Promise<void>;
  listEvaluations(orgId: string, traceId: string): Promise<SpanEvaluation[]>;
  purgeOrganization(orgId: string): Promise<void>;
}

/** The cursor key of a span in listSpans: received_at, then trace and span id. */
export const spanKey = (s: { trace_id: string; span_id: string }) => `${s.trace_id}:${s.span_id}`;

/** A log event's identity within its span: an exporter's retry sends the same time, name and content. */
export const logEventKey = (e: SpanLogEvent) =>
  createHash('sha256')
    .update(JSON.stringify([e.time_unix_nano, e.event.name, e.event.attributes]))
    .digest('hex')
    .slice(0, 32);

/** A span read with its log events (each store's order: time, then arrival): after its own events, in time order. */
export function withLogEvents<S extends Span>(span: S, logs: SpanEvent[] | null | undefined): S {
  if (!logs?.length) return span;
  // A stable sort: events of one instant keep the order they were recorded or sent in.
  span.events = [...span.events, ...logs].sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : 0));
  return span;
}

/**
 * A span as an organization's record: its fields one by one, in the order a span has them, then
 * org_id (what `{ ...span, org_id }` gave, the same JSON line): that spread of a span's 16 fields cost
 * 2.8-8 µs per stored span in a loop on the bench machine, this under 0.1 µs (issue 33). Fields a Span
 * does not have are not kept.
 */
export function spanRecord(s: Span, orgId: string): SpanRecord {
  return {
    trace_id: s.trace_id,
    span_id: s.span_id,
    parent_span_id: s.parent_span_id,
    name: s.name,
    kind: s.kind,
    service_name: s.service_name,
    start_time: s.start_time,
    end_time: s.end_time,
    start_time_unix_nano: s.start_time_unix_nano,
    end_time_unix_nano: s.end_time_unix_nano,
    status: s.status,
    attributes: s.attributes,
    resource_attributes: s.resource_attributes,
    events: s.events,
    scope: s.scope,
    received_at: s.received_at,
    org_id: orgId,
  };
}
