// Logs, metrics, traces and readiness for one server, built from the config. main.ts builds one and
// hands it to buildServices (the model observer) and createServer (the HTTP side); shutdown calls
// readiness.beginShutdown() first and shutdown() last.
import type { Config } from '../config.ts';
import { costUsd } from '../engine/providers/cost.ts';
import type { ModelCallObserver } from '../engine/providers/resilient-model.ts';
import { createLogger, silentLogger, type Logger } from './logger.ts';
import { TribunalMetrics } from './metrics.ts';
import { Readiness } from './readiness.ts';
import { requestContext } from './request-context.ts';
import { Tracing } from './tracing.ts';

export interface Observability {
  logger: Logger;
  metrics: TribunalMetrics;
  tracing: Tracing;
  readiness: Readiness;
  /** Unset: /metrics answers 404. */
  metricsToken?: string;
  /** Hand to buildServices: logs, counts and traces every judge-model attempt. */
  modelObserver: ModelCallObserver;
  /** Flushes pending spans. */
  shutdown(): Promise<void>;
}

export async function createObservability(config: Config, opts: { logger?: Logger; processMetrics?: boolean; tracing?: Tracing } = {}): Promise<Observability> {
  const settings = config.observability;
  const logger = opts.logger ?? (await createLogger(settings));
  const tracing = opts.tracing ?? (await Tracing.create(settings));
  return assemble(config, logger, tracing, opts.processMetrics ?? settings.processMetrics);
}

/** For servers built without one (tests, embedders): no log output and no traces; request metrics still counted. */
export function quietObservability(config: Config): Observability {
  return assemble(config, silentLogger(), Tracing.disabled(), false);
}

function assemble(config: Config, logger: Logger, tracing: Tracing, processMetrics?: boolean): Observability {
  const settings = config.observability;
  const metrics = new TribunalMetrics((model, usage) => costUsd(model, usage, config.model.prices), { processMetrics });
  const modelObserver: ModelCallObserver = {
    watchLimiter: (limiter) => metrics.watchLimiter(limiter),
    attemptFinished(e) {
      const ctx = requestContext.getStore();
      metrics.modelAttempt(e);
      tracing.modelAttempt(e, ctx?.span);
      // A successful attempt's line is debug-level (issue 33): the request's own line, the model
      // metrics (calls, latency, tokens, cost per model) and the trace span carry the same facts,
      // and it was a second pino line per judged call. Failed and retried attempts stay warnings.
      const level = e.outcome === 'ok' ? 'debug' : 'warn';
      if (!logger.isLevelEnabled(level)) return;
      logger[level](
        {
          req_id: ctx?.requestId,
          model: e.model,
          attempt: e.attempt,
          outcome: e.outcome,
          retrying: e.retrying,
          input_tokens: e.usage?.input_tokens,
          output_tokens: e.usage?.output_tokens,
          latency_ms: Math.round(e.durationMs * 10) / 10,
          trace_id: ctx?.span?.spanContext().traceId,
        },
        'model call',
      );
    },
  };
  return { logger, metrics, tracing, readiness: new Readiness(), metricsToken: settings.metricsToken, modelObserver, shutdown: () => tracing.shutdown() };
}
