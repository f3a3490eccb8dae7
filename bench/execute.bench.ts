// Scoring benchmarks (issue 2), each against a reference measured in the same run:
//
//  1. Throughput: POST /v1/judges/{id}/execute/ for a one-evaluator judge, the fake judge model
//     answering at once, next to a bare express JSON route (express.json() in, res.json() out).
//     Goal: at least 0.5x the bare route's requests per second.
//  2. Latency: a judge of eight evaluators with the fake answering after 300 ms. The evaluators run
//     concurrently, so a run should take about one model call. Goal: median within 1.15 x 300 ms.
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
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const SELF = fileURLToPath(import.meta.url);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const RUNS = Number(process.env.BENCH_RUNS ?? 30);
const WARMUP_MS = Number(process.env.BENCH_WARMUP_MS ?? 2000);
const INITIAL_WARMUP_MS = Number(process.env.BENCH_INITIAL_WARMUP_MS ?? 10_000);
const MODEL_LATENCY_MS = 300;

const BODY = JSON.stringify({
  request: 'How do I reset my password?',
  response: 'Open Settings, choose Security, then Reset password. A link arrives by email within a minute.',
  tags: ['bench'],
});

interface Ready {
  url: string;
  key?: string;
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
  const listener = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => listener.once('listening', () => resolve()));
  return { url: `http://127.0.0.1:${(listener.address() as AddressInfo).port}/echo` };
}

async function serveFake(): Promise<Ready> {
  const { startFakeAnthropic, toolAnswer } = await import('../test/helpers/fake-anthropic.ts');
  const fake = await startFakeAnthropic({
    responder: () => toolAnswer({ justification: 'The response answers the question directly.', score: 0.8 }, { usage: { input_tokens: 900, output_tokens: 60 } }),
  });
  // The parent sets the fake's latency between phases.
  process.on('message', (m: { latency?: number; reset?: number }) => {
    if (m.latency !== undefined) {
      fake.setLatency(m.latency);
      process.send!({ latencySet: m.latency });
    }
    // The bench reads none of the recorded requests: drop them so the fake's heap stays small.
    if (m.reset !== undefined) {
      fake.resetStats();
      process.send!({ wasReset: m.reset });
    }
  });
  return { url: fake.url };
}

async function serveTribunal(fakeUrl: string): Promise<Ready> {
  const { serve } = await import('../src/main.ts');
  const { loadConfig } = await import('../src/config.ts');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tribunal-bench-execute-'));
  process.on('exit', () => fs.rmSync(dataDir, { recursive: true, force: true }));
  // The real server as `npm start` runs it (JSON store with durable log appends), on a random port.
  const config = loadConfig({
    TRIBUNAL_DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    TRIBUNAL_RATE_LIMIT: '100000000',
    ANTHROPIC_API_KEY: 'bench-dummy-key',
    ANTHROPIC_BASE_URL: fakeUrl,
    TRIBUNAL_MODEL_CONCURRENCY: '64',
  });
  const { url: base } = await serve(config);
  const demo = (await (await fetch(`${base}/create-demo-user/`, { method: 'POST' })).json()) as { api_key: string };
  const headers = { authorization: `Api-Key ${demo.api_key}`, 'content-type': 'application/json' };
  const judge = async (name: string, evaluator_ids: string[]) => {
    const res = await fetch(`${base}/v1/judges/`, { method: 'POST', headers, body: JSON.stringify({ name, intent: 'Help-desk answers.', evaluator_ids }) });
    const body = (await res.json()) as { id: string };
    if (res.status !== 201) throw new Error(`creating a judge: ${res.status} ${JSON.stringify(body)}`);
    return body.id;
  };
  return {
    url: base,
    key: demo.api_key,
    oneEvaluatorJudge: await judge('bench one', ['Answer Relevance']),
    eightEvaluatorJudge: await judge('bench eight', [
      'Answer Relevance',
      'Clarity',
      'Conciseness',
      'Coherence',
      'Helpfulness',
      'Politeness',
      'Completeness',
      'Truthfulness',
    ]),
  };
}

if (process.argv[2] === '--serve') {
  process.once('SIGINT', () => process.exit(0));
  const kind = process.argv[3];
  const ready = kind === 'bare' ? await serveBare() : kind === 'fake' ? await serveFake() : await serveTribunal(process.argv[4]!);
  process.send!({ ready });
  process.on('message', (m: { cpu?: number }) => {
    if (m.cpu !== undefined) {
      const u = process.cpuUsage();
      process.send!({ cpu: m.cpu, micros: u.user + u.system });
    }
  });
}

// ---- parent: the load ---------------------------------------------------------------------------

function startChild(kind: 'bare' | 'tribunal' | 'fake', fakeUrl = ''): Promise<{ child: ChildProcess; ready: Ready }> {
  // BENCH_PROFILE=<dir> writes a CPU profile of the Tribunal server (node --cpu-prof).
  const profile = process.env.BENCH_PROFILE && kind === 'tribunal' ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [];
  const child = fork(SELF, ['--serve', kind, fakeUrl], { execArgv: ['--import', 'tsx', ...profile], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    child.once('message', (m: { ready: Ready }) => resolve({ child, ready: m.ready }));
    child.once('exit', (code) => reject(new Error(`${kind} server exited with ${code}`)));
  });
}

let asks = 0;
function ask<T>(child: ChildProcess, message: Record<string, unknown>, answerKey: string): Promise<T> {
  return new Promise((resolve) => {
    const onMessage = (m: Record<string, unknown>) => {
      if (answerKey in m) {
        child.off('message', onMessage);
        resolve(m as T);
      }
    };
    child.on('message', onMessage);
    child.send(message);
  });
}
/** CPU time (user + system, microseconds) the child has used so far. */
const childCpu = async (child: ChildProcess) => (await ask<{ micros: number }>(child, { cpu: ++asks }, 'micros')).micros;

function post(agent: http.Agent, url: URL, headers: Record<string, string>, body: string | null): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const sized = body === null ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) };
    const req = http.request(url, { method: body === null ? 'GET' : 'POST', agent, headers: sized }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body ?? undefined);
  });
}

interface Target {
  label: string;
  server: 'bare' | 'tribunal';
  method: 'GET' | 'POST';
  url: (r: Ready) => string;
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
  const started = performance.now();
  const deadline = started + ms;
  const worker = async () => {
    while (performance.now() < deadline) {
      const t0 = performance.now();
      const res = await post(agent, target, headers, method === 'GET' ? null : BODY);
      latencies.push(performance.now() - t0);
      if (res.status === 200) ok++;
      else {
        errors++;
        firstError ??= `${res.status} ${res.text.slice(0, 300)}`;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  if (firstError) console.error(`  ${url}: ${errors} failed requests, first: ${firstError}`);
  return { ok, errors, seconds, latencies };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))]!;

async function main() {
  const servers: Record<string, { child: ChildProcess; ready: Ready }> = {};
  console.log(`Scoring bench: Node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? 'unknown'})`);
  try {
    servers.fake = await startChild('fake');
    servers.bare = await startChild('bare');
    servers.tribunal = await startChild('tribunal', servers.fake.ready.url);

    // 1. Throughput.
    await ask(servers.fake.child, { latency: 0 }, 'latencySet');
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
        await ask(servers.fake.child, { reset: ++asks }, 'wasReset');
        const cpu0 = await childCpu(child);
        const fake0 = await childCpu(servers.fake.child);
        const client0 = process.cpuUsage();
        const r = await drive(t.url(ready), ready.key, SECONDS * 1000, CONCURRENCY, t.method);
        const clientCpu = process.cpuUsage(client0);
        const fakeCpuSeconds = ((await childCpu(servers.fake.child)) - fake0) / 1e6;
        const cpuSeconds = ((await childCpu(child)) - cpu0) / 1e6;
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
    console.log(`  median: bare ${median(wall[bare]!).toFixed(0)} req/s, Tribunal execute ${median(wall[tribunal]!).toFixed(0)} req/s, Tribunal GET judge ${wall[getJudge] ? median(wall[getJudge]).toFixed(0) : 'n/a'} req/s`);
    console.log(`  ratio Tribunal / bare: ${wallRatio.toFixed(2)}x wall-clock, ${cpuRatio.toFixed(2)}x per server CPU-second (goal >= 0.50x)${failed ? `  (${failed} failed requests)` : ''}`);

    // 2. Latency of a judge of eight evaluators with the model at 300 ms.
    await ask(servers.fake.child, { latency: MODEL_LATENCY_MS }, 'latencySet');
    const { ready } = servers.tribunal;
    const url = `${ready.url}/v1/judges/${ready.eightEvaluatorJudge}/execute/`;
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const headers = { 'content-type': 'application/json', authorization: `Api-Key ${ready.key}` };
    const latencies: number[] = [];
    await post(agent, new URL(url), headers, BODY); // warm-up: connections to the fake
    for (let i = 0; i < RUNS; i++) {
      const t0 = performance.now();
      const res = await post(agent, new URL(url), headers, BODY);
      latencies.push(performance.now() - t0);
      if (res.status !== 200) throw new Error(`judge execute: ${res.status} ${res.text.slice(0, 300)}`);
      const results = JSON.parse(res.text).evaluator_results as Array<{ score: number | null }>;
      if (results.length !== 8 || results.some((r) => r.score === null)) throw new Error(`unexpected results: ${res.text.slice(0, 300)}`);
    }
    agent.destroy();
    const p50 = median(latencies);
    console.log(`\n2. Latency: judge of 8 evaluators, fake model at ${MODEL_LATENCY_MS} ms, ${RUNS} sequential runs`);
    console.log(`  median ${p50.toFixed(1)} ms, p90 ${quantile(latencies, 0.9).toFixed(1)} ms, min ${Math.min(...latencies).toFixed(1)} ms, max ${Math.max(...latencies).toFixed(1)} ms`);
    console.log(`  ratio median / ${MODEL_LATENCY_MS} ms: ${(p50 / MODEL_LATENCY_MS).toFixed(3)}x (goal <= 1.15x; run serially the 8 calls would take ${8 * MODEL_LATENCY_MS} ms)`);
  } finally {
    for (const { child } of Object.values(servers)) child.kill('SIGINT');
  }
}

if (process.argv[2] !== '--serve') {
  main().then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
