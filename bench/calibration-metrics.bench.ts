// Calibration metrics over 100,000 labelled results (issue 15: under 200 ms of server CPU).
// Measures agreementMetrics (src/calibration/metrics.ts) on 100,000 (expected, score) pairs, CPU
// time by process.cpuUsage(), median of several rounds, next to an in-run reference: one plain loop
// over the same arrays computing the mean absolute error (the least any metric pass can cost).
// Run: node --import tsx bench/calibration-metrics.bench.ts
import { agreementMetrics } from '../src/calibration/metrics.ts';

const N = Number(process.env.CALIB_BENCH_N ?? 100_000);
const ROUNDS = Number(process.env.CALIB_BENCH_ROUNDS ?? 9);

let s = 4242;
const r = () => {
  s = (s * 48271) % 2147483647;
  return s / 2147483647;
};
// Person scores on a 0..1 grid of tenths (many ties, as real labels have), judge scores near them.
const expected: number[] = [];
const scores: number[] = [];
for (let i = 0; i < N; i++) {
  const h = Math.round(r() * 10) / 10;
  expected.push(h);
  scores.push(Math.min(1, Math.max(0, Math.round((h + (r() - 0.5) * 0.5) * 100) / 100)));
}

const cpuMs = (fn: () => void): number => {
  const start = process.cpuUsage();
  fn();
  const d = process.cpuUsage(start);
  return (d.user + d.system) / 1000;
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

let sink = 0;
const metrics: number[] = [];
const reference: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  metrics.push(cpuMs(() => (sink += agreementMetrics(expected, scores, 0.5).mae ?? 0)));
  reference.push(
    cpuMs(() => {
      let abs = 0;
      for (let i = 0; i < N; i++) abs += Math.abs(scores[i] - expected[i]);
      sink += abs / N;
    }),
  );
}
const m = agreementMetrics(expected, scores, 0.5);
console.log(`pairs ${N}, rounds ${ROUNDS} (first round included; it warms the JIT)`);
console.log(`agreementMetrics: median ${median(metrics).toFixed(1)} ms CPU, first ${metrics[0].toFixed(1)} ms, max ${Math.max(...metrics).toFixed(1)} ms`);
console.log(`reference (one MAE loop): median ${median(reference).toFixed(2)} ms CPU; ratio ${(median(metrics) / median(reference)).toFixed(0)}x`);
console.log(`goal: under 200 ms -> ${Math.max(...metrics) < 200 ? 'met' : 'NOT met'} (worst round ${Math.max(...metrics).toFixed(1)} ms)`);
console.log(`(n ${m.n}, kappa ${m.kappa?.toFixed(3)}, spearman ${m.spearman?.toFixed(3)}; sink ${sink.toFixed(1)})`);
