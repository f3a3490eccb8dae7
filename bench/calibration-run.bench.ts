// What a calibration run costs against a batch run of the same dataset (issue 15: "a calibration run
// over a dataset costs what a batch run of it costs, plus nothing measurable").
//
// One labelled dataset (N items, default 2,000, each with expected_scores for the judge's three
// evaluators), the fake judge model answering after --latency ms (default 300), model concurrency
// --concurrency (default 64). Each round runs, one after the other on the same server:
//   1. a batch run of the judge over the dataset (POST .../batch-execute/, status polled every 500 ms);
//   2. a calibration run of the same judge over the same dataset (POST /v1/calibration-runs/): its
//      batch is polled the same way, then the first read of the calibration run, which computes
//      and stores the metrics (measured alone: "the metrics step"), and a second read (stored).
// Server CPU is the server child's process.cpuUsage() delta (bench/harness.ts), wall from the POST to
// the end. The in-run reference is the batch run of the same round; the figure is their ratio.
//
//   node --import tsx bench/calibration-run.bench.ts [--items N] [--rounds R] [--latency MS] [--concurrency C] [--store json|postgres]
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { api, serveBatchChild, withBatchRig } from './batch-rig.ts';
import { childCpuMicros, demoWithJudges, runBench, type Child } from './harness.ts';

const SELF = fileURLToPath(import.meta.url);
const EVALUATORS = ['Answer Relevance', 'Clarity', 'Conciseness'];

if (process.argv[2] === '--serve') await serveBatchChild();

const { values } = parseArgs({
  args: process.argv[2] === '--serve' ? [] : process.argv.slice(2),
  options: { items: { type: 'string' }, rounds: { type: 'string' }, latency: { type: 'string' }, concurrency: { type: 'string' }, store: { type: 'string' } },
});
const ITEMS = Number(values.items ?? 2000);
const ROUNDS = Number(values.rounds ?? 2);
const LATENCY = Number(values.latency ?? 300);
const CONCURRENCY = Number(values.concurrency ?? 64);
const STORE = values.store ?? 'json';

const ENDED = ['completed', 'failed', 'cancelled'];

async function untilEnded(base: string, key: string, batchId: string) {
  for (;;) {
    const b = await api(base, key, 'GET', `/v1/judges/batch-executions/${batchId}/`);
    if (ENDED.includes(b.status)) return b;
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** CPU ms the server spends in `fn`, and the wall ms. */
async function measured<T>(server: Child, fn: () => Promise<T>): Promise<{ value: T; cpuMs: number; wallMs: number }> {
  const cpu = await childCpuMicros(server.child);
  const started = performance.now();
  const value = await fn();
  const wallMs = performance.now() - started;
  return { value, cpuMs: ((await childCpuMicros(server.child)) - cpu) / 1000, wallMs };
}

runBench(() =>
  withBatchRig(SELF, { latency: LATENCY, concurrency: CONCURRENCY, store: STORE }, async ({ servers: [s] }) => {
    const base = s.ready.url;
    const { key, judgeIds } = await demoWithJudges(base, { 'bench calibration three': EVALUATORS });
    const judgeId = judgeIds[0];
    const dataset = await api(base, key, 'POST', '/v1/datasets/', { name: 'bench calibration' });
    for (let i = 0; i < ITEMS; i += 1000) {
      const items = Array.from({ length: Math.min(1000, ITEMS - i) }, (_, j) => {
        const n = i + j;
        // The person's scores: a grid of tenths, so the metrics see ties as real labels have.
        const expected_scores = Object.fromEntries(EVALUATORS.map((name, e) => [name, ((n * 7 + e * 3) % 11) / 10]));
        return { request: `Question ${n}: how do I reset my password?`, response: `Answer ${n}: use the reset link on the sign-in page.`, expected_scores };
      });
      await api(base, key, 'POST', `/v1/datasets/${dataset.id}/items/`, { items });
    }
    const graded = ITEMS * EVALUATORS.length;
    console.log(`calibration run vs batch run: ${ITEMS} labelled items x ${EVALUATORS.length} evaluators, fake model ${LATENCY} ms, concurrency ${CONCURRENCY}, store ${STORE}`);
    const ratios: Array<{ cpu: number; wall: number }> = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const batch = await measured(s, async () => {
        const { batch_execution_id: id } = await api(base, key, 'POST', `/v1/judges/${judgeId}/batch-execute/`, { dataset_id: dataset.id });
        return untilEnded(base, key, id);
      });
      let metricsStep = { cpuMs: 0, wallMs: 0 };
      let again = { cpuMs: 0, wallMs: 0 };
      const calibration = await measured(s, async () => {
        const run = await api(base, key, 'POST', '/v1/calibration-runs/', { judge_id: judgeId, dataset_id: dataset.id });
        const b = await untilEnded(base, key, run.batch_execution_id);
        // The first read after the batch completed computes the metrics and stores them.
        const first = await measured(s, () => api(base, key, 'GET', `/v1/calibration-runs/${run.id}/`));
        if (!first.value.metrics) throw new Error(`calibration run ${run.id}: no metrics after its batch ended ${b.status}`);
        metricsStep = first;
        again = await measured(s, () => api(base, key, 'GET', `/v1/calibration-runs/${run.id}/`));
        return { b, metrics: first.value.metrics as Array<{ evaluator_name: string; n: number; mae: number | null; kappa: number | null }> };
      });
      const cpu = calibration.cpuMs / batch.cpuMs;
      const wall = calibration.wallMs / batch.wallMs;
      ratios.push({ cpu, wall });
      console.log(
        `round ${round}: batch run ${batch.value.status} ${batch.value.done}/${ITEMS}: server CPU ${(batch.cpuMs / 1000).toFixed(2)} s (${(batch.cpuMs / graded).toFixed(3)} ms per graded evaluator), wall ${(batch.wallMs / 1000).toFixed(1)} s | ` +
          `calibration run ${calibration.value.b.status} ${calibration.value.b.done}/${ITEMS}: server CPU ${(calibration.cpuMs / 1000).toFixed(2)} s, wall ${(calibration.wallMs / 1000).toFixed(1)} s | ` +
          `ratio calibration/batch: CPU ${cpu.toFixed(3)}x, wall ${wall.toFixed(3)}x | metrics step (first read): ${metricsStep.cpuMs.toFixed(0)} ms CPU, ${metricsStep.wallMs.toFixed(0)} ms wall; read again: ${again.cpuMs.toFixed(1)} ms CPU`,
      );
      console.log(
        `  metrics: ${calibration.value.metrics.map((m) => `${m.evaluator_name} n=${m.n} mae=${m.mae?.toFixed(3)} kappa=${m.kappa === null ? 'null' : m.kappa.toFixed(3)}`).join('; ')}`,
      );
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    console.log(`mean ratio calibration/batch over ${ROUNDS} round(s): CPU ${mean(ratios.map((r) => r.cpu)).toFixed(3)}x, wall ${mean(ratios.map((r) => r.wall)).toFixed(3)}x`);
  }),
);
