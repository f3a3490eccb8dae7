// Prometheus metrics (prom-client), on a registry of this server's own: no global registry, so
// tests and embedders can build several servers in one process.
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { Limiter } from '../engine/providers/limiter.ts';
import type { ModelAttemptEvent } from '../engine/providers/resilient-model.ts';
import type { ModelUsage } from '../engine/providers/model.ts';
import { SeriesCounter, SeriesHistogram, type CounterSeries, type HistogramSeries } from './series.ts';

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export class TribunalMetrics {
  readonly registry = new Registry();
  // Counted on every request and model call: plain series (series.ts), not prom-client's children.
  private readonly httpRequests = new SeriesCounter(
    'tribunal_http_requests_total',
    'HTTP requests answered, by method, route and status.',
    ['method', 'route', 'status'],
    this.registry,
  );
  private readonly httpDuration = new SeriesHistogram(
    'tribunal_http_request_duration_seconds',
    'Time from a request arriving to its answer being sent.',
    ['method', 'route', 'status'],
    SECONDS,
    this.registry,
  );
  private readonly modelCalls = new SeriesCounter(
    'tribunal_model_calls_total',
    'Judge-model call attempts, by model and outcome (ok or the failure kind); a retried call counts once per attempt.',
    ['model', 'outcome'],
    this.registry,
  );
  private readonly modelDuration = new SeriesHistogram(
    'tribunal_model_call_duration_seconds',
    'Judge-model attempt latency from getting a limiter slot to the answer.',
    ['model', 'outcome'],
    SECONDS,
    this.registry,
  );
  private readonly modelRetries = new SeriesCounter(
    'tribunal_model_retries_total',
    'Failed judge-model attempts that were retried, by the failure kind.',
    ['model', 'reason'],
    this.registry,
  );
  private readonly modelTokens = new SeriesCounter(
    'tribunal_model_tokens_total',
    'Judge-model tokens, by model and direction (input, output).',
    ['model', 'direction'],
    this.registry,
  );
  private readonly modelCost = new SeriesCounter(
    'tribunal_model_cost_usd_total',
    'Judge-model cost in USD from the price table; models without a price are not counted.',
    ['model'],
    this.registry,
  );
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
  // Found by the label values themselves, one Map per label (route, then status, then method; model,
  // then outcome), not by a key string built per request: a fresh string is hashed on every lookup,
  // the route and model strings a request carries are the same objects each time (hash kept).
  private readonly httpSeries = new Map<string, Map<number, Map<string, { count: CounterSeries; duration: HistogramSeries }>>>();
  private readonly modelSeries = new Map<string, Map<string, { calls: CounterSeries; duration: HistogramSeries }>>();
  private readonly modelUsage = new Map<string, { input: CounterSeries; output: CounterSeries; cost?: CounterSeries }>();

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
    // The series looked up once per label set.
    let byStatus = this.httpSeries.get(route);
    if (!byStatus) this.httpSeries.set(route, (byStatus = new Map()));
    let byMethod = byStatus.get(status);
    if (!byMethod) byStatus.set(status, (byMethod = new Map()));
    let series = byMethod.get(method);
    if (!series) {
      series = { count: this.httpRequests.with(method, route, String(status)), duration: this.httpDuration.with(method, route, String(status)) };
      byMethod.set(method, series);
    }
    series.count.inc();
    series.duration.observe(seconds);
    if (problemCode === 'store_unavailable') this.storeErrors.inc();
    if (problemCode === 'budget_exceeded') this.budgetRefusals.inc(); // room h-cost
  }

  modelAttempt(e: ModelAttemptEvent): void {
    // As for requests: the series looked up once per label set. Each is made on its first use, so a
    // series appears in /metrics exactly when prom-client's children made it appear.
    let byOutcome = this.modelSeries.get(e.model);
    if (!byOutcome) this.modelSeries.set(e.model, (byOutcome = new Map()));
    let series = byOutcome.get(e.outcome);
    if (!series) {
      series = { calls: this.modelCalls.with(e.model, e.outcome), duration: this.modelDuration.with(e.model, e.outcome) };
      byOutcome.set(e.outcome, series);
    }
    series.calls.inc();
    series.duration.observe(e.durationMs / 1000);
    if (e.retrying) this.modelRetries.with(e.model, e.outcome).inc();
    if (!e.usage) return;
    let perModel = this.modelUsage.get(e.model);
    if (!perModel) {
      perModel = { input: this.modelTokens.with(e.model, 'input'), output: this.modelTokens.with(e.model, 'output') };
      this.modelUsage.set(e.model, perModel);
    }
    perModel.input.inc(e.usage.input_tokens);
    perModel.output.inc(e.usage.output_tokens);
    // Priced as the execution log prices it: cached prompt tokens at the cache rates (engine/providers/cost.ts).
    const cost = this.costOf(e.model, e.usage);
    if (cost !== null) (perModel.cost ??= this.modelCost.with(e.model)).inc(cost);
  }
}
