// The bootstrap's draws in WebAssembly SIMD (src/batch/bootstrap-wasm.ts) against the JavaScript
// loop they replace: the same sums bit for bit, for sizes around the four-lane step, seeds of
// either sign, and rows with gaps; and pairedBootstrap answers the same either way.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { drawSums, fits } from '../src/batch/bootstrap-wasm.ts';
import { drawSumsLoop, mulberry32, pairedBootstrap } from '../src/batch/bootstrap.ts';

test('the WebAssembly draws give the sums of the JavaScript loop, bit for bit', () => {
  assert.ok(fits(10), 'WebAssembly SIMD is there on Node 20');
  const random = mulberry32(42);
  for (const n of [1, 2, 3, 4, 5, 7, 8, 9, 13, 100, 1001, 4099]) {
    const rows = Float64Array.from({ length: n * 4 }, () => (random() < 0.1 ? 0 : random() * 2 - 1));
    const present = Uint8Array.from({ length: n }, () => (random() < 0.9 ? 1 : 0));
    for (const seed of [1, 7, -5, 123456789, 0x7fffffff]) {
      const wasm = drawSums(rows, present, n, 37, seed)!;
      const loop = drawSumsLoop(rows, present, n, 37, seed);
      assert.equal(wasm.length, 37 * 5);
      for (let i = 0; i < loop.length; i++) assert.ok(Object.is(wasm[i], loop[i]), `n=${n} seed=${seed} at ${i}: ${wasm[i]} vs ${loop[i]}`);
    }
  }
});

test('pairedBootstrap: its intervals match a direct resampling with mulberry32', () => {
  // Direct reference: each resample draws n indexes with mulberry32(seed) and averages each column over the drawn rows with a value.
  const n = 501;
  const k = 3;
  const random = mulberry32(9);
  const diffs = Float64Array.from({ length: n * k }, (_, j) => (j % k === 1 && random() < 0.2 ? NaN : random() - 0.4));
  const resamples = 300;
  const next = mulberry32(3);
  const means = Array.from({ length: k }, () => [] as number[]);
  for (let r = 0; r < resamples; r++) {
    const sum = new Array(k).fill(0);
    const count = new Array(k).fill(0);
    for (let i = 0; i < n; i++) {
      const at = Math.floor(next() * n);
      for (let c = 0; c < k; c++) {
        const d = diffs[at * k + c];
        if (!Number.isNaN(d)) (sum[c] += d), count[c]++;
      }
    }
    for (let c = 0; c < k; c++) means[c].push(sum[c] / count[c]);
  }
  const got = pairedBootstrap(diffs, n, k, { resamples, seed: 3 });
  for (let c = 0; c < k; c++) {
    const sorted = Float64Array.from(means[c]).sort();
    const q = (p: number) => {
      const h = (sorted.length - 1) * p;
      const lo = Math.floor(h);
      return sorted[lo] + (h - lo) * (sorted[Math.min(lo + 1, sorted.length - 1)] - sorted[lo]);
    };
    const alpha = (1 - 0.95) / 2; // as the code computes it (not exactly 0.025)
    assert.deepEqual(got[c], [q(alpha), q(1 - alpha)], `column ${c}`);
  }
});
