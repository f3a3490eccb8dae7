// src/observability/series.ts writes the per-request and per-call metrics itself and hands them to
// prom-client's registry only when /metrics is read. Its text must stay what prom-client's own
// Counter and Histogram give for the same observations (cumulative buckets, +Inf, sum, count, label
// order), including after a prom-client upgrade: this compares the two registries' texts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Counter, Histogram, Registry } from 'prom-client';
import { TribunalMetrics } from '../src/observability/metrics.ts';
import { SeriesCounter, SeriesHistogram } from '../src/observability/series.ts';

const BOUNDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];
const OBSERVED: Array<[string, string, number]> = [
  ['POST', '/v1/judges/:id/execute/', 0.004],
  ['POST', '/v1/judges/:id/execute/', 0.01], // on a bound: counted in that bucket
  ['POST', '/v1/judges/:id/execute/', 0.3],
  ['GET', '/v1/judges/', 0.02],
  ['GET', '/v1/judges/', 7], // above the last bound: only +Inf
  ['POST', '/v1/judges/:id/execute/', 0.05],
];

describe('metric series', () => {
  it('give the same /metrics text as prom-client for the same counts and observations', async () => {
    const theirs = new Registry();
    const ours = new Registry();
    const count = new Counter({ name: 't_requests_total', help: 'Requests.', labelNames: ['method', 'route'], registers: [theirs] });
    const hist = new Histogram({ name: 't_duration_seconds', help: 'Durations.', labelNames: ['method', 'route'], buckets: BOUNDS, registers: [theirs] });
    const seriesCount = new SeriesCounter('t_requests_total', 'Requests.', ['method', 'route'], ours);
    const seriesHist = new SeriesHistogram('t_duration_seconds', 'Durations.', ['method', 'route'], BOUNDS, ours);
    for (const [method, route, seconds] of OBSERVED) {
      count.labels(method, route).inc();
      hist.labels(method, route).observe(seconds);
      seriesCount.with(method, route).inc();
      seriesHist.with(method, route).observe(seconds);
    }
    count.labels('POST', '/v1/judges/:id/execute/').inc(2.5);
    seriesCount.with('POST', '/v1/judges/:id/execute/').inc(2.5);
    const text = await ours.metrics();
    assert.match(text, /t_duration_seconds_bucket\{le="\+Inf",method="GET",route="\/v1\/judges\/"\} 2/);
    assert.equal(text, await theirs.metrics());
  });

  it('never throw from a count: a negative or infinite increment is left out, not counted', async () => {
    const registry = new Registry();
    const series = new SeriesCounter('t_total', 'Total.', ['k'], registry);
    series.with('a').inc(-1);
    series.with('a').inc(Number.POSITIVE_INFINITY);
    series.with('a').inc(3);
    assert.match(await registry.metrics(), /t_total\{k="a"\} 3/);
  });
});

describe('the server metrics (src/observability/metrics.ts)', () => {
  it('count each label set apart: a route, status or method shared with another series never merges them', async () => {
    const metrics = new TribunalMetrics(() => 0.5, { processMetrics: false });
    const expected = new Map<string, number>();
    let n = 0;
    // Every combination, each counted a different number of times (1, 2, 3, ...), so a mixed-up lookup shows.
    for (const method of ['GET', 'POST'])
      for (const route of ['/v1/judges/', '/v1/judges/:id/', '(unmatched)'])
        for (const status of [200, 404, 499]) {
          n++;
          for (let i = 0; i < n; i++) metrics.request(method, route, status, 0.01);
          expected.set(JSON.stringify({ method, route, status: String(status) }), n);
        }
    const seen = (await metrics.registry.getSingleMetric('tribunal_http_requests_total')!.get()).values;
    assert.equal(seen.length, expected.size);
    for (const { labels, value } of seen)
      assert.equal(value, expected.get(JSON.stringify({ method: labels.method, route: labels.route, status: labels.status })), JSON.stringify(labels));
    const durations = (await metrics.registry.getSingleMetric('tribunal_http_request_duration_seconds')!.get()).values.filter((v) =>
      (v as { metricName?: string }).metricName?.endsWith('_count'),
    );
    assert.equal(durations.length, expected.size);
    for (const { labels, value } of durations)
      assert.equal(value, expected.get(JSON.stringify({ method: labels.method, route: labels.route, status: labels.status })), JSON.stringify(labels));

    const calls = new Map<string, number>();
    n = 0;
    for (const model of ['claude-a', 'claude-b'])
      for (const outcome of ['ok', 'rate_limited', 'server_error'] as const) {
        n++;
        for (let i = 0; i < n; i++) metrics.modelAttempt({ model, attempt: 1, outcome, retrying: false, startedAt: 0, durationMs: 5 });
        calls.set(`${model} ${outcome}`, n);
      }
    const counted = (await metrics.registry.getSingleMetric('tribunal_model_calls_total')!.get()).values;
    assert.equal(counted.length, calls.size);
    for (const { labels, value } of counted) assert.equal(value, calls.get(`${labels.model} ${labels.outcome}`), JSON.stringify(labels));
  });
});
