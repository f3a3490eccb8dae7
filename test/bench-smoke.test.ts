// Every benchmark in bench/ runs to its end at the smallest sizes and prints its figures, so an API
// change can never silently break one again (cli-eval once aborted with "0 of 1000 rows scored"
// for months). Nothing here is timed: the figures are only required to be there. A new bench file
// must be added to SMOKE, or the first test fails.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { ROOT } from './helpers/cli.ts';
import { cleanEnv } from './helpers/server.ts';

const FAST_HTTP = { BENCH_SECONDS: '0.3', BENCH_ROUNDS: '1', BENCH_WARMUP_MS: '50', BENCH_INITIAL_WARMUP_MS: '50', BENCH_CONCURRENCY: '2', BENCH_RUNS: '2' };

/** bench file -> the arguments and environment that make it smallest. */
const SMOKE: Record<string, { args?: string[]; env?: Record<string, string>; expect?: RegExp }> = {
  'batch.bench.ts': { args: ['--items', '12', '--runs', '1', '--latency', '5', '--concurrency', '4'] },
  'caching.bench.ts': { env: { BENCH_CALLS: '10', BENCH_RUNS: '10', BENCH_ROUNDS: '1', BENCH_CONCURRENCY: '2' } },
  'calibration-metrics.bench.ts': { env: { CALIB_BENCH_N: '500', CALIB_BENCH_ROUNDS: '1' } },
  'checks.bench.ts': { env: { CHECK_RUNS: '200', CODE_RUNS: '50', CODE_CONCURRENCY: '4' } },
  'calibration-run.bench.ts': { args: ['--items', '12', '--rounds', '1', '--latency', '5', '--concurrency', '4'] },
  // With its timeline (BENCH_TIMELINE), so that the measurement cannot silently break either; and
  // with its in-run floor, the same CLI and loop against the floor judge server.
  'cli-eval.bench.ts': {
    env: { BENCH_ROWS: '12', BENCH_LATENCY: '5', BENCH_CONCURRENCY: '4', BENCH_TIMELINE: '1' },
    expect:
      /CLI -> floor judge server +wall [\d.]+ s[\s\S]*Tribunal \/ the floor server: [\d.]+[\s\S]*timeline of the CLI run at concurrency 4 [^\n]*\n {2}CLI send -> server in +mean[^\n]*; 17\+: [\s\S]*of last answer -> res\.end\(\): a sync in flight +(mean|n=0)/,
  },
  'compare.bench.ts': { env: { BENCH_RUNS: '2', BENCH_MODEL_MS: '5' } },
  'conversation-prompt.bench.ts': { env: { BENCH_ITERATIONS: '20', BENCH_ROUNDS: '1', BENCH_TURNS: '4' } },
  'doors-floor.bench.ts': { env: { ...FAST_HTTP, BENCH_INITIAL_WARMUP_MS: '100', BENCH_WARMUP_MS: '50' } },
  'dataset-import.bench.ts': { env: { DATASET_IMPORT_LINES: '200', DATASET_IMPORT_FILLER: '20' } },
  // Part 2's reference, a raw model call measured in the same run, must be there beside the judge of 8.
  'execute.bench.ts': { env: FAST_HTTP, expect: /raw model call: median \d+\.\d+ ms[^\n]*\n {2}ratio judge of 8 \/ raw model call: \d+\.\d+x/ },
  'experiments-compare.bench.ts': { args: ['--rows', '60', '--repeats', '1'] },
  'jury.bench.ts': { env: { BENCH_RUNS: '2', JURY_DELAYS: '5,10,15' } },
  'log-append.bench.ts': { env: { BENCH_APPENDS: '20', BENCH_LARGE: '2000' } },
  'log-store.bench.ts': { env: { BENCH_LOGS: '0,300' } },
  'mcp.bench.ts': { env: FAST_HTTP },
  'model-call.bench.ts': { env: { BENCH_CALLS: '20', BENCH_ROUNDS: '1', BENCH_CONCURRENCY: '2' } },
  'observability.bench.ts': { env: FAST_HTTP },
  'otlp-ingest.bench.ts': { env: { BENCH_SECONDS: '0.3', BENCH_ROUNDS: '1', BENCH_SPANS: '10', BENCH_CONCURRENCY: '2' } },
  'postgres-logs.bench.ts': { env: { BENCH_LOGS: '300', BENCH_RUNS: '2' } },
  'proxy.bench.ts': { env: { BENCH_ROUNDS: '3', BENCH_UPSTREAM_MS: '5', BENCH_JUDGE_MS: '5', BENCH_WARMUP: '2', BENCH_CPU_ROUNDS: '3', BENCH_CPU_REPEATS: '1' } },
  'provider-batch.bench.ts': { args: ['--rows', '20'] },
  'provider-batch-cpu.bench.ts': { args: ['--items', '12', '--rounds', '1'] },
  'review-next.bench.ts': {
    env: { BENCH_ITEMS: '300', BENCH_NEXTS: '40', BENCH_REVIEWERS: '4', BENCH_ROUNDS: '1', BENCH_CPU_CALLS: '10', BENCH_LABELS: '1000', BENCH_THINK_MS: '20' },
  },
  'trace-backlog-memory.bench.ts': { env: { MEM_SECONDS: '2', MEM_RATE: '50', MEM_MODEL_MS: '200', MEM_QUEUE_LIMIT: '20' } },
  'trace-eval-lag.bench.ts': { env: { LAG_SECONDS: '1', LAG_RATE: '50', LAG_SAMPLING: '0.5', LAG_DELAY: '0', LAG_MODEL_MS: '5' } },
};

function runBench(file: string, args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join('bench', file), ...args], { cwd: ROOT, env: { ...cleanEnv(), ...env } });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    // A bench that hangs is as broken as one that throws; at these sizes each ends in seconds.
    const timer = setTimeout(() => child.kill('SIGKILL'), 240_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

test('every bench in bench/ has a smoke entry', () => {
  const files = fs.readdirSync(path.join(ROOT, 'bench')).filter((f) => f.endsWith('.bench.ts'));
  assert.deepEqual(files.sort(), Object.keys(SMOKE).sort());
});

for (const [file, { args = [], env = {}, expect }] of Object.entries(SMOKE)) {
  test(`${file} finishes at its smallest sizes and prints its figures`, { timeout: 300_000 }, async () => {
    const { code, out } = await runBench(file, args, env);
    assert.equal(code, 0, `${file} exited ${code}:\n${out.slice(-3000)}`);
    // Figures: at least one decimal number printed, and no NaN or Infinity among them.
    assert.match(out, /\d+\.\d+/, `${file} printed no figures:\n${out.slice(-3000)}`);
    assert.doesNotMatch(out, /\bNaN\b|\bInfinity\b/, `${file} printed a broken figure:\n${out.slice(-3000)}`);
    if (expect) assert.match(out, expect, `${file} did not print what it measures:\n${out.slice(-3000)}`);
  });
}
