// Labelled counters and histograms for the metrics counted on every request and model call, kept
// as plain numbers and handed to prom-client's registry only when /metrics is read (issue 33).
// prom-client's own labelled children check and hash their labels again on every inc/observe (in a
// profile of a judged call, prom-client was about 1% of the server's CPU); these series are found
// once per label set and then cost a few additions. The text is prom-client's: the registry formats
// what get() answers, in the shape its Counter and Histogram answer.
import type { Registry } from 'prom-client';

type Labels = Record<string, string>;

export interface CounterSeries {
  inc(by?: number): void;
}

export interface HistogramSeries {
  observe(value: number): void;
}

abstract class Family<S> {
  readonly aggregator = 'sum';
  protected readonly entries = new Map<string, { labels: Labels; series: S }>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly string[],
    registry: Registry,
  ) {
    registry.registerMetric(this as never);
  }

  /** The series of these label values (in labelNames order), made on its first use: it appears in /metrics from then on. */
  with(...values: string[]): S {
    const key = values.join('\u0000');
    let entry = this.entries.get(key);
    if (!entry) {
      const labels: Labels = {};
      this.labelNames.forEach((name, i) => (labels[name] = values[i] ?? ''));
      entry = { labels, series: this.create() };
      this.entries.set(key, entry);
    }
    return entry.series;
  }

  protected abstract create(): S;
}

class Count implements CounterSeries {
  value = 0;
  inc(by = 1): void {
    // A counter only goes up (prom-client throws here; a metric must never fail the request it counts).
    if (by >= 0 && by !== Number.POSITIVE_INFINITY) this.value += by;
  }
}

export class SeriesCounter extends Family<Count> {
  readonly type = 'counter';

  protected create(): Count {
    return new Count();
  }

  get() {
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      values: [...this.entries.values()].map((e) => ({ labels: e.labels, value: e.series.value })),
    };
  }

  reset(): void {
    for (const e of this.entries.values()) e.series.value = 0;
  }
}

class Buckets implements HistogramSeries {
  /** Observations per bucket (not cumulative), and above the last bound at the end. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  constructor(private readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length + 1);
  }
  observe(value: number): void {
    if (!Number.isFinite(value)) return;
    let i = 0;
    while (i < this.bounds.length && value > this.bounds[i]) i++;
    this.counts[i]++;
    this.sum += value;
    this.count++;
  }
}

export class SeriesHistogram extends Family<Buckets> {
  readonly type = 'histogram';

  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    private readonly bounds: readonly number[],
    registry: Registry,
  ) {
    super(name, help, labelNames, registry);
  }

  protected create(): Buckets {
    return new Buckets(this.bounds);
  }

  /** As prom-client's Histogram: cumulative buckets, +Inf, sum and count per series, its labels shared. */
  getForPromString() {
    const values: Array<{ labels: Record<string, string | number>; sharedLabels: Labels; value: number; metricName: string }> = [];
    for (const { labels, series } of this.entries.values()) {
      let acc = 0;
      this.bounds.forEach((le, i) => {
        acc += series.counts[i];
        values.push({ labels: { le }, sharedLabels: labels, value: acc, metricName: `${this.name}_bucket` });
      });
      values.push({ labels: { le: '+Inf' }, sharedLabels: labels, value: series.count, metricName: `${this.name}_bucket` });
      values.push({ labels: {}, sharedLabels: labels, value: series.sum, metricName: `${this.name}_sum` });
      values.push({ labels: {}, sharedLabels: labels, value: series.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  get() {
    const data = this.getForPromString();
    return { ...data, values: data.values.map(({ labels, sharedLabels, value, metricName }) => ({ labels: { ...sharedLabels, ...labels }, value, metricName })) };
  }

  reset(): void {
    for (const e of this.entries.values()) {
      e.series.counts.fill(0);
      e.series.sum = 0;
      e.series.count = 0;
    }
  }
}
