// Krippendorff's alpha (interval) against published reference values.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { krippendorffAlphaInterval } from '../src/review/alpha.ts';

const N = null;
const units = (rows: Array<Array<number | null>>) => rows[0].map((_, u) => rows.map((r) => r[u]).filter((v): v is number => v !== null));

describe("Krippendorff's alpha, interval", () => {
  it('matches the worked example of Krippendorff (2011), "Computing Krippendorff\'s Alpha-Reliability", section C: 0.849', () => {
    // Four coders, twelve units, missing values; the paper gives alpha_interval = .849 (and .743
    // nominal, .815 ordinal, .797 ratio for other metrics). Unit 12 has one value and is not pairable.
    const data = [
      [1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N],
      [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3],
      [N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N],
      [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N],
    ];
    const r = krippendorffAlphaInterval(units(data));
    assert.equal(r.alpha!.toFixed(3), '0.849');
    assert.equal(r.n_items, 11);
    assert.equal(r.n_annotations, 40);
  });

  it('matches a hand computation: two coders, three units', () => {
    // Values (0,1), (1,1), (0,0): n = 6, D_o = (1/6) * (2*1/1) = 1/3; D_e: 3 ones and 3 zeros,
    // sum over ordered pairs of (a-b)^2 = 2*3*3 = 18, / (6*5) = 0.6; alpha = 1 - (1/3)/0.6 = 4/9.
    const r = krippendorffAlphaInterval([
      [0, 1],
      [1, 1],
      [0, 0],
    ]);
    assert.ok(Math.abs(r.alpha! - 4 / 9) < 1e-12, String(r.alpha));
  });

  it('is 1 for perfect agreement, null below two pairable units or without variation, and scale-free', () => {
    assert.equal(
      krippendorffAlphaInterval([
        [0.2, 0.2],
        [0.9, 0.9, 0.9],
      ]).alpha,
      1,
    );
    assert.deepEqual(krippendorffAlphaInterval([[0.2, 0.4], [0.5]]), { alpha: null, n_items: 1, n_annotations: 2 });
    assert.equal(
      krippendorffAlphaInterval([
        [0.5, 0.5],
        [0.5, 0.5],
      ]).alpha,
      null,
    );
    const a = krippendorffAlphaInterval([
      [1, 2],
      [3, 3],
      [4, 2],
    ]).alpha!;
    const b = krippendorffAlphaInterval([
      [0.1, 0.2],
      [0.3, 0.3],
      [0.4, 0.2],
    ]).alpha!;
    assert.ok(Math.abs(a - b) < 1e-12);
  });

  it('runs over 100,000 labels quickly (measured, not asserted: machine load varies)', () => {
    const us: number[][] = [];
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 50_000; i++) us.push([rand(), rand()]);
    const t = performance.now();
    const r = krippendorffAlphaInterval(us);
    const ms = performance.now() - t;
    assert.equal(r.n_annotations, 100_000);
    assert.ok(Math.abs(r.alpha!) < 0.05, 'independent random coders agree by chance only');
    console.log(`# alpha over 100,000 labels: ${ms.toFixed(1)} ms`);
  });
});
