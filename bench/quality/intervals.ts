// 95% intervals for bench:quality's figures: a percentile bootstrap over items (pairs, or best-of-4
// items), seeded with src/review's generator so a report always gives the same interval for the
// same outcomes. src/review's bootstrapIntervals resamples (person, judge) score pairs for MAE,
// kappa and correlations; the figures here are verdict statistics (accuracy, kappa over categories),
// so only its generator is shared and the statistic is a function of the resampled indexes.
import { seededRandom } from '../../src/calibration/fitness.ts';

export type Interval = [number, number] | null;
export const SEED = 20261126;
export const RESAMPLES = 2000;

/** numpy's default (linear) quantile of sorted values. */
function quantile(sorted: number[], q: number): number {
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

const r4 = (x: number) => Math.round(x * 10_000) / 10_000;

/**
 * The 2.5% and 97.5% percentiles of `statistic` over `resamples` resamples of n items with
 * replacement. A resample where the statistic is undefined (NaN, null) is left out; when more than
 * half are, the interval is null. Null for fewer than 2 items.
 */
export function bootstrapInterval(n: number, statistic: (indexes: number[]) => number | null, opts: { seed?: number; resamples?: number } = {}): Interval {
  if (n < 2) return null;
  const B = opts.resamples ?? RESAMPLES;
  const rand = seededRandom(opts.seed ?? SEED);
  const values: number[] = [];
  const idx = new Array<number>(n);
  for (let b = 0; b < B; b++) {
    for (let i = 0; i < n; i++) idx[i] = Math.floor(rand() * n);
    const v = statistic(idx);
    if (v !== null && Number.isFinite(v)) values.push(v);
  }
  if (values.length < B / 2) return null;
  values.sort((a, b) => a - b);
  return [r4(quantile(values, 0.025)), r4(quantile(values, 0.975))];
}

/** The interval of a share: the mean of 0/1 outcomes. */
export const shareInterval = (hits: boolean[], opts?: { seed?: number; resamples?: number }): Interval =>
  bootstrapInterval(hits.length, (idx) => idx.reduce((a, i) => a + (hits[i] ? 1 : 0), 0) / idx.length, opts);
