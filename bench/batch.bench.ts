// Batch runs and experiments (issues 14 and 16), each against a reference measured in the same run:
//
//  1. A server batch: N items (default 10,000) x a judge of 3 evaluators, the fake judge model
//     answering after 300 ms, TRIBUNAL_MODEL_CONCURRENCY=64. Wall time against the ideal
//     (items x evaluators x 300 ms / 64; goal within 1.1x), the server's CPU per graded evaluator
//     (process.cpuUsage of the server child; goal at most 1.5 ms) and its RSS over the run (goal:
//     flat; sampled at every status read).
//  2. The experiment comparison: 10,000 paired items x 3 evaluators with 2,000 bootstrap resamples,
//     CPU ms of the pure computation (cold, then warm), and the server CPU of
//     GET /v1/judges/batch-executions/compare/ over the two runs of part 1 (goal < 300 ms).
//
//   node --import tsx bench/batch.bench.ts [--items N] [--runs 1|2] [--latency MS] [--concurrency C]
//
// The server and the fake model each run in a child process of their own (bench/harness.ts), so the
// driver here and the fake never take CPU from the server measured.
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { collectRows, compareRuns, type ExperimentRow } from '../src/batch/experiments.ts';
import { childCpuMicros, demoWithJudges, runBench, serveChild, serveFake, serveTribunal, startChild, stopChildren, type Child } from './harness.ts';

const SELF = fileURLToPath(import.meta.url);
const EVALUATORS = ['Answer Relevance', 'Clarity', 'Conciseness'];

if (process.argv[2] === '--serve') {
  const kind = process.argv[3];
  if (kind === 'fake') await serveChild(() => serveFake(Number(process.argv[4])));
  else await serveChild(() => serveTribunal(process.argv[4], { TRIBUNAL_MODEL_CONCURRENCY: process.argv[5], TRIBUNAL_REQUEST_TIMEOUT: '600s' }));
}

const { values } = parseArgs({ args: process.argv[2] === '--serve' ? [] : process.argv.slice(2), options: { items: { type: 'string' }, runs: { type: 'string' }, latency: { type: 'string' }, concurrency: { type: 'string' } } });
const ITEMS = Number(values.items ?? 10_000);
const RUNS = Number(values.runs ?? 2);
const LATENCY = Number(values.latency ?? 300);
const CONCURRENCY = Number(values.concurrency ?? 64);

const rssMb = (pid: number) => {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
};

async function api(base: string, key: string, method: string, path: string, body?: unknown) {
  const res = await fetch(base + path, { method, headers: { authorization: `Api-Key ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const json = (await res.json()) as any;
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json).slice(0, 400)}`);
  return json;
}

async function oneRun(server: Child, key: string, judgeId: string, datasetId: string) {
  const base = server.ready.url;
  const pid = server.child.pid!;
  const rssBefore = rssMb(pid);
  const cpuBefore = await childCpuMicros(server.child);
  const started = performance.now();
  const { batch_execution_id: id } = await api(base, key, 'POST', `/v1/judges/${judgeId}/batch-execute/`, { dataset_id: datasetId });
  const samples: Array<{ at: number; finished: number; rss: number }> = [];
  let b: any;
  for (;;) {
    b = await api(base, key, 'GET', `/v1/judges/batch-executions/${id}/`);
    samples.push({ at: (performance.now() - started) / 1000, finished: b.done + b.failed, rss: rssMb(pid) });
    if (['completed', 'failed', 'cancelled'].includes(b.status)) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  const wall = (performance.now() - started) / 1000;
  const cpuMs = ((await childCpuMicros(server.child)) - cpuBefore) / 1000;
  return { id, b, wall, cpuMs, rssBefore, samples };
}

function syntheticRows(n: number, seed: number): ExperimentRow[] {
  let s = seed;
  const r = () => ((s = (s * 1103515245 + 12345) % 2147483648) / 2147483648);
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

runBench(async () => {
  let fake: Child | undefined;
  let server: Child | undefined;
  try {
    fake = await startChild(SELF, 'fake', [String(LATENCY)]);
    server = await startChild(SELF, 'tribunal', [fake.ready.url, String(CONCURRENCY)]);
    const base = server.ready.url;
    const { key, judgeIds } = await demoWithJudges(base, { 'bench batch three': EVALUATORS });
    const dataset = await api(base, key, 'POST', '/v1/datasets/', { name: 'bench batch' });
    for (let i = 0; i < ITEMS; i += 1000) {
      const items = Array.from({ length: Math.min(1000, ITEMS - i) }, (_, j) => ({ request: `Question ${i + j}: how do I reset my password?`, response: `Answer ${i + j}: use the reset link on the sign-in page.` }));
      await api(base, key, 'POST', `/v1/datasets/${dataset.id}/items/`, { items });
    }
    const graded = ITEMS * EVALUATORS.length;
    const ideal = (graded * LATENCY) / 1000 / CONCURRENCY;
    const runs = [];
    for (let r = 0; r < RUNS; r++) {
      const run = await oneRun(server, key, judgeIds[0], dataset.id);
      runs.push(run);
      const rss = run.samples.map((s) => s.rss);
      const quarter = (q: number) => run.samples.find((s) => s.finished >= q * ITEMS)?.rss ?? NaN;
      console.log(
        `batch run ${r + 1}: ${ITEMS} items x ${EVALUATORS.length} evaluators, fake model ${LATENCY} ms, concurrency ${CONCURRENCY}: ` +
          `${run.b.status}, ${run.b.done} done, ${run.b.failed} failed; wall ${run.wall.toFixed(1)} s vs ideal ${ideal.toFixed(1)} s = ${(run.wall / ideal).toFixed(3)}x (goal 1.1x); ` +
          `server CPU ${(run.cpuMs / 1000).toFixed(1)} s = ${(run.cpuMs / graded).toFixed(3)} ms per graded evaluator (goal 1.5 ms); ` +
          `RSS before ${run.rssBefore.toFixed(0)} MB, at 25/50/75/100% ${[0.25, 0.5, 0.75, 1].map((q) => quarter(q).toFixed(0)).join('/')} MB, peak ${Math.max(...rss).toFixed(0)} MB`,
      );
    }
    pureComparison();
    if (runs.length >= 2) {
      // The first call reads both runs' rows from the store; a second one is answered from the
      // comparisons the server keeps for completed runs.
      for (const call of ['first', 'again']) {
        const cpuBefore = await childCpuMicros(server.child);
        const started = performance.now();
        const c = await api(base, key, 'GET', `/v1/judges/batch-executions/compare/?a=${runs[0].id}&b=${runs[1].id}`);
        const wall = performance.now() - started;
        const cpuMs = ((await childCpuMicros(server.child)) - cpuBefore) / 1000;
        console.log(`experiments (REST, ${call}): compare of the two runs, ${c.pairs} pairs: server CPU ${cpuMs.toFixed(0)} ms, wall ${wall.toFixed(0)} ms (goal < 300 ms CPU at 10,000 pairs)`);
      }
    }
  } finally {
    stopChildren([server, fake]);
  }
});
