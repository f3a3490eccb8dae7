// What a judge's calibration permits (SPEC section 17): 95% intervals on the agreement metrics by a
// seeded paired bootstrap over items, expected calibration error of a confidence, and the fitness
// level every judge and evaluator read carries.
import { mulberry32 } from '../batch/experiments.ts';
import { confusion, kappaOf, pearson, spearman } from './metrics.ts';
import { confidenceCalibration, reliabilityOf } from './reliability.ts';

export type Interval = [number, number] | null;
export interface MetricIntervals {
  mae: Interval;
  kappa: Interval;
  pearson: Interval;
  spearman: Interval;
}
export type Fitness = 'gating' | 'monitoring' | 'exploration' | 'uncalibrated';

/** The thresholds of section 17. */
export const GATING = { kappa_low: 0.6, n: 100 };
export const MONITORING = { kappa: 0.4, n: 30 };

/** The seeded generator of the experiments' bootstrap, so that the same pairs always give the same intervals. */
export const seededRandom = mulberry32;

/** The value at quantile q of sorted values (linear between neighbours, as numpy's default). */
function quantile(sorted: number[], q: number): number {
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

/** How many resamples: 1000, fewer for very large sets so one run's metrics stay well under a second. */
export const resamplesFor = (n: number) => Math.max(200, Math.min(1000, Math.floor(2_000_000 / Math.max(1, n))));

/**
 * 95% percentile intervals of MAE, kappa, Pearson and Spearman, resampling items (pairs) with
 * replacement. A statistic undefined in a resample (a constant side) is left out of that resample;
 * when fewer than half the resamples define it, its interval is null. Null for fewer than 2 pairs.
 */
export function bootstrapIntervals(expected: number[], scores: number[], threshold: number, opts: { seed?: number; resamples?: number } = {}): MetricIntervals {
  const n = expected.length;
  const none: MetricIntervals = { mae: null, kappa: null, pearson: null, spearman: null };
  if (n < 2) return none;
  const B = opts.resamples ?? resamplesFor(n);
  const rand = seededRandom(opts.seed ?? 20261126);
  const acc: Record<keyof MetricIntervals, number[]> = { mae: [], kappa: [], pearson: [], spearman: [] };
  const x = new Array<number>(n);
  const y = new Array<number>(n);
  for (let b = 0; b < B; b++) {
    let abs = 0;
    for (let i = 0; i < n; i++) {
      const j = Math.floor(rand() * n);
      x[i] = expected[j];
      y[i] = scores[j];
      abs += Math.abs(y[i] - x[i]);
    }
    acc.mae.push(abs / n);
    const k = kappaOf(confusion(x, y, threshold));
    if (k !== null) acc.kappa.push(k);
    const p = pearson(x, y);
    if (p !== null) acc.pearson.push(p);
    const s = spearman(x, y);
    if (s !== null) acc.spearman.push(s);
  }
  const interval = (values: number[]): Interval => {
    if (values.length < B / 2) return null;
    values.sort((a, b) => a - b);
    return [quantile(values, 0.025), quantile(values, 0.975)];
  };
  return { mae: interval(acc.mae), kappa: interval(acc.kappa), pearson: interval(acc.pearson), spearman: interval(acc.spearman) };
}

/**
 * Expected calibration error of a confidence (0..1) against being right: 10 equal-width bins, the
 * n-weighted mean |accuracy - confidence| (calibration/reliability.ts). Null without any confidence.
 */
export const expectedCalibrationError = (confidence: Array<number | null>, right: boolean[]): number | null => reliabilityOf(confidence, right).ece;

/** One evaluator's level from its metrics (n, kappa and kappa's interval). */
export function fitnessOf(m: { n: number; kappa: number | null; intervals?: { kappa: Interval } | null } | null): Fitness {
  if (!m) return 'uncalibrated';
  const low = m.intervals?.kappa?.[0];
  if (low !== undefined && low !== null && low >= GATING.kappa_low && m.n >= GATING.n) return 'gating';
  if (m.kappa !== null && m.kappa >= MONITORING.kappa && m.n >= MONITORING.n) return 'monitoring';
  return 'exploration';
}

const ORDER: Fitness[] = ['uncalibrated', 'exploration', 'monitoring', 'gating'];
/** A judge is as fit as its weakest evaluator. */
export const weakest = (levels: Fitness[]): Fitness => (levels.length ? levels.reduce((a, b) => (ORDER.indexOf(a) <= ORDER.indexOf(b) ? a : b)) : 'uncalibrated');
export const atLeast = (level: Fitness, min: Fitness) => ORDER.indexOf(level) >= ORDER.indexOf(min);
export const FITNESS_LEVELS = ORDER;

/**
 * What a calibration metrics entry gains (section 17): intervals, and the ECE and reliability bins of
 * the judge's confidence against agreement within AGREEMENT_TOLERANCE (calibration/reliability.ts).
 */
export function intervalsAndEce(expected: number[], scores: number[], threshold: number, confidence: Array<number | null>) {
  return { intervals: bootstrapIntervals(expected, scores, threshold), ...confidenceCalibration(expected, scores, confidence) };
}

/** A judge's fitness (its weakest evaluator's) and the kappa interval with the lowest lower bound. */
export function judgeFitness(metrics: Array<{ n: number; kappa: number | null; intervals?: MetricIntervals | null }>): { fitness: Fitness; kappa_interval: Interval } {
  const intervals = metrics.map((m) => m.intervals?.kappa ?? null);
  const lowest = intervals.some((i) => i === null) ? null : intervals.reduce<Interval>((a, b) => (a === null || (b !== null && b[0] < a[0]) ? b : a), null);
  return { fitness: weakest(metrics.map(fitnessOf)), kappa_interval: lowest };
}
