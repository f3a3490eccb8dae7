// OpenTelemetry traces over OTLP/HTTP, only when OTEL_EXPORTER_OTLP_ENDPOINT (or the traces-specific
// endpoint) is set. Spans: one per HTTP request, a child per judge-model attempt. The provider is
// not registered globally: each server owns its own, and shutdown() flushes what is pending.
import { SpanKind, SpanStatusCode, trace, ROOT_CONTEXT, type Span, type Tracer } from '@opentelemetry/api';
import type { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import type { ModelAttemptEvent } from '../engine/resilient-model.ts';

export interface TracingSettings {
  otlpTracesUrl?: string;
  serviceName: string;
}

export class Tracing {
  private constructor(
    private readonly provider?: BasicTracerProvider,
    private readonly tracer?: Tracer,
  ) {}

  /** No endpoint, no tracing: the SDK and the exporter are not even loaded (about 0.4 s of start-up). */
  static async create(settings: TracingSettings): Promise<Tracing> {
    if (!settings.otlpTracesUrl) return new Tracing();
    const [{ OTLPTraceExporter }, { resourceFromAttributes }, { BasicTracerProvider, BatchSpanProcessor }] = await Promise.all([
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/resources'),
      import('@opentelemetry/sdk-trace-base'),
    ]);
    const provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': settings.serviceName }),
      spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: settings.otlpTracesUrl }))],
    });
    return new Tracing(provider, provider.getTracer('tribunal'));
  }

  static disabled(): Tracing {
    return new Tracing();
  }

  get enabled(): boolean {
    return this.tracer !== undefined;
  }

  /** The span of one HTTP request; named and finished by endRequestSpan once the route is known. */
  startRequestSpan(method: string): Span | undefined {
    return this.tracer?.startSpan(method, { kind: SpanKind.SERVER, attributes: { 'http.request.method': method } }, ROOT_CONTEXT);
  }

  endRequestSpan(span: Span, method: string, route: string, status: number, orgId?: string): void {
    span.updateName(`${method} ${route}`);
    span.setAttribute('http.route', route);
    span.setAttribute('http.response.status_code', status);
    if (orgId) span.setAttribute('tribunal.org_id', orgId);
    if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  }

  /** A finished model attempt as a child of the request span (recorded after the fact, with its times). */
  modelAttempt(e: ModelAttemptEvent, parent?: Span): void {
    if (!this.tracer) return;
    const span = this.tracer.startSpan(
      'judge model call',
      { kind: SpanKind.CLIENT, startTime: e.startedAt, attributes: { 'gen_ai.request.model': e.model, 'tribunal.model.attempt': e.attempt, 'tribunal.model.outcome': e.outcome, 'tribunal.model.retrying': e.retrying, ...(e.usage ? { 'gen_ai.usage.input_tokens': e.usage.input_tokens, 'gen_ai.usage.output_tokens': e.usage.output_tokens } : {}) } },
      parent ? trace.setSpan(ROOT_CONTEXT, parent) : ROOT_CONTEXT,
    );
    if (e.outcome !== 'ok') span.setStatus({ code: SpanStatusCode.ERROR, message: e.outcome });
    span.end(e.startedAt + e.durationMs);
  }

  /** Exports what is pending and stops (shutdown; tests). */
  async shutdown(): Promise<void> {
    await this.provider?.shutdown();
  }

  async flush(): Promise<void> {
    await this.provider?.forceFlush();
  }
}
