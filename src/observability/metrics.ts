// Prometheus metrics (prom-client), on a registry of this server's own: no global registry, so
// tests and embedders can build several servers in one process.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Limiter } from '../engine/providers/limiter.ts';
import type { ModelAttemptEvent } from '../engine/providers/resilient-model.ts';
import type { ModelUsage } from '../engine/providers/model.ts';

type Inc = { inc(by?: number): void };

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export class TribunalMetrics {
  readonly registry = new Registry();
  private readonly httpRequests = new Counter({
    name: 'tribunal_http_requests_total',
    help: 'HTTP requests answered, by method, route and status.',
    labelNames: ['method', 'route', 'status'],
    registers: [this.registry],
  });
  private readonly httpDuration = new Histogram({
    name: 'tribunal_http_request_duration_seconds',
    help: 'Time from a request arriving to its answer being sent.',
    labelNames: ['method', 'route', 'status'],
    buckets: SECONDS,
    registers: [this.registry],
  });
  private readonly modelCalls = new Counter({
    name: 'tribunal_model_calls_total',
    help: 'Judge-model call attempts, by model and outcome (ok or the failure kind); a retried call counts once per attempt.',
    labelNames: ['model', 'outcome'],
    registers: [this.registry],
  });
  private readonly modelDuration = new Histogram({
    name: 'tribunal_model_call_duration_seconds',
    help: 'Judge-model attempt latency from getting a limiter slot to the answer.',
    labelNames: ['model', 'outcome'],
    buckets: SECONDS,
    registers: [this.registry],
  });
  private readonly modelRetries = new Counter({
    name: 'tribunal_model_retries_total',
    help: 'Failed judge-model attempts that were retried, by the failure kind.',
    labelNames: ['model', 'reason'],
    registers: [this.registry],
  });
  private readonly modelTokens = new Counter({
    name: 'tribunal_model_tokens_total',
    help: 'Judge-model tokens, by model and direction (input, output).',
    labelNames: ['model', 'direction'],
    registers: [this.registry],
  });
  private readonly modelCost = new Counter({
    name: 'tribunal_model_cost_usd_total',
    help: 'Judge-model cost in USD from the price table; models without a price are not counted.',
    labelNames: ['model'],
    registers: [this.registry],
  });
  private readonly storeErrors = new Counter({
    name: 'tribunal_store_errors_total',
    help: 'Requests answered 503 store_unavailable because the store could not be reached.',
    registers: [this.registry],
  });
  // Budgets (room h-cost)
  private readonly budgetRefusals = new Counter({
    name: 'tribunal_budget_refusals_total',
    help: 'Runs refused with 429 budget_exceeded because a cost cap was spent.',
    registers: [this.registry],
  });
  private limiter?: Limiter;
  private readonly httpSeries = new Map<string, { count: { inc(): void }; duration: { observe(v: number): void } }>();
  private readonly modelSeries = new Map<string, { calls: Inc; duration: { observe(v: number): void } }>();
  private readonly modelUsage = new Map<string, { input: Inc; output: Inc; cost?: Inc }>();

  constructor(
    private readonly costOf: (model: string, usage: ModelUsage) => number | null,
    opts: { processMetrics?: boolean } = {},
  ) {
    // Process metrics (CPU, memory, event-loop lag, GC) start monitors: only for a real server.
    if (opts.processMetrics !== false) collectDefaultMetrics({ register: this.registry });
    const metrics = this;
    new Gauge({
      name: 'tribunal_model_limiter_queued',
      help: 'Judge-model calls waiting for a slot (TRIBUNAL_MODEL_CONCURRENCY).',
      registers: [this.registry],
      collect() {
        this.set(metrics.limiter?.queued ?? 0);
      },
    });
    new Gauge({
      name: 'tribunal_model_limiter_in_flight',
      help: 'Judge-model calls in flight.',
      registers: [this.registry],
      collect() {
        this.set(metrics.limiter?.inFlight ?? 0);
      },
    });
  }

  watchLimiter(limiter: Limiter): void {
    this.limiter = limiter;
  }

  request(method: string, route: string, status: number, seconds: number, problemCode?: string): void {
    // The labelled children, looked up once per label set: prom-client hashes the labels on every call otherwise.
    const key = `${method} ${status} ${route}`;
    let series = this.httpSeries.get(key);
    if (!series) {
      series = { count: this.httpRequests.labels(method, route, String(status)), duration: this.httpDuration.labels(method, route, String(status)) };
      this.httpSeries.set(key, series);
    }
    series.count.inc();
    series.duration.observe(seconds);
    if (problemCode === 'store_unavailable') this.storeErrors.inc();
    if (problemCode === 'budget_exceeded') this.budgetRefusals.inc(); // room h-cost
  }

  modelAttempt(e: ModelAttemptEvent): void {
    // As for requests: the labelled children looked up once per label set, not hashed per call.
    // Each is made on its first use, so a series appears in /metrics exactly when it did before.
    const key = `${e.model} ${e.outcome}`;
    let series = this.modelSeries.get(key);
    if (!series) {
      series = { calls: this.modelCalls.labels(e.model, e.outcome), duration: this.modelDuration.labels(e.model, e.outcome) };
      this.modelSeries.set(key, series);
    }
    series.calls.inc();
    series.duration.observe(e.durationMs / 1000);
    if (e.retrying) this.modelRetries.inc({ model: e.model, reason: e.outcome });
    if (!e.usage) return;
    let perModel = this.modelUsage.get(e.model);
    if (!perModel) {
      perModel = { input: this.modelTokens.labels(e.model, 'input'), output: this.modelTokens.labels(e.model, 'output') };
      this.modelUsage.set(e.model, perModel);
    }
    perModel.input.inc(e.usage.input_tokens);
    perModel.output.inc(e.usage.output_tokens);
    // Priced as the execution log prices it: cached prompt tokens at the cache rates (engine/providers/cost.ts).
    const cost = this.costOf(e.model, e.usage);
    if (cost !== null) (perModel.cost ??= this.modelCost.labels(e.model)).inc(cost);
  }
}
