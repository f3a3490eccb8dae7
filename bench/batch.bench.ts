// Batch runs and experiments (issues 14 and 16), each against a reference measured in the same run:
//
//  1. A server batch: N items (default 10,000) x a judge of 3 evaluators, the fake judge model
//     answering after 300 ms, TRIBUNAL_MODEL_CONCURRENCY=64. Wall time against the ideal
//     (items x evaluators x 300 ms / 64; goal within 1.1x), the server's CPU per graded evaluator
//     (process.cpuUsage of the server child, split into user and system time; goal at most 1.0 ms) and its RSS over the run (goal:
//     flat; sampled at every status read).
//  2. The experiment comparison: 10,000 paired items x 3 evaluators with 2,000 bootstrap resamples,
//     CPU ms of the pure computation (cold, then warm), and the server CPU of
//     GET /v1/judges/batch-executions/compare/ over the two runs of part 1 (goal < 300 ms).
//
//   node --import tsx bench/batch.bench.ts [--items N] [--runs 1|2] [--latency MS] [--concurrency C]
//                                         [--store json|postgres] [--instances 1|2]
//
// The server and the fake model each run in a child process of their own (bench/harness.ts), so the
// driver here and the fake never take CPU from the server measured. `--store postgres` runs the
// server on a fresh schema of the test database (test/helpers/postgres.ts: 127.0.0.1:5432, or
// TRIBUNAL_TEST_DATABASE_URL), dropped at the end; `--instances 2` starts two servers on that one
// schema, both batch workers (pg-boss shares the run's chunks), each with the same model and batch
// concurrency: the run is started through the first, and the CPU is the two servers' sum.
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { collectRows, compareRuns, type ExperimentRow } from '../src/batch/experiments.ts';
import { api, serveBatchChild, withBatchRig } from './batch-rig.ts';
import { childCpuMicros, demoWithJudges, runBench, type Child } from './harness.ts';

const SELF = fileURLToPath(import.meta.url);
const EVALUATORS = ['Answer Relevance', 'Clarity', 'Conciseness'];

if (process.argv[2] === '--serve') await serveBatchChild();

const { values } = parseArgs({
  args: process.argv[2] === '--serve' ? [] : process.argv.slice(2),
  options: {
    items: { type: 'string' },
    runs: { type: 'string' },
    latency: { type: 'string' },
    concurrency: { type: 'string' },
    store: { type: 'string' },
    instances: { type: 'string' },
  },
});
const ITEMS = Number(values.items ?? 10_000);
const RUNS = Number(values.runs ?? 2);
const LATENCY = Number(values.latency ?? 300);
const CONCURRENCY = Number(values.concurrency ?? 64);
const STORE = values.store ?? 'json';
const INSTANCES = Number(values.instances ?? 1);
if (STORE !== 'json' && STORE !== 'postgres') throw new Error('--store is json or postgres');
if (INSTANCES !== 1 && !(INSTANCES === 2 && STORE === 'postgres')) throw new Error('--instances 2 needs --store postgres (one process owns a JSON data directory)');

const rssMb = (pid: number) => {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
};

/** User and system CPU seconds of a process so far (/proc/<pid>/stat, in clock ticks of 10 ms): where a run's CPU goes, the code or the kernel (fsync, sockets). */
const userSystem = (pid: number): [number, number] => {
  const fields = fs
    .readFileSync(`/proc/${pid}/stat`, 'utf8')
    .replace(/^.*\) /, '')
    .split(' ');
  return [Number(fields[11]) / 100, Number(fields[12]) / 100];
};

/** Server CPU (microseconds) of each instance. */
const cpuEach = (servers: Child[]) => Promise.all(servers.map((x) => childCpuMicros(x.child)));

async function oneRun(servers: Child[], key: string, judgeId: string, datasetId: string) {
  const base = servers[0].ready.url;
  const pids = servers.map((x) => x.child.pid!);
  const rssAll = () => pids.map(rssMb);
  const rssBefore = rssAll();
  const cpuBefore = await cpuEach(servers);
  const splitBefore = pids.map(userSystem);
  const started = performance.now();
  const { batch_execution_id: id } = await api(base, key, 'POST', `/v1/judges/${judgeId}/batch-execute/`, { dataset_id: datasetId });
  const samples: Array<{ at: number; finished: number; rss: number[] }> = [];
  let b: any;
  for (;;) {
    b = await api(base, key, 'GET', `/v1/judges/batch-executions/${id}/`);
    samples.push({ at: (performance.now() - started) / 1000, finished: b.done + b.failed, rss: rssAll() });
    if (['completed', 'failed', 'cancelled'].includes(b.status)) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  const wall = (performance.now() - started) / 1000;
  const perInstance = (await cpuEach(servers)).map((c, i) => (c - cpuBefore[i]) / 1000);
  const cpuMs = perInstance.reduce((a, b) => a + b, 0);
  const split = pids.map(userSystem).reduce((sum, [u, s], i) => [sum[0] + u - splitBefore[i][0], sum[1] + s - splitBefore[i][1]], [0, 0]);
  return { id, b, wall, cpuMs, split, rssBefore, samples, perInstance };
}

function syntheticRows(n: number, seed: number): ExperimentRow[] {
  let s = seed;
  const r = () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
  return Array.from({ length: n }, (_, i) => {
    const evaluator_results = EVALUATORS.map((name, e) => ({ evaluator_id: `evl_${e}`, evaluator_name: name, score: Math.round(r() * 4) / 4 }));
    return { position: i, item_id: `itm_${i}`, execution_log_id: `log_${i}`, score: evaluator_results.reduce((x, y) => x + y.score, 0) / 3, evaluator_results };
  });
}

function pureComparison() {
  const a = syntheticRows(10_000, 1);
  const b = syntheticRows(10_000, 2);
  const cpu = () => {
    const before = process.cpuUsage();
    compareRuns(collectRows(a), collectRows(b), { resamples: 2000 });
    const u = process.cpuUsage(before);
    return (u.user + u.system) / 1000;
  };
  const cold = cpu();
  const warm = [cpu(), cpu(), cpu(), cpu(), cpu()].sort((x, y) => x - y)[2];
  console.log(`experiments (pure): 10,000 pairs x 3 evaluators, 2,000 resamples: ${cold.toFixed(0)} ms CPU cold, ${warm.toFixed(0)} ms warm (median of 5); goal < 300 ms`);
}

runBench(() =>
  withBatchRig(SELF, { latency: LATENCY, concurrency: CONCURRENCY, store: STORE, instances: INSTANCES }, async ({ servers }) => {
    const base = servers[0].ready.url;
    const { key, judgeIds } = await demoWithJudges(base, { 'bench batch three': EVALUATORS });
    const dataset = await api(base, key, 'POST', '/v1/datasets/', { name: 'bench batch' });
    for (let i = 0; i < ITEMS; i += 1000) {
      const items = Array.from({ length: Math.min(1000, ITEMS - i) }, (_, j) => ({
        request: `Question ${i + j}: how do I reset my password?`,
        response: `Answer ${i + j}: use the reset link on the sign-in page.`,
      }));
      await api(base, key, 'POST', `/v1/datasets/${dataset.id}/items/`, { items });
    }
    const graded = ITEMS * EVALUATORS.length;
    // Each instance has its own model limiter and row slots: two instances have twice the slots.
    const ideal = (graded * LATENCY) / 1000 / (CONCURRENCY * INSTANCES);
    const runs = [];
    console.log(`store ${STORE}, ${INSTANCES} instance(s)${INSTANCES > 1 ? ' on one database, both batch workers' : ''}`);
    for (let r = 0; r < RUNS; r++) {
      const run = await oneRun(servers, key, judgeIds[0], dataset.id);
      runs.push(run);
      const quarter = (q: number) => run.samples.find((x) => x.finished >= q * ITEMS)?.rss ?? [];
      const mb = (xs: number[]) => xs.map((x) => x.toFixed(0)).join('+');
      const peak = servers.map((_, i) => Math.max(...run.samples.map((x) => x.rss[i])));
      const cpuShare = INSTANCES > 1 ? ` (${run.perInstance.map((c, i) => `instance ${i + 1}: ${(c / 1000).toFixed(1)} s`).join(', ')})` : '';
      console.log(
        `batch run ${r + 1}: ${ITEMS} items x ${EVALUATORS.length} evaluators, fake model ${LATENCY} ms, concurrency ${CONCURRENCY} x ${INSTANCES} instance(s): ` +
          `${run.b.status}, ${run.b.done} done, ${run.b.failed} failed; wall ${run.wall.toFixed(1)} s vs ideal ${ideal.toFixed(1)} s = ${(run.wall / ideal).toFixed(3)}x (goal 1.1x); ` +
          `server CPU ${(run.cpuMs / 1000).toFixed(1)} s = ${(run.cpuMs / graded).toFixed(3)} ms per graded evaluator (goal 1.0 ms; user ${run.split[0].toFixed(2)} s, system ${run.split[1].toFixed(2)} s)${cpuShare}; ` +
          `RSS (MB, per instance) before ${mb(run.rssBefore)}, at 25/50/75/100% ${[0.25, 0.5, 0.75, 1].map((q) => mb(quarter(q))).join(' / ')}, peak ${mb(peak)}`,
      );
    }
    pureComparison();
    if (runs.length >= 2) {
      // The first call reads both runs' rows from the store; a second one is answered from the
      // comparisons the server keeps for completed runs.
      for (const call of ['first', 'again']) {
        const cpuBefore = await childCpuMicros(servers[0].child);
        const started = performance.now();
        const c = await api(base, key, 'GET', `/v1/judges/batch-executions/compare/?a=${runs[0].id}&b=${runs[1].id}`);
        const wall = performance.now() - started;
        const cpuMs = ((await childCpuMicros(servers[0].child)) - cpuBefore) / 1000;
        console.log(
          `experiments (REST, ${call}): compare of the two runs, ${c.pairs} pairs: server CPU ${cpuMs.toFixed(0)} ms, wall ${wall.toFixed(0)} ms (goal < 300 ms CPU at 10,000 pairs)`,
        );
      }
    }
  }),
);
