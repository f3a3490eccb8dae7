// The paired bootstrap of experiments (experiments.ts) and its seeded generator (mulberry32, also
// calibration's): pure functions over Float64Arrays. The interval is the percentile interval of
// 2,000 resampled means (by default) drawn with a seeded PRNG, so the same two runs always give the
// same interval.

import { drawSums, fits } from './bootstrap-wasm.ts';

/** mulberry32: a small, fast, seedable 32-bit PRNG; answers floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Linear-interpolation quantile (numpy's default, "type 7") of sorted values. */
export function quantileSorted(sorted: Float64Array, q: number): number {
  if (!sorted.length) return NaN;
  const h = (sorted.length - 1) * q;
  const lo = Math.floor(h);
  const hi = Math.min(sorted.length - 1, lo + 1);
  return sorted[lo] + (h - lo) * (sorted[hi] - sorted[lo]);
}

export interface BootstrapOptions {
  resamples?: number;
  seed?: number;
  /** Two-sided confidence level of the interval (default 0.95). */
  confidence?: number;
}

/**
 * Paired bootstrap of several columns of differences at once. `diffs` holds n rows of k columns
 * (row-major; NaN = no pair for that column); each resample draws n row indexes with replacement and
 * takes each column's mean over the drawn rows that have a value. Answers [low, high] per column.
 */
export function pairedBootstrap(diffs: Float64Array, n: number, k: number, opts: BootstrapOptions = {}): Array<[number, number]> {
  const resamples = opts.resamples ?? 2000;
  const alpha = (1 - (opts.confidence ?? 0.95)) / 2;
  if (n === 0) return Array.from({ length: k }, () => [NaN, NaN]);
  // Each column's differences (0 where missing) and, for a column with gaps, where it has a value.
  const values: Float64Array[] = [];
  const present: Array<Float64Array | null> = [];
  for (let c = 0; c < k; c++) {
    const v = new Float64Array(n);
    let p: Float64Array | null = null;
    for (let i = 0; i < n; i++) {
      const d = diffs[i * k + c];
      if (Number.isNaN(d)) (p ??= new Float64Array(n).fill(1))[i] = 0;
      else v[i] = d;
    }
    values.push(v);
    present.push(p);
  }
  // Every series the resamples sum, packed four to a row: one fused pass per group of four draws
  // the indexes and adds all four, with the same PRNG sequence for every group, so all series see
  // the same resampled items. The draws are random reads, so what is read per draw is kept small:
  // the first group's pass also counts the drawn items of the first pattern of presence (the
  // columns of a failed row are missing together, so one pattern usually serves every column) from
  // bytes; a count is an integer, the same whatever adds it. Columns' values, then any other
  // presence patterns, are the float series. Two runs with failed rows: one pass, where a group of
  // counts took a second one drawing all 20 million indexes again.
  const patterns: Float64Array[] = [];
  const patternOf = present.map((p) => {
    if (!p) return -1;
    const same = patterns.findIndex((q) => sameValues(q, p));
    return same >= 0 ? same : patterns.push(p) - 1;
  });
  const series: Float64Array[] = [...values, ...patterns.slice(1)];
  const firstPattern = patterns.length ? Uint8Array.from(patterns[0]) : null;
  // Where each column's count comes from: -1 no gaps (n), -2 the first pattern (counted from bytes), else its series.
  const countOf = patternOf.map((p) => (p < 0 ? -1 : p === 0 ? -2 : k + p - 1));
  const groups = Math.ceil(series.length / 4);
  const packed = Array.from({ length: groups }, (_, g) => {
    const rows = new Float64Array(n * 4);
    for (let j = 0; j < 4; j++) {
      const col = series[g * 4 + j];
      if (col) for (let i = 0; i < n; i++) rows[i * 4 + j] = col[i];
    }
    return rows;
  });
  const means = Array.from({ length: k }, () => new Float64Array(resamples));
  const seed = (opts.seed ?? 1) | 0;
  const none = new Uint8Array(n);
  // Each group's sums per resample (five floats: four series, then the first pattern's count).
  const sums = packed.map((rows, g) => {
    const counts = g === 0 && firstPattern ? firstPattern : none;
    return (fits(n) && drawSums(rows, counts, n, resamples, seed)) || drawSumsLoop(rows, counts, n, resamples, seed);
  });
  for (let r = 0; r < resamples; r++) {
    const sum = (series: number) => sums[series >> 2][r * 5 + (series & 3)];
    for (let c = 0; c < k; c++) {
      const count = countOf[c] === -1 ? n : countOf[c] === -2 ? sums[0][r * 5 + 4] : sum(countOf[c]);
      means[c][r] = count ? sum(c) / count : NaN;
    }
  }
  return means.map((m) => {
    const sorted = m.filter((v) => !Number.isNaN(v)).sort();
    return [quantileSorted(sorted, alpha), quantileSorted(sorted, 1 - alpha)];
  });
}

/**
 * The draws in JavaScript (where WebAssembly SIMD is missing, or past bootstrap-wasm.ts's size):
 * what drawSums answers, the same way.
 */
export function drawSumsLoop(rows: Float64Array, counts: Uint8Array, n: number, resamples: number, seed: number): Float64Array {
  const out = new Float64Array(resamples * 5);
  let state = seed | 0;
  // (u32 / 2^32) * n and u32 * (n / 2^32) are the same real number rounded once (dividing by a
  // power of two is exact), so the indexes are bit for bit those of mulberry32() * n, one
  // division a draw cheaper.
  const scale = n / 4294967296;
  for (let r = 0; r < resamples; r++) {
    let s0 = 0;
    let s1 = 0;
    let s2 = 0;
    let s3 = 0;
    let m = 0;
    for (let i = 0; i < n; i++) {
      // mulberry32, inlined (the same sequence as mulberry32(seed) above).
      state = (state + 0x6d2b79f5) | 0;
      let t = state;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      const at = (((t ^ (t >>> 14)) >>> 0) * scale) | 0;
      const row = at * 4;
      s0 += rows[row];
      s1 += rows[row + 1];
      s2 += rows[row + 2];
      s3 += rows[row + 3];
      m += counts[at];
    }
    out[r * 5] = s0;
    out[r * 5 + 1] = s1;
    out[r * 5 + 2] = s2;
    out[r * 5 + 3] = s3;
    out[r * 5 + 4] = m;
  }
  return out;
}

/** Two series of the same length with the same values. */
function sameValues(x: Float64Array, y: Float64Array): boolean {
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}
