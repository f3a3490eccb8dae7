// Real spans through the real OpenTelemetry SDK, exported with the real OTLP/HTTP exporters (protobuf
// or JSON, optionally gzip) to a Tribunal server: what an instrumented application sends.
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { OTLPLogExporter as JsonLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPLogExporter as ProtoLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { Tracer } from '@opentelemetry/api';

export interface ExportOptions {
  url: string;
  key: string;
  encoding: 'protobuf' | 'json';
  gzip?: boolean;
  /** `Bearer` (default) or `Api-Key`. */
  scheme?: 'Bearer' | 'Api-Key';
}

/** Records the spans `build` makes with a tracer of service `service`; answers them finished. */
export async function recordSpans(service: string, build: (tracer: Tracer) => void | Promise<void>): Promise<ReadableSpan[]> {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ resource: resourceFromAttributes({ 'service.name': service }), spanProcessors: [new SimpleSpanProcessor(memory)] });
  await build(provider.getTracer('tribunal-test', '1.0.0'));
  await provider.forceFlush();
  const spans = memory.getFinishedSpans();
  await provider.shutdown();
  return spans;
}

export function otlpExporter(o: ExportOptions) {
  const opts = {
    url: `${o.url}/otel/v1/traces`,
    headers: { authorization: `${o.scheme ?? 'Bearer'} ${o.key}` },
    ...(o.gzip ? { compression: 'gzip' as never } : {}),
  };
  return o.encoding === 'protobuf' ? new ProtoExporter(opts) : new JsonExporter(opts);
}

/** Exports the spans once; answers the exporter's own result. */
export async function exportSpans(o: ExportOptions, spans: ReadableSpan[]): Promise<ExportResult> {
  const exporter = otlpExporter(o);
  const result = await new Promise<ExportResult>((resolve) => exporter.export(spans, resolve));
  await exporter.shutdown();
  return result;
}

/** The real OTLP logs exporter (protobuf or JSON) pointed at POST /otel/v1/logs. */
export function otlpLogExporter(o: ExportOptions) {
  const opts = {
    url: `${o.url}/otel/v1/logs`,
    headers: { authorization: `${o.scheme ?? 'Bearer'} ${o.key}` },
    ...(o.gzip ? { compression: 'gzip' as never } : {}),
  };
  return o.encoding === 'protobuf' ? new ProtoLogExporter(opts) : new JsonLogExporter(opts);
}

/** Exports the log records once; answers the exporter's own result. */
export async function exportLogs(o: ExportOptions, records: ReadableLogRecord[]): Promise<ExportResult> {
  const exporter = otlpLogExporter(o);
  const result = await new Promise<ExportResult>((resolve) => exporter.export(records, resolve));
  await exporter.shutdown();
  return result;
}

export { ExportResultCode };
