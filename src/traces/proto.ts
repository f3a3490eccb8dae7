// OTLP protobuf through protobufjs and the official opentelemetry-proto definitions (vendored
// unmodified in ./proto with their Apache-2.0 LICENSE): no hand-written wire decoding.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';

const PROTO_DIR = fileURLToPath(new URL('./proto/', import.meta.url));

let root: protobuf.Root | undefined;
function loadRoot(): protobuf.Root {
  if (root) return root;
  const r = new protobuf.Root();
  r.resolvePath = (_origin, target) => path.join(PROTO_DIR, target);
  // keepCase: field names as in the .proto files (trace_id), so one reader serves both encodings.
  r.loadSync('opentelemetry/proto/collector/trace/v1/trace_service.proto', { keepCase: true });
  r.loadSync('opentelemetry/proto/collector/logs/v1/logs_service.proto', { keepCase: true });
  // google.rpc.Status, the body of an OTLP error answer (OTLP/HTTP spec, "Failures").
  r.add(new protobuf.Type('Status').add(new protobuf.Field('code', 1, 'int32')).add(new protobuf.Field('message', 2, 'string')));
  r.resolveAll();
  root = r;
  return r;
}

// Each type looked up once: lookupType walks the namespace by the dotted name on every call.
const types = new Map<string, protobuf.Type>();
const type = (name: string): protobuf.Type => {
  let t = types.get(name);
  if (!t) types.set(name, (t = loadRoot().lookupType(name)));
  return t;
};

/** Decodes an ExportTraceServiceRequest; throws protobufjs's own error on a malformed or truncated body. */
export function decodeExportRequest(body: Uint8Array): Record<string, unknown> {
  const t = type('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest');
  const message = t.decode(body);
  return t.toObject(message, { longs: String, enums: Number, bytes: Array, defaults: false, arrays: true }) as Record<string, unknown>;
}

/**
 * Decodes an ExportTraceServiceRequest into protobufjs's message, not a plain object: the receiver
 * reads it in place (normalize.ts normalizeMessage), 64-bit times as Long and ids as Buffers, which
 * saves toObject's walk and its decimal text of every Long (issue 33). Throws as decodeExportRequest.
 */
export function decodeExportMessage(body: Uint8Array): Record<string, unknown> {
  return type('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest').decode(body) as unknown as Record<string, unknown>;
}

export function encodeExportResponse(partial?: { rejected_spans: number; error_message: string }): Uint8Array {
  const t = type('opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse');
  return t.encode(t.fromObject(partial ? { partial_success: { rejected_spans: partial.rejected_spans, error_message: partial.error_message } } : {})).finish();
}

export function encodeStatus(code: number, message: string): Uint8Array {
  const t = type('Status');
  return t.encode(t.fromObject({ code, message })).finish();
}

/** Encodes a request from its plain object form (the write-back exporter and tests). */
export function encodeExportRequest(request: Record<string, unknown>): Uint8Array {
  const t = type('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest');
  return t.encode(t.fromObject(request)).finish();
}

/** Decodes an ExportLogsServiceRequest (POST /otel/v1/logs); throws protobufjs's own error on a malformed body. */
export function decodeLogsRequest(body: Uint8Array): Record<string, unknown> {
  const t = type('opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest');
  return t.toObject(t.decode(body), { longs: String, enums: Number, bytes: Array, defaults: false, arrays: true }) as Record<string, unknown>;
}

export function encodeLogsResponse(partial?: { rejected_log_records: number; error_message: string }): Uint8Array {
  const t = type('opentelemetry.proto.collector.logs.v1.ExportLogsServiceResponse');
  return t.encode(t.fromObject(partial ? { partial_success: partial } : {})).finish();
}
