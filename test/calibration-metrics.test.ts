// The agreement statistics (src/calibration/metrics.ts) against values computed independently.
// Sources are named beside each expected value: "scipy" means Python 3 with scipy 1.17.1 and numpy
// 2.4.6 on the development machine (the script is in the comment); "by hand" shows the arithmetic.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { agreementMetrics, confusion, kappaOf, pearson, spearman } from '../src/calibration/metrics.ts';

const close = (actual: number | null, expected: number, what: string, eps = 1e-12) => {
  assert.ok(actual !== null, `${what} is null`);
  assert.ok(Math.abs(actual - expected) < eps, `${what}: ${actual} vs ${expected}`);
};

describe('calibration metrics', () => {
  // h = [0, .2, .2, .5, .7, .9, 1, 1]; j = [.1, .3, .2, .6, .4, .8, 1, .9]; threshold 0.5.
  // scipy:  np.mean(abs(j-h)) = 0.09999999999999998; np.sqrt(np.mean((j-h)**2)) = 0.13228756555322949
  //         stats.pearsonr(h, j)[0] = 0.9406850681852933; stats.spearmanr(h, j)[0] = 0.9639253854237597
  //         (spearmanr gives ties their average rank: h has two ties, 0.2 and 1.0)
  // by hand: person passes .5 .7 .9 1 1 (5 of 8); judge passes .6 .8 1 .9 (4 of 8).
  //         tp = 4 (items 4, 6, 7, 8), fp = 0, fn = 1 (item 5: .7 vs .4), tn = 3.
  //         accuracy = 7/8 = 0.875; majority baseline = 5/8 = 0.625;
  //         chance agreement pe = 5/8*4/8 + 3/8*4/8 = 0.5; kappa = (0.875 - 0.5) / (1 - 0.5) = 0.75.
  const h = [0, 0.2, 0.2, 0.5, 0.7, 0.9, 1, 1];
  const j = [0.1, 0.3, 0.2, 0.6, 0.4, 0.8, 1, 0.9];

  test('every statistic of a small set with ties', () => {
    const m = agreementMetrics(h, j, 0.5);
    assert.equal(m.n, 8);
    close(m.mae, 0.09999999999999998, 'mae');
    close(m.rmse, 0.13228756555322949, 'rmse');
    close(m.pearson, 0.9406850681852933, 'pearson');
    close(m.spearman, 0.9639253854237597, 'spearman');
    close(m.kappa, 0.75, 'kappa');
    close(m.accuracy, 0.875, 'accuracy');
    close(m.majority_baseline, 0.625, 'majority baseline');
    assert.deepEqual(m.confusion, { tp: 4, fp: 0, tn: 3, fn: 1 });
  });

  test('Spearman uses average ranks for ties (and does not depend on the order of the pairs)', () => {
    // scipy: stats.spearmanr([1,2,2,3], [1,3,2,4])[0] = 0.9486832980505139
    // (ranks of x are 1, 2.5, 2.5, 4; distinct consecutive ranks 1,2,3,4 would give 0.8 or 1.0 by order)
    close(spearman([1, 2, 2, 3], [1, 3, 2, 4]), 0.9486832980505139, 'spearman with a tie');
    close(spearman([2, 1, 3, 2], [2, 1, 4, 3]), 0.9486832980505139, 'same pairs, other order');
  });

  test("Cohen's kappa on the textbook table (Wikipedia, Cohen's kappa, first example)", () => {
    // 50 proposals: both yes 20, A yes / B no 5, A no / B yes 10, both no 15.
    // by hand: po = 35/50 = 0.7; A yes 25/50, B yes 30/50; pe = .5*.6 + .5*.4 = 0.5; kappa = 0.4.
    const c = { tp: 20, fn: 5, fp: 10, tn: 15 };
    close(kappaOf(c), 0.4, 'kappa');
    // The same table as scores: the person is A (expected), the judge B.
    const expected = [...Array(20).fill(1), ...Array(5).fill(1), ...Array(10).fill(0), ...Array(15).fill(0)];
    const scores = [...Array(20).fill(1), ...Array(5).fill(0), ...Array(10).fill(1), ...Array(15).fill(0)];
    assert.deepEqual(confusion(expected, scores, 0.5), c);
    close(agreementMetrics(expected, scores, 0.5).kappa, 0.4, 'kappa from scores');
  });

  test('kappa can be negative, and accuracy can trail the majority baseline', () => {
    // by hand: expected pass,pass,pass,fail; judge fail,pass,pass,pass -> tp 2, fn 1, fp 1, tn 0.
    // po = 2/4 = .5; person pass .75, judge pass .75; pe = .75*.75 + .25*.25 = 0.625;
    // kappa = (.5 - .625) / .375 = -1/3; majority baseline .75 > accuracy .5.
    const m = agreementMetrics([1, 1, 1, 0], [0, 1, 1, 1], 0.5);
    close(m.kappa, -1 / 3, 'kappa', 1e-12);
    close(m.accuracy, 0.5, 'accuracy');
    close(m.majority_baseline, 0.75, 'majority');
  });

  test('the threshold is inclusive: a score equal to it passes', () => {
    assert.deepEqual(confusion([0.5, 0.49], [0.5, 0.5], 0.5), { tp: 1, fp: 1, tn: 0, fn: 0 });
    assert.deepEqual(confusion([0.7], [0.69], 0.7), { tp: 0, fp: 0, tn: 0, fn: 1 });
  });

  test('null where a statistic is undefined', () => {
    const empty = agreementMetrics([], [], 0.5);
    assert.deepEqual(empty, {
      n: 0,
      mae: null,
      rmse: null,
      pearson: null,
      spearman: null,
      kappa: null,
      accuracy: null,
      majority_baseline: null,
      confusion: { tp: 0, fp: 0, tn: 0, fn: 0 },
    });
    // One pair: errors exist, correlations do not.
    const one = agreementMetrics([0.4], [0.6], 0.5);
    close(one.mae, 0.2, 'mae of one', 1e-15);
    assert.equal(one.pearson, null);
    assert.equal(one.spearman, null);
    // by hand: person fail, judge pass: po = 0, pe = 0*1 + 1*0 = 0 -> kappa = 0.
    close(one.kappa, 0, 'kappa of one');
    // A constant side: correlations are null (scipy warns ConstantInputWarning and returns nan).
    // 0.7 three times: a naive mean is 0.7000000000000001, so a variance test alone would not see it.
    const constant = agreementMetrics([0.7, 0.7, 0.7], [0.1, 0.5, 0.9], 0.5);
    assert.equal(constant.pearson, null);
    assert.equal(constant.spearman, null);
    assert.equal(pearson([0.1, 0.5, 0.9], [0.3, 0.3, 0.3]), null);
    // Both sides always pass: chance agreement is 1, kappa undefined.
    const allPass = agreementMetrics([0.9, 0.8, 1], [0.6, 0.9, 0.7], 0.5);
    assert.equal(allPass.kappa, null);
    close(allPass.accuracy, 1, 'accuracy');
    // The person always passes, the judge does not: pe = 1*(2/3) + 0 = 2/3 < 1, kappa = (2/3 - 2/3)/(1/3) = 0 (by hand).
    close(agreementMetrics([0.9, 0.8, 1], [0.6, 0.2, 0.7], 0.5).kappa, 0, 'kappa with a constant person');
  });

  test('perfect and inverse agreement', () => {
    const x = [0.1, 0.4, 0.35, 0.8, 0.9];
    close(pearson(x, x), 1, 'pearson self');
    close(
      spearman(
        x,
        x.map((v) => 1 - v),
      ),
      -1,
      'spearman inverse',
    );
    const m = agreementMetrics(x, x, 0.5);
    assert.equal(m.mae, 0);
    close(m.kappa, 1, 'kappa self');
  });

  test('a larger random set matches scipy', () => {
    // A fixed multiplicative congruential generator so that Python computes the same numbers:
    //   s = 12345; def r(): global s; s = (s * 48271) % 2147483647; return s / 2147483647   # Park-Miller
    //   R = lambda x: math.floor(x + 0.5)   # JavaScript's Math.round
    //   h = [R(r() * 10) / 10 for _ in range(1000)]; j = [min(1, max(0, R((v + (r() - .5) * .6) * 100) / 100)) for v in h]
    //   stats.pearsonr(h, j)[0] = 0.8584541524920647; stats.spearmanr(h, j)[0] = 0.8619896692697809
    //   np.mean(abs(np.array(j) - np.array(h))) = 0.13511
    let s = 12345;
    const r = () => {
      s = (s * 48271) % 2147483647; // exact in doubles: below 2^47
      return s / 2147483647;
    };
    const hs: number[] = [];
    for (let i = 0; i < 1000; i++) hs.push(Math.round(r() * 10) / 10);
    const js = hs.map((v) => Math.min(1, Math.max(0, Math.round((v + (r() - 0.5) * 0.6) * 100) / 100)));
    const m = agreementMetrics(hs, js, 0.5);
    close(m.pearson, 0.8584541524920647, 'pearson', 1e-9);
    close(m.spearman, 0.8619896692697809, 'spearman', 1e-9);
    close(m.mae, 0.13511, 'mae', 1e-9);
  });

  test('unequal lengths are a programming error', () => {
    assert.throws(() => agreementMetrics([1], [], 0.5), /differ in length/);
  });
});
