// An OTLP ExportLogsServiceRequest (protobuf decoded with field names as in the .proto, or OTLP/JSON)
// -> the GenAI events it carries, each for the span its trace and span ids name. Instrumentations such
// as @opentelemetry/instrumentation-openai record message content this way (gen_ai.user.message,
// gen_ai.choice, ... as log records in the span's context), not on the span. A record becomes an
// event named by its event_name field (or its event.name attribute) with its attributes and its body
// as JSON in `event.body`, the shape the GenAI event reader (extract/formats.ts) takes.
// Records that are not GenAI events are accepted and not kept (OTLP: accepted, not rejected); GenAI
// records without a span to belong to are accepted, counted, and named in the answer's warning.
import { anyValue, attributes, field, hexId, int64, isObj, isoOfNanos, list, OtlpShapeError } from './normalize.ts';
import type { SpanLogEvent } from './types.ts';

export interface NormalizedLogs {
  events: SpanLogEvent[];
  rejected: number;
  /** Distinct reasons, each with how many records it rejected. */
  reasons: Map<string, number>;
  /** Records that are not GenAI events: accepted, not kept. */
  ignored: number;
  /** GenAI events without a trace id and span id: accepted, not kept (nothing to attach them to). */
  unattached: number;
}

/** The record's event name: the event_name field (OTLP 1.5+), else the event.name attribute (older SDKs). */
function eventName(rec: Record<string, unknown>, attrs: Record<string, unknown>): string | null {
  const n = field(rec, 'event_name');
  if (typeof n === 'string' && n !== '') return n;
  return typeof attrs['event.name'] === 'string' && attrs['event.name'] !== '' ? (attrs['event.name'] as string) : null;
}

/** Throws OtlpShapeError when the request itself is not an ExportLogsServiceRequest. */
export function normalizeLogsRequest(request: unknown, receivedAt = new Date().toISOString()): NormalizedLogs {
  if (!isObj(request)) throw new OtlpShapeError('the body must be an ExportLogsServiceRequest object');
  const out: NormalizedLogs = { events: [], rejected: 0, reasons: new Map(), ignored: 0, unattached: 0 };
  const reject = (reason: string) => {
    out.rejected++;
    out.reasons.set(reason, (out.reasons.get(reason) ?? 0) + 1);
  };
  const now = BigInt(Date.parse(receivedAt)) * 1_000_000n;
  for (const [ri, rl] of list(request, 'resource_logs', 'request').entries()) {
    for (const [si, sl] of list(rl, 'scope_logs', `resource_logs[${ri}]`).entries()) {
      for (const [li, rec] of list(sl, 'log_records', `resource_logs[${ri}].scope_logs[${si}]`).entries()) {
        const attrs = attributes(list(rec, 'attributes', `resource_logs[${ri}].scope_logs[${si}].log_records[${li}]`));
        const name = eventName(rec, attrs);
        if (!name?.startsWith('gen_ai.')) {
          out.ignored++;
          continue;
        }
        const traceId = hexId(field(rec, 'trace_id'), 16);
        const spanId = hexId(field(rec, 'span_id'), 8);
        if (traceId === 'invalid' || spanId === 'invalid') {
          reject('trace_id must be 16 bytes and span_id 8 bytes, not all zero (32 and 16 hex digits in OTLP/JSON)');
          continue;
        }
        if (traceId === null || spanId === null) {
          out.unattached++;
          continue;
        }
        const t = int64(field(rec, 'time_unix_nano'));
        const observed = int64(field(rec, 'observed_time_unix_nano'));
        const nanos = t ? t : observed ? observed : now;
        const body = field(rec, 'body');
        if (body !== undefined && body !== null) attrs['event.body'] = JSON.stringify(anyValue(body));
        out.events.push({
          trace_id: traceId,
          span_id: spanId,
          time_unix_nano: nanos.toString(),
          received_at: receivedAt,
          seq: out.events.length,
          event: { name, time: isoOfNanos(nanos), attributes: attrs },
        });
      }
    }
  }
  return out;
}
