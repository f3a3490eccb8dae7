// Scoring benchmarks (issue 2), each against a reference measured in the same run:
//
//  1. Throughput: POST /v1/judges/{id}/execute/ for a one-evaluator judge, the fake judge model
//     answering at once, next to a bare express JSON route (express.json() in, res.json() out).
//     Goal: at least 0.5x the bare route's requests per second.
//  2. Latency: a judge of eight evaluators with the fake answering after 300 ms. The evaluators run
//     concurrently, so a run should take about one model call: its reference is a raw model call
//     (the request one evaluator sends, posted straight to the fake), measured in the same run, the
//     same way (sequential, as many, keep-alive). Goal: median judge of 8 / median raw call <= 1.02.
//
//   node --import tsx bench/execute.bench.ts      (BENCH_SECONDS=4 BENCH_ROUNDS=5 BENCH_CONCURRENCY=16 BENCH_RUNS=30
//                                                  BENCH_INITIAL_WARMUP_MS=10000 BENCH_WARMUP_MS=2000)
//
// Each server runs in its own child process (the bare route, Tribunal, the fake judge model), so
// the load generator here and the fake never take CPU from the server measured. The load is a
// bounded loopback generator: BENCH_CONCURRENCY keep-alive clients, each posting its next request
// when the previous answer is in, for a fixed time per round. Rounds alternate between the targets;
// the median round is reported. Requests per second of server CPU time are printed too: on a busy
// shared machine they say more than wall-clock rates. Before the first round every target gets the
// same initial warm-up (BENCH_INITIAL_WARMUP_MS): the JIT needs more traffic to settle on Tribunal's
// larger code path than on the bare route (profiles showed it still compiling in the first rounds),
// and a server's throughput is its steady-state throughput. The fake model forgets the requests it
// has recorded before every measured window, so its memory (and its CPU, which shares the machine)
// does not grow over the run.
import http from 'node:http';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
// The measuring helpers, then the child servers' lifecycle (bench/harness.ts).
import { benchEnv, childCpuMicros, demoWithJudges, forDuration, median, quantile, request, runBench } from './harness.ts';
import { lastFakeRequest, listenOnLoopback, resetFake, serveChild, serveFake, serveTribunal, setFakeLatency, startChild, stopChildren, type Child, type Ready } from './harness.ts';

const SELF = fileURLToPath(import.meta.url);
const { SECONDS, ROUNDS, CONCURRENCY, RUNS, WARMUP_MS, INITIAL_WARMUP_MS } = benchEnv({
  SECONDS: 4,
  ROUNDS: 5,
  CONCURRENCY: 16,
  RUNS: 30,
  WARMUP_MS: 2000,
  INITIAL_WARMUP_MS: 10_000,
});
const MODEL_LATENCY_MS = 300;

const BODY = JSON.stringify({
  request: 'How do I reset my password?',
  response: 'Open Settings, choose Security, then Reset password. A link arrives by email within a minute.',
  tags: ['bench'],
});

interface Servers extends Ready {
  oneEvaluatorJudge?: string;
  eightEvaluatorJudge?: string;
}

// ---- children: the servers ----------------------------------------------------------------------

async function serveBare(): Promise<Ready> {
  const express = (await import('express')).default;
  const app = express();
  app.use(express.json({ limit: '1mb' }));
  app.post('/echo', (req, res) => {
    res.json({ received: Object.keys(req.body ?? {}).length, score: 0.8 });
  });
  return { url: `${await listenOnLoopback(app)}/echo` };
}

async function serveJudges(fakeUrl: string): Promise<Servers> {
  const { url } = await serveTribunal(fakeUrl, { TRIBUNAL_MODEL_CONCURRENCY: '64' });
  const { key, judgeIds } = await demoWithJudges(url, {
    'bench one': ['Answer Relevance'],
    'bench eight': ['Answer Relevance', 'Clarity', 'Conciseness', 'Coherence', 'Helpfulness', 'Politeness', 'Completeness', 'Truthfulness'],
  });
  return { url, key, oneEvaluatorJudge: judgeIds[0], eightEvaluatorJudge: judgeIds[1] };
}

if (process.argv[2] === '--serve') {
  const kind = process.argv[3];
  await serveChild(() => (kind === 'bare' ? serveBare() : kind === 'fake' ? serveFake() : serveJudges(process.argv[4]!)));
}

// ---- parent: the load ---------------------------------------------------------------------------

// BENCH_PROFILE=<dir> writes a CPU profile of the Tribunal server (node --cpu-prof).
const startServer = (kind: 'bare' | 'tribunal' | 'fake', fakeUrl = '') => startChild<Servers>(SELF, kind, [fakeUrl], { profile: kind === 'tribunal' });

interface Target {
  label: string;
  server: 'bare' | 'tribunal';
  method: 'GET' | 'POST';
  url: (r: Servers) => string;
}

const ALL_TARGETS: Target[] = [
  { label: 'bare express JSON route', server: 'bare', method: 'POST', url: (r) => r.url },
  { label: 'Tribunal judge execute (1 evaluator)', server: 'tribunal', method: 'POST', url: (r) => `${r.url}/v1/judges/${r.oneEvaluatorJudge}/execute/` },
  // Not a goal: the same server answering GET /v1/judges/{id}/ (auth, rate limit, store read, no
  // model call and no log write), to show what the model call and the log append add.
  { label: 'Tribunal GET judge (no model call)', server: 'tribunal', method: 'GET', url: (r) => `${r.url}/v1/judges/${r.oneEvaluatorJudge}/` },
];
// BENCH_ONLY=execute keeps the reference and the targets whose label contains that text (for profiling).
const TARGETS = process.env.BENCH_ONLY ? ALL_TARGETS.filter((t, i) => i === 0 || t.label.includes(process.env.BENCH_ONLY!)) : ALL_TARGETS;

async function drive(url: string, key: string | undefined, ms: number, concurrency: number, method: 'GET' | 'POST' = 'POST') {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const target = new URL(url);
  const headers: Record<string, string> = { 'content-type': 'application/json', ...(key ? { authorization: `Api-Key ${key}` } : {}) };
  let ok = 0;
  let errors = 0;
  let firstError: string | undefined;
  const latencies: number[] = [];
  const seconds = await forDuration(ms, concurrency, async () => {
    const t0 = performance.now();
    const res = await request(agent, target, headers, method === 'GET' ? null : BODY);
    latencies.push(performance.now() - t0);
    if (res.status === 200) ok++;
    else {
      errors++;
      firstError ??= `${res.status} ${res.text.slice(0, 300)}`;
    }
  });
  agent.destroy();
  if (firstError) console.error(`  ${url}: ${errors} failed requests, first: ${firstError}`);
  return { ok, errors, seconds, latencies };
}

async function main() {
  const servers: Record<string, Child<Servers>> = {};
  console.log(`Scoring bench: Node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? 'unknown'})`);
  try {
    servers.fake = await startServer('fake');
    servers.bare = await startServer('bare');
    servers.tribunal = await startServer('tribunal', servers.fake.ready.url);

    // 1. Throughput.
    await setFakeLatency(servers.fake.child, 0);
    console.log(`\n1. Throughput: ${ROUNDS} rounds x ${SECONDS}s per target, ${CONCURRENCY} concurrent keep-alive clients, fake model answering at once`);
    const wall: Record<string, number[]> = {};
    const perCpu: Record<string, number[]> = {};
    let failed = 0;
    if (INITIAL_WARMUP_MS > 0) {
      console.log(`  initial warm-up: ${INITIAL_WARMUP_MS / 1000}s per target`);
      for (const t of TARGETS) await drive(t.url(servers[t.server]!.ready), servers[t.server]!.ready.key, INITIAL_WARMUP_MS, CONCURRENCY, t.method);
    }
    for (let round = 1; round <= ROUNDS; round++) {
      for (const t of TARGETS) {
        const { child, ready } = servers[t.server]!;
        await drive(t.url(ready), ready.key, WARMUP_MS, CONCURRENCY, t.method);
        await resetFake(servers.fake.child);
        const cpu0 = await childCpuMicros(child);
        const fake0 = await childCpuMicros(servers.fake.child);
        const client0 = process.cpuUsage();
        const r = await drive(t.url(ready), ready.key, SECONDS * 1000, CONCURRENCY, t.method);
        const clientCpu = process.cpuUsage(client0);
        const fakeCpuSeconds = ((await childCpuMicros(servers.fake.child)) - fake0) / 1e6;
        const cpuSeconds = ((await childCpuMicros(child)) - cpu0) / 1e6;
        failed += r.errors;
        (wall[t.label] ??= []).push(r.ok / r.seconds);
        (perCpu[t.label] ??= []).push(r.ok / cpuSeconds);
        console.log(
          `  round ${round}  ${t.label.padEnd(38)} ${(r.ok / r.seconds).toFixed(0).padStart(6)} req/s   p50 ${median(r.latencies).toFixed(1).padStart(6)} ms   CPU ms/req: server ${((cpuSeconds / r.ok) * 1000).toFixed(2).padStart(5)}` +
            `  fake model ${((fakeCpuSeconds / r.ok) * 1000).toFixed(2).padStart(5)}  load generator ${((clientCpu.user + clientCpu.system) / 1000 / r.ok).toFixed(2).padStart(5)}`,
        );
      }
    }
    const [bare, tribunal, getJudge] = ALL_TARGETS.map((t) => t.label) as [string, string, string];
    const wallRatio = median(wall[tribunal]!) / median(wall[bare]!);
    const cpuRatio = median(perCpu[tribunal]!) / median(perCpu[bare]!);
    console.log(
      `  median: bare ${median(wall[bare]!).toFixed(0)} req/s, Tribunal execute ${median(wall[tribunal]!).toFixed(0)} req/s, Tribunal GET judge ${wall[getJudge] ? median(wall[getJudge]).toFixed(0) : 'n/a'} req/s`,
    );
    console.log(
      `  ratio Tribunal / bare: ${wallRatio.toFixed(2)}x wall-clock, ${cpuRatio.toFixed(2)}x per server CPU-second (goal >= 0.50x)${failed ? `  (${failed} failed requests)` : ''}`,
    );

    // 2. Latency of a judge of eight evaluators with the model at 300 ms, next to its reference
    // measured in the same run: one raw model call, the same request one evaluator sends (its path,
    // body and API headers, taken from the fake after the warm-up), posted straight from here to the
    // fake over a keep-alive agent, no server in between.
    await setFakeLatency(servers.fake.child, MODEL_LATENCY_MS);
    const { ready } = servers.tribunal;
    const url = new URL(`${ready.url}/v1/judges/${ready.eightEvaluatorJudge}/execute/`);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const headers = { 'content-type': 'application/json', authorization: `Api-Key ${ready.key}` };
    await request(agent, url, headers, BODY); // warm-up: connections to the fake
    const sent = await lastFakeRequest(servers.fake.child);
    if (!sent) throw new Error('the fake recorded no model request');
    const rawUrl = new URL(sent.path, servers.fake.ready.url);
    // Its headers as sent (the key, the API version, the content type), less those of the connection.
    const rawHeaders: Record<string, string> = {};
    for (const [h, v] of Object.entries(sent.headers))
      if (typeof v === 'string' && !['host', 'content-length', 'connection', 'keep-alive', 'transfer-encoding'].includes(h)) rawHeaders[h] = v;
    const rawAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const rawCall = async () => {
      const res = await request(rawAgent, rawUrl, rawHeaders, sent.body);
      if (res.status !== 200) throw new Error(`raw model call: ${res.status} ${res.text.slice(0, 300)}`);
    };
    await rawCall(); // warm-up: the connection to the fake
    // The judge's runs back to back as before, then the raw calls back to back: each measured at the
    // same cadence (a request right after the previous answer), neither idling longer between runs.
    const latencies: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const t0 = performance.now();
      const res = await request(agent, url, headers, BODY);
      latencies.push(performance.now() - t0);
      if (res.status !== 200) throw new Error(`judge execute: ${res.status} ${res.text.slice(0, 300)}`);
      const results = JSON.parse(res.text).evaluator_results as Array<{ score: number | null }>;
      if (results.length !== 8 || results.some((r) => r.score === null)) throw new Error(`unexpected results: ${res.text.slice(0, 300)}`);
    }
    const raw: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const t0 = performance.now();
      await rawCall();
      raw.push(performance.now() - t0);
    }
    agent.destroy();
    rawAgent.destroy();
    const p50 = median(latencies);
    const rawP50 = median(raw);
    const spread = (xs: number[]) =>
      `median ${median(xs).toFixed(1)} ms, p90 ${quantile(xs, 0.9).toFixed(1)} ms, min ${Math.min(...xs).toFixed(1)} ms, max ${Math.max(...xs).toFixed(1)} ms`;
    console.log(`\n2. Latency: judge of 8 evaluators, fake model at ${MODEL_LATENCY_MS} ms, ${RUNS} sequential runs, then as many raw model calls`);
    console.log(`  judge of 8:     ${spread(latencies)}`);
    console.log(`  raw model call: ${spread(raw)} (${Buffer.byteLength(sent.body)}-byte request, as one evaluator sends it)`);
    console.log(`  ratio judge of 8 / raw model call: ${(p50 / rawP50).toFixed(3)}x (goal <= 1.02x); median - raw: ${(p50 - rawP50).toFixed(1)} ms`);
    console.log(`  ratio median / ${MODEL_LATENCY_MS} ms: ${(p50 / MODEL_LATENCY_MS).toFixed(3)}x (run serially the 8 calls would take ${8 * MODEL_LATENCY_MS} ms)`);
  } finally {
    stopChildren(Object.values(servers));
  }
}

runBench(main);
