// An OTLP ExportTraceServiceRequest (protobuf decoded with field names as in the .proto, or OTLP/JSON
// with lowerCamelCase names and hex ids) -> Tribunal's spans. A span that cannot be kept (a bad id, no
// name) is rejected with its reason and counted, never dropped silently (partial_success).
import type { Span } from './types.ts';

type Obj = Record<string, unknown>;
const KINDS = ['unspecified', 'internal', 'server', 'client', 'producer', 'consumer'] as const;
const KIND_NAMES: Record<string, number> = {
  SPAN_KIND_UNSPECIFIED: 0,
  SPAN_KIND_INTERNAL: 1,
  SPAN_KIND_SERVER: 2,
  SPAN_KIND_CLIENT: 3,
  SPAN_KIND_PRODUCER: 4,
  SPAN_KIND_CONSUMER: 5,
};
const STATUS = ['unset', 'ok', 'error'] as const;
const STATUS_NAMES: Record<string, number> = { STATUS_CODE_UNSET: 0, STATUS_CODE_OK: 1, STATUS_CODE_ERROR: 2 };
/** Attribute values are kept within this many characters (longer strings are cut, marked). */
const MAX_VALUE_CHARS = 256 * 1024;

export class OtlpShapeError extends Error {}

/** The field in either spelling: snake_case (protobuf) or lowerCamelCase (OTLP/JSON). */
export function field(o: Obj, snake: string): unknown {
  if (snake in o) return o[snake];
  const camel = snake.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
  return o[camel];
}
export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export function list(o: Obj, name: string, where: string): Obj[] {
  const v = field(o, name);
  if (v === undefined || v === null) return [];
  // Named as the sender spelled it (resource_spans in protobuf terms, resourceSpans in OTLP/JSON).
  const said = name in o ? name : name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
  if (!Array.isArray(v)) throw new OtlpShapeError(`${where}.${said} must be an array`);
  for (const [i, x] of v.entries()) if (!isObj(x)) throw new OtlpShapeError(`${where}.${said}[${i}] must be an object`);
  return v as Obj[];
}

/** An id: bytes (protobuf) or hex text (OTLP/JSON) -> lowercase hex of `bytes` bytes, or null when absent/empty. */
export function hexId(v: unknown, bytes: number): string | null | 'invalid' {
  if (v === undefined || v === null || v === '') return null;
  let hex: string;
  if (Array.isArray(v) || v instanceof Uint8Array) hex = Buffer.from(v as number[]).toString('hex');
  else if (typeof v === 'string' && /^[0-9a-fA-F]*$/.test(v)) hex = v.toLowerCase();
  else return 'invalid';
  if (hex.length === 0) return null;
  if (hex.length !== bytes * 2 || /^0+$/.test(hex)) return 'invalid';
  return hex;
}

export function int64(v: unknown): bigint | null {
  if (v === undefined || v === null) return null;
  if (typeof v === 'number' && Number.isFinite(v)) return BigInt(Math.trunc(v));
  if (typeof v === 'string' && /^\d+$/.test(v)) return BigInt(v);
  return null;
}

export const isoOfNanos = (n: bigint) => new Date(Number(n / 1_000_000n)).toISOString();

/** AnyValue -> a plain JSON value. */
export function anyValue(v: unknown): unknown {
  if (!isObj(v)) return null;
  const s = field(v, 'string_value');
  if (s !== undefined) return typeof s === 'string' && s.length > MAX_VALUE_CHARS ? `${s.slice(0, MAX_VALUE_CHARS)}…[cut]` : s;
  const b = field(v, 'bool_value');
  if (b !== undefined) return Boolean(b);
  const i = field(v, 'int_value');
  if (i !== undefined) {
    const n = Number(i);
    return Number.isSafeInteger(n) ? n : String(i);
  }
  const d = field(v, 'double_value');
  if (d !== undefined) return Number(d);
  const arr = field(v, 'array_value');
  if (isObj(arr)) return (Array.isArray(arr.values) ? arr.values : []).map(anyValue);
  const kv = field(v, 'kvlist_value');
  if (isObj(kv)) return attributes(Array.isArray(kv.values) ? (kv.values as Obj[]) : []);
  const by = field(v, 'bytes_value');
  if (by !== undefined) return Array.isArray(by) ? Buffer.from(by as number[]).toString('base64') : String(by);
  return null;
}

export function attributes(kvs: unknown[]): Record<string, unknown> {
  const out: Record<string, unknown> = Object.create(null);
  for (const kv of kvs) {
    if (!isObj(kv) || typeof kv.key !== 'string') continue;
    out[kv.key] = anyValue(kv.value);
  }
  return { ...out };
}

function enumOf(v: unknown, names: Record<string, number>): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'string') return names[v] ?? (/^\d+$/.test(v) ? Number(v) : 0);
  return 0;
}

export interface Normalized {
  spans: Span[];
  rejected: number;
  /** Distinct reasons, each with how many spans it rejected. */
  reasons: Map<string, number>;
}

/** Throws OtlpShapeError when the request itself is not an ExportTraceServiceRequest. */
export function normalizeRequest(request: unknown, receivedAt = new Date().toISOString()): Normalized {
  if (!isObj(request)) throw new OtlpShapeError('the body must be an ExportTraceServiceRequest object');
  const out: Normalized = { spans: [], rejected: 0, reasons: new Map() };
  const reject = (reason: string) => {
    out.rejected++;
    out.reasons.set(reason, (out.reasons.get(reason) ?? 0) + 1);
  };
  for (const [ri, rs] of list(request, 'resource_spans', 'request').entries()) {
    const resource = field(rs, 'resource');
    const resourceAttrs = isObj(resource) ? attributes(list(resource, 'attributes', `resource_spans[${ri}].resource`)) : {};
    const service = typeof resourceAttrs['service.name'] === 'string' ? (resourceAttrs['service.name'] as string) : null;
    for (const [si, ss] of list(rs, 'scope_spans', `resource_spans[${ri}]`).entries()) {
      const scope = field(ss, 'scope');
      const scopeOut = {
        name: isObj(scope) && typeof scope.name === 'string' ? scope.name : null,
        version: isObj(scope) && typeof scope.version === 'string' ? scope.version : null,
      };
      for (const sp of list(ss, 'spans', `resource_spans[${ri}].scope_spans[${si}]`)) {
        const traceId = hexId(field(sp, 'trace_id'), 16);
        const spanId = hexId(field(sp, 'span_id'), 8);
        const parent = hexId(field(sp, 'parent_span_id'), 8);
        if (traceId === null || traceId === 'invalid') {
          reject('trace_id must be 16 bytes, not all zero (32 hex digits in OTLP/JSON)');
          continue;
        }
        if (spanId === null || spanId === 'invalid') {
          reject('span_id must be 8 bytes, not all zero (16 hex digits in OTLP/JSON)');
          continue;
        }
        if (parent === 'invalid') {
          reject('parent_span_id must be empty or 8 bytes (16 hex digits in OTLP/JSON)');
          continue;
        }
        const name = field(sp, 'name');
        if (typeof name !== 'string' || name === '') {
          reject('a span needs a name');
          continue;
        }
        const start = int64(field(sp, 'start_time_unix_nano'));
        const end = int64(field(sp, 'end_time_unix_nano')) ?? start;
        if (start === null || start === 0n || end === null) {
          reject('start_time_unix_nano must be a positive integer (nanoseconds since the epoch)');
          continue;
        }
        const status = field(sp, 'status');
        const kind = enumOf(field(sp, 'kind'), KIND_NAMES);
        const code = isObj(status) ? enumOf(field(status, 'code'), STATUS_NAMES) : 0;
        out.spans.push({
          trace_id: traceId,
          span_id: spanId,
          parent_span_id: parent,
          name,
          kind: KINDS[kind] ?? 'unspecified',
          service_name: service,
          start_time: isoOfNanos(start),
          end_time: isoOfNanos(end),
          start_time_unix_nano: start.toString(),
          end_time_unix_nano: end.toString(),
          status: { code: STATUS[code] ?? 'unset', message: isObj(status) && typeof status.message === 'string' && status.message !== '' ? status.message : null },
          attributes: attributes(list(sp, 'attributes', 'span')),
          resource_attributes: resourceAttrs,
          events: list(sp, 'events', 'span').map((e) => {
            const t = int64(field(e, 'time_unix_nano'));
            return { name: typeof e.name === 'string' ? e.name : '', time: t ? isoOfNanos(t) : isoOfNanos(start), attributes: attributes(list(e, 'attributes', 'event')) };
          }),
          scope: scopeOut,
          received_at: receivedAt,
        });
      }
    }
  }
  return out;
}
