// Overhead of logs and metrics (issue 18): server CPU per judge run with them on, against off.
// Goal: within 5%.
//
//   node --import tsx bench/observability.bench.ts   (BENCH_SECONDS=4 BENCH_ROUNDS=10 BENCH_CONCURRENCY=8
//                                                     BENCH_INITIAL_WARMUP_MS=8000 BENCH_WARMUP_MS=1500)
//
// Three Tribunal servers in child processes (plumbing from bench/harness.ts) on the same JSON store
// settings and the same fake judge model (a fourth child, answering at once): "on" is what `npm start` runs (request ids, one JSON
// log line per request and per model call, written to stdout, here /dev/null, so the
// serialization and the write are paid; prom-client metrics with process metrics; the model
// observer); "off" is createServer with `observability: false` (none of it), and "control" is a
// second "off": its ratio to "off" shows how far apart two identical servers measure here. Traces
// are off (no OTLP endpoint). In each round the three are driven at the same time, BENCH_CONCURRENCY
// clients each; the figure is server CPU per run (not wall-clock: the machine is shared), and the
// median over rounds of each one's ratio to "off".
import http from 'node:http';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
// The measuring helpers, then the child servers' lifecycle (bench/harness.ts).
import { benchEnv, childCpuMicros, demoWithJudges, forDuration, median, request, runBench } from './harness.ts';
import { listenOnLoopback, resetFake, serveChild, serveFake, startChild, stopChildren, tempDirRemovedAtExit, type Child, type Ready } from './harness.ts';

const SELF = fileURLToPath(import.meta.url);
const { SECONDS, ROUNDS, CONCURRENCY, WARMUP_MS, INITIAL_WARMUP_MS } = benchEnv({ SECONDS: 4, ROUNDS: 10, CONCURRENCY: 8, WARMUP_MS: 1500, INITIAL_WARMUP_MS: 8000 });
const BODY = JSON.stringify({ request: 'How do I reset my password?', response: 'Open Settings, choose Security, then Reset password.', tags: ['bench'] });
// BENCH_PROCESS_METRICS=false measures "on" without prom-client's process metrics (TRIBUNAL_PROCESS_METRICS).
const SETTINGS = {
  TRIBUNAL_MODEL_CONCURRENCY: '64',
  TRIBUNAL_LOG_PRETTY: 'false',
  TRIBUNAL_METRICS_TOKEN: 'bench-metrics-token-0123456789',
  TRIBUNAL_PROCESS_METRICS: process.env.BENCH_PROCESS_METRICS ?? 'true',
};

type Served = 'on' | 'off' | 'control';
interface Target extends Ready {
  execute: string;
  key: string;
}

/**
 * The app npm start builds: "on" with its observability (log lines to this child's stdout, which is
 * /dev/null, so serializing and writing them is paid), "off" and "control" with `observability: false`.
 */
async function serveApp(fakeUrl: string, withObservability: boolean): Promise<{ url: string }> {
  const { buildServices } = await import('../src/app.ts');
  const { loadConfig } = await import('../src/config.ts');
  const { createObservability } = await import('../src/observability/index.ts');
  const { createServer } = await import('../src/server.ts');
  const { JsonStore } = await import('../src/store/json-store.ts');
  const dataDir = tempDirRemovedAtExit('tribunal-bench-obs-');
  const config = loadConfig({ TRIBUNAL_DATA_DIR: dataDir, TRIBUNAL_RATE_LIMIT: '100000000', ANTHROPIC_API_KEY: 'bench-dummy-key', ANTHROPIC_BASE_URL: fakeUrl, ...SETTINGS });
  const store = new JsonStore({ dataDir });
  await store.init();
  const observability = withObservability ? await createObservability(config) : false;
  const services = await buildServices(config, store, observability ? observability.modelObserver : undefined);
  return { url: await listenOnLoopback(createServer(services, { observability })) };
}

if (process.argv[2] === '--serve') {
  const kind = process.argv[3]!;
  await serveChild(async () => {
    if (kind === 'fake') return serveFake();
    const { url } = await serveApp(process.argv[4]!, kind === 'on');
    const { key, judgeIds } = await demoWithJudges(url, { bench: ['Answer Relevance'] });
    return { url, key, execute: `${url}/v1/judges/${judgeIds[0]}/execute/` };
  });
}

/** BENCH_CONCURRENCY keep-alive clients, each posting its next run when the last is answered. */
async function drive(target: Target, ms: number): Promise<{ ok: number; failed: number }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const url = new URL(target.execute);
  const headers = { authorization: `Api-Key ${target.key}`, 'content-type': 'application/json' };
  let ok = 0;
  let failed = 0;
  await forDuration(ms, CONCURRENCY, async () => void ((await request(agent, url, headers, BODY)).status === 200 ? ok++ : failed++));
  agent.destroy();
  return { ok, failed };
}

async function main() {
  console.log(`Observability overhead bench: Node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? 'unknown'})`);
  const children: Array<Child | undefined> = [];
  try {
    const fake = await startChild(SELF, 'fake');
    children.push(fake);
    const start = (kind: Served) => startChild<Target>(SELF, kind, [fake.ready.url]);
    const servers = { off: await start('off'), control: await start('control'), on: await start('on') };
    children.push(servers.off, servers.control, servers.on);
    console.log(`${ROUNDS} rounds x ${SECONDS}s, the three servers at once, ${CONCURRENCY} keep-alive clients each, judge of one evaluator, fake model answering at once`);
    const kinds: Served[] = ['off', 'control', 'on'];
    await Promise.all(kinds.map((k) => drive(servers[k].ready, INITIAL_WARMUP_MS)));
    const cpuPerRun: Record<Served, number[]> = { on: [], off: [], control: [] };
    let failed = 0;
    for (let round = 1; round <= ROUNDS; round++) {
      // All three are loaded at the same time, each by its own clients, so whatever else the shared
      // machine does falls on all alike; the clients start in a rotating order.
      const order = kinds.map((_, i) => kinds[(i + round) % kinds.length]!);
      await Promise.all(order.map((k) => drive(servers[k].ready, WARMUP_MS)));
      await resetFake(fake.child);
      const cpu0: Record<string, number> = {};
      for (const k of order) cpu0[k] = await childCpuMicros(servers[k].child);
      const runs = await Promise.all(order.map((k) => drive(servers[k].ready, SECONDS * 1000)));
      for (const [i, k] of order.entries()) {
        const cpuMs = ((await childCpuMicros(servers[k].child)) - cpu0[k]!) / 1000;
        failed += runs[i]!.failed;
        cpuPerRun[k].push(cpuMs / runs[i]!.ok);
      }
      console.log(`  round ${String(round).padStart(2)}  server CPU ms/run: ${kinds.map((k) => `${k} ${cpuPerRun[k].at(-1)!.toFixed(3)}`).join('   ')}`);
    }
    const ratio = (k: Served) => median(cpuPerRun[k].map((x, i) => x / cpuPerRun.off[i]!));
    console.log(
      `  median server CPU per run: off ${median(cpuPerRun.off).toFixed(3)} ms, control ${median(cpuPerRun.control).toFixed(3)} ms, on ${median(cpuPerRun.on).toFixed(3)} ms`,
    );
    console.log(
      `  median of the rounds' ratios: on / off ${ratio('on').toFixed(3)}x (goal <= 1.05x); control / off ${ratio('control').toFixed(3)}x (the noise floor: the same server twice)${failed ? `  (${failed} failed runs)` : ''}`,
    );
  } finally {
    stopChildren(children);
  }
}

runBench(main);
