// Bootstrap intervals, ECE and fitness levels (SPEC section 17) as pure functions.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { agreementMetrics } from '../src/calibration/metrics.ts';
import { bootstrapIntervals, expectedCalibrationError, fitnessOf, judgeFitness, seededRandom, weakest } from '../src/calibration/fitness.ts';

/** n pairs where the judge agrees with the person on pass/fail with probability `agree`. */
function pairs(n: number, agree: number, seed = 1) {
  const r = seededRandom(seed);
  const expected: number[] = [];
  const scores: number[] = [];
  for (let i = 0; i < n; i++) {
    const e = r() < 0.5 ? 0.2 + r() * 0.2 : 0.6 + r() * 0.3;
    expected.push(e);
    scores.push(r() < agree ? e : 1 - e);
  }
  return { expected, scores };
}

describe('bootstrap intervals', () => {
  it('are reproducible (seeded), bracket the point estimate, and narrow as n grows', () => {
    const { expected, scores } = pairs(200, 0.9);
    const a = bootstrapIntervals(expected, scores, 0.5);
    const b = bootstrapIntervals(expected, scores, 0.5);
    assert.deepEqual(a, b);
    const point = agreementMetrics(expected, scores, 0.5);
    for (const key of ['mae', 'kappa', 'pearson', 'spearman'] as const) {
      const iv = a[key]!;
      assert.ok(iv[0] <= point[key]! && point[key]! <= iv[1], `${key}: ${point[key]} in [${iv}]`);
      assert.ok(iv[0] < iv[1], `${key} has some width`);
    }
    const other = bootstrapIntervals(expected, scores, 0.5, { seed: 7 });
    assert.notDeepEqual(other, a, 'another seed resamples differently');
    const big = pairs(2000, 0.9, 3);
    const wide = a.kappa![1] - a.kappa![0];
    const narrow = bootstrapIntervals(big.expected, big.scores, 0.5).kappa!;
    assert.ok(narrow[1] - narrow[0] < wide / 2, `n 2000 (${narrow}) is narrower than n 200 (${a.kappa})`);
  });

  it('are exact for perfect agreement and null where undefined', () => {
    const { expected } = pairs(50, 1);
    const iv = bootstrapIntervals(expected, expected, 0.5);
    assert.deepEqual(iv.kappa, [1, 1]);
    assert.deepEqual(iv.mae, [0, 0]);
    assert.deepEqual(bootstrapIntervals([0.5], [0.5], 0.5), { mae: null, kappa: null, pearson: null, spearman: null });
    // A constant judge: no correlation in any resample.
    const flat = bootstrapIntervals([0.1, 0.9, 0.3, 0.8], [0.7, 0.7, 0.7, 0.7], 0.5);
    assert.equal(flat.pearson, null);
    assert.ok(flat.mae !== null);
  });
});

describe('expected calibration error', () => {
  it('matches a hand computation', () => {
    // Bin 9: confidences .95, .95 (both right): |1 - .95| = .05, weight 2/4.
    // Bin 5: .55 right, .55 wrong: |.5 - .55| = .05, weight 2/4. ECE = .05.
    const ece = expectedCalibrationError([0.95, 0.95, 0.55, 0.55], [true, true, true, false]);
    assert.ok(Math.abs(ece! - 0.05) < 1e-12, String(ece));
    assert.equal(expectedCalibrationError([null, null], [true, false]), null);
  });
});

describe('fitness', () => {
  const iv = (lo: number, hi: number) => ({ kappa: [lo, hi] as [number, number] });
  it('follows the thresholds of section 17', () => {
    assert.equal(fitnessOf(null), 'uncalibrated');
    assert.equal(fitnessOf({ n: 100, kappa: 0.8, intervals: iv(0.6, 0.9) }), 'gating');
    assert.equal(fitnessOf({ n: 99, kappa: 0.8, intervals: iv(0.65, 0.9) }), 'monitoring', 'n below 100');
    assert.equal(fitnessOf({ n: 500, kappa: 0.7, intervals: iv(0.59, 0.8) }), 'monitoring', 'lower bound below 0.6');
    assert.equal(fitnessOf({ n: 30, kappa: 0.4, intervals: iv(0.1, 0.6) }), 'monitoring');
    assert.equal(fitnessOf({ n: 29, kappa: 0.9, intervals: iv(0.7, 1) }), 'exploration');
    assert.equal(fitnessOf({ n: 1000, kappa: 0.12, intervals: iv(0.05, 0.2) }), 'exploration', 'kappa 0.12 is not calibrated in any useful sense');
    assert.equal(fitnessOf({ n: 1000, kappa: null }), 'exploration');
    assert.equal(fitnessOf({ n: 1000, kappa: 0.9 }), 'monitoring', 'no interval (an old run): never gating');
  });
  it('a judge is as fit as its weakest evaluator', () => {
    assert.equal(weakest(['gating', 'monitoring', 'gating']), 'monitoring');
    assert.equal(weakest([]), 'uncalibrated');
    const j = judgeFitness([
      { n: 200, kappa: 0.8, intervals: { mae: null, pearson: null, spearman: null, ...iv(0.7, 0.9) } },
      { n: 200, kappa: 0.75, intervals: { mae: null, pearson: null, spearman: null, ...iv(0.62, 0.85) } },
    ]);
    assert.deepEqual(j, { fitness: 'gating', kappa_interval: [0.62, 0.85] });
  });
});
