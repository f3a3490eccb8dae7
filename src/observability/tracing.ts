// OpenTelemetry traces over OTLP/HTTP, only when OTEL_EXPORTER_OTLP_ENDPOINT (or the traces-specific
// endpoint) is set. Spans: one per HTTP request; inside it the tool (or REST operation) it ran, and
// inside that each judge-model attempt and the store write of the execution log. The provider is
// not registered globally: each server owns its own, and shutdown() flushes what is pending.
import { SpanKind, SpanStatusCode, trace, ROOT_CONTEXT, type Span, type Tracer } from '@opentelemetry/api';
import type { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import type { SpanRunner } from '../context.ts';
import type { ModelAttemptEvent } from '../engine/providers/resilient-model.ts';
import { requestContext } from './request-context.ts';

export interface TracingSettings {
  otlpTracesUrl?: string;
  serviceName: string;
}

export class Tracing implements SpanRunner {
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

  /**
   * `work` inside a child span of the current one (the request's, or an enclosing unit's), which is
   * the parent of whatever `work` traces in turn. Outside a traced request it just runs `work`.
   */
  async inSpan<T>(name: string, attributes: Record<string, string | number>, work: () => Promise<T>): Promise<T> {
    const current = requestContext.getStore();
    if (!this.tracer || !current) return work();
    const span = this.tracer.startSpan(name, { attributes }, trace.setSpan(ROOT_CONTEXT, current.span));
    try {
      return await requestContext.run(Object.assign({}, current, { span }), work);
    } catch (err) {
      // The error code only: a message may quote the caller's input.
      span.setStatus({ code: SpanStatusCode.ERROR, message: (err as { code?: string }).code ?? (err as Error).name });
      throw err;
    } finally {
      span.end();
    }
  }

  /** A finished model attempt as a child of the request span (recorded after the fact, with its times). */
  modelAttempt(e: ModelAttemptEvent, parent?: Span): void {
    if (!this.tracer) return;
    const span = this.tracer.startSpan(
      'judge model call',
      {
        kind: SpanKind.CLIENT,
        startTime: e.startedAt,
        attributes: {
          'gen_ai.request.model': e.model,
          'tribunal.model.attempt': e.attempt,
          'tribunal.model.outcome': e.outcome,
          'tribunal.model.retrying': e.retrying,
          ...(e.usage ? { 'gen_ai.usage.input_tokens': e.usage.input_tokens, 'gen_ai.usage.output_tokens': e.usage.output_tokens } : {}),
        },
      },
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
