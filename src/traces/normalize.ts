// An OTLP ExportTraceServiceRequest (protobuf decoded with field names as in the .proto, or OTLP/JSON
// with lowerCamelCase names and hex ids) -> Tribunal's spans. A span that cannot be kept (a bad id, no
// name) is rejected with its reason and counted, never dropped silently (partial_success).
import { isoNow, isoOfMs } from '../iso-time.ts';
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

/** Reads a field of a request's object by its .proto (snake_case) name. */
export type Read = (o: Obj, snake: string) => unknown;

/** lowerCamelCase of the .proto names the readers ask for: a fixed few, each converted once, not per lookup. */
const camelNames = new Map<string, string>();
const camelOf = (snake: string): string => {
  let camel = camelNames.get(snake);
  if (camel === undefined) camelNames.set(snake, (camel = snake.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase())));
  return camel;
};

/** The field in either spelling: snake_case (protobuf) or lowerCamelCase (OTLP/JSON). */
export const field: Read = (o, snake) => (snake in o ? o[snake] : o[camelOf(snake)]);

/**
 * A field of a protobufjs message as decoded (proto.ts decodeExportMessage): set only when it is the
 * message's own property, since unset fields read their defaults from the prototype ('' for a string,
 * an empty buffer for bytes). toObject with defaults:false keeps exactly the own ones, so reading the
 * message this way yields what reading its toObject would, without that second walk (issue 33).
 */
export const own: Read = (o, name) => (Object.hasOwn(o, name) ? o[name] : undefined);
export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export function list(o: Obj, name: string, where: string, read: Read = field): Obj[] {
  const v = read(o, name);
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new OtlpShapeError(`${where}.${spelled(o, name)} must be an array`);
  for (let i = 0; i < v.length; i++) if (!isObj(v[i])) throw new OtlpShapeError(`${where}.${spelled(o, name)}[${i}] must be an object`);
  return v as Obj[];
}
// Named as the sender spelled it (resource_spans in protobuf terms, resourceSpans in OTLP/JSON).
const spelled = (o: Obj, name: string) => (name in o ? name : camelOf(name));

/** An id: bytes (protobuf) or hex text (OTLP/JSON) -> lowercase hex of `bytes` bytes, or null when absent/empty. */
export function hexId(v: unknown, bytes: number): string | null | 'invalid' {
  if (v === undefined || v === null || v === '') return null;
  let hex: string;
  // A decoded message's bytes are a Buffer over the body: read in place, not copied.
  if (Buffer.isBuffer(v)) hex = v.toString('hex');
  else if (Array.isArray(v) || v instanceof Uint8Array) hex = Buffer.from(v as number[]).toString('hex');
  else if (typeof v === 'string' && /^[0-9a-fA-F]*$/.test(v)) hex = v.toLowerCase();
  else return 'invalid';
  if (hex.length === 0) return null;
  if (hex.length !== bytes * 2 || /^0+$/.test(hex)) return 'invalid';
  return hex;
}

/** A protobufjs Long (a decoded message's 64-bit integer): its two 32-bit halves and signedness. */
interface Long {
  low: number;
  high: number;
  unsigned: boolean;
}
const isLong = (v: unknown): v is Long => typeof v === 'object' && v !== null && typeof (v as Long).low === 'number' && typeof (v as Long).high === 'number';
/** The Long's value, as exactly as toObject's decimal text of it (longs: String) would give. */
function longValue(v: Long): bigint {
  const u = (BigInt(v.high >>> 0) << 32n) | BigInt(v.low >>> 0);
  return v.unsigned ? u : BigInt.asIntN(64, u);
}

export function int64(v: unknown): bigint | null {
  if (v === undefined || v === null) return null;
  if (isLong(v)) return longValue(v);
  if (typeof v === 'number' && Number.isFinite(v)) return BigInt(Math.trunc(v));
  if (typeof v === 'string' && /^\d+$/.test(v)) return BigInt(v);
  return null;
}

export const isoOfNanos = (n: bigint) => isoOfMs(Number(n / 1_000_000n));

/** AnyValue -> a plain JSON value. */
export function anyValue(v: unknown, read: Read = field): unknown {
  if (!isObj(v)) return null;
  const s = read(v, 'string_value');
  if (s !== undefined) return typeof s === 'string' && s.length > MAX_VALUE_CHARS ? `${s.slice(0, MAX_VALUE_CHARS)}…[cut]` : s;
  const b = read(v, 'bool_value');
  if (b !== undefined) return Boolean(b);
  const i = read(v, 'int_value');
  if (i !== undefined) {
    const big = isLong(i) ? longValue(i) : undefined;
    const n = Number(big ?? i);
    return Number.isSafeInteger(n) ? n : String(big ?? i);
  }
  const d = read(v, 'double_value');
  if (d !== undefined) return Number(d);
  const arr = read(v, 'array_value');
  if (isObj(arr)) {
    const values = read(arr, 'values');
    return Array.isArray(values) ? values.map((x) => anyValue(x, read)) : [];
  }
  const kv = read(v, 'kvlist_value');
  if (isObj(kv)) {
    const values = read(kv, 'values');
    return attributes(Array.isArray(values) ? values : [], read);
  }
  const by = read(v, 'bytes_value');
  if (by !== undefined) return Array.isArray(by) || by instanceof Uint8Array ? Buffer.from(by as number[]).toString('base64') : String(by);
  return null;
}

export function attributes(kvs: unknown[], read: Read = field): Record<string, unknown> {
  // One plain object filled in place (not a null-prototype one then copied): the only key that an
  // assignment would not make an own property is '__proto__' (a setter on Object.prototype), so it is defined.
  const out: Record<string, unknown> = {};
  for (const kv of kvs) {
    if (!isObj(kv)) continue;
    const key = read(kv, 'key');
    if (typeof key !== 'string') continue;
    const value = anyValue(read(kv, 'value'), read);
    if (key === '__proto__') Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
    else out[key] = value;
  }
  return out;
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
export function normalizeRequest(request: unknown, receivedAt = isoNow()): Normalized {
  return normalize(request, receivedAt, field);
}

/** The same for a request as protobufjs decoded it (proto.ts decodeExportMessage), read in place. */
export function normalizeMessage(request: unknown, receivedAt = isoNow()): Normalized {
  return normalize(request, receivedAt, own);
}

/**
 * Counts a span rejected for `reason`. At module level, not a closure made per request: tsx (esbuild
 * keepNames) names every named closure with a defineProperty call, about 3 µs a request (issue 33).
 */
function reject(out: Normalized, reason: string): void {
  out.rejected++;
  out.reasons.set(reason, (out.reasons.get(reason) ?? 0) + 1);
}

function normalize(request: unknown, receivedAt: string, read: Read): Normalized {
  if (!isObj(request)) throw new OtlpShapeError('the body must be an ExportTraceServiceRequest object');
  const out: Normalized = { spans: [], rejected: 0, reasons: new Map() };
  const resourceSpans = list(request, 'resource_spans', 'request', read);
  for (let ri = 0; ri < resourceSpans.length; ri++) {
    const rs = resourceSpans[ri]!;
    const resource = read(rs, 'resource');
    const resourceAttrs = isObj(resource) ? attributes(list(resource, 'attributes', `resource_spans[${ri}].resource`, read), read) : {};
    const service = typeof resourceAttrs['service.name'] === 'string' ? (resourceAttrs['service.name'] as string) : null;
    const scopeSpans = list(rs, 'scope_spans', `resource_spans[${ri}]`, read);
    for (let si = 0; si < scopeSpans.length; si++) {
      const ss = scopeSpans[si]!;
      const scope = read(ss, 'scope');
      const scopeName = isObj(scope) ? read(scope, 'name') : undefined;
      const scopeVersion = isObj(scope) ? read(scope, 'version') : undefined;
      const scopeOut = { name: typeof scopeName === 'string' ? scopeName : null, version: typeof scopeVersion === 'string' ? scopeVersion : null };
      for (const sp of list(ss, 'spans', `resource_spans[${ri}].scope_spans[${si}]`, read)) {
        const traceId = hexId(read(sp, 'trace_id'), 16);
        const spanId = hexId(read(sp, 'span_id'), 8);
        const parent = hexId(read(sp, 'parent_span_id'), 8);
        if (traceId === null || traceId === 'invalid') {
          reject(out, 'trace_id must be 16 bytes, not all zero (32 hex digits in OTLP/JSON)');
          continue;
        }
        if (spanId === null || spanId === 'invalid') {
          reject(out, 'span_id must be 8 bytes, not all zero (16 hex digits in OTLP/JSON)');
          continue;
        }
        if (parent === 'invalid') {
          reject(out, 'parent_span_id must be empty or 8 bytes (16 hex digits in OTLP/JSON)');
          continue;
        }
        const name = read(sp, 'name');
        if (typeof name !== 'string' || name === '') {
          reject(out, 'a span needs a name');
          continue;
        }
        const start = int64(read(sp, 'start_time_unix_nano'));
        const end = int64(read(sp, 'end_time_unix_nano')) ?? start;
        if (start === null || start === 0n || end === null) {
          reject(out, 'start_time_unix_nano must be a positive integer (nanoseconds since the epoch)');
          continue;
        }
        const status = read(sp, 'status');
        const kind = enumOf(read(sp, 'kind'), KIND_NAMES);
        const code = isObj(status) ? enumOf(read(status, 'code'), STATUS_NAMES) : 0;
        const message = isObj(status) ? read(status, 'message') : undefined;
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
          status: { code: STATUS[code] ?? 'unset', message: typeof message === 'string' && message !== '' ? message : null },
          attributes: attributes(list(sp, 'attributes', 'span', read), read),
          resource_attributes: resourceAttrs,
          events: list(sp, 'events', 'span', read).map((e) => {
            const t = int64(read(e, 'time_unix_nano'));
            const eventName = read(e, 'name');
            return {
              name: typeof eventName === 'string' ? eventName : '',
              time: t ? isoOfNanos(t) : isoOfNanos(start),
              attributes: attributes(list(e, 'attributes', 'event', read), read),
            };
          }),
          scope: scopeOut,
          received_at: receivedAt,
        });
      }
    }
  }
  return out;
}
