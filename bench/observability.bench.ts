// Overhead of logs and metrics (issue 18): server CPU per judge run with them on, against off.
// Goal: within 5%.
//
//   node --import tsx bench/observability.bench.ts   (BENCH_SECONDS=4 BENCH_ROUNDS=10 BENCH_CONCURRENCY=8
//                                                     BENCH_INITIAL_WARMUP_MS=8000 BENCH_WARMUP_MS=1500)
//
// Three Tribunal servers in child processes on the same JSON store settings and the same fake judge
// model (a third child, answering at once): "on" is what `npm start` runs (request ids, one JSON
// log line per request and per model call, written to stdout, here /dev/null, so the
// serialization and the write are paid; prom-client metrics with process metrics; the model
// observer); "off" is createServer with `observability: false` (none of it), and "control" is a
// second "off": its ratio to "off" shows how far apart two identical servers measure here. Traces
// are off (no OTLP endpoint). In each round the three are driven at the same time, BENCH_CONCURRENCY
// clients each; the figure is server CPU per run (not wall-clock: the machine is shared), and the
// median over rounds of each one's ratio to "off".
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const SELF = fileURLToPath(import.meta.url);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const WARMUP_MS = Number(process.env.BENCH_WARMUP_MS ?? 1500);
const INITIAL_WARMUP_MS = Number(process.env.BENCH_INITIAL_WARMUP_MS ?? 8000);
const BODY = JSON.stringify({ request: 'How do I reset my password?', response: 'Open Settings, choose Security, then Reset password.', tags: ['bench'] });

type Kind = 'fake' | 'on' | 'off' | 'control';
type Served = 'on' | 'off' | 'control';
interface Ready {
  url: string;
  execute?: string;
  key?: string;
}

async function serveFake(): Promise<Ready> {
  const { startFakeAnthropic, toolAnswer } = await import('../test/helpers/fake-anthropic.ts');
  const fake = await startFakeAnthropic({ responder: () => toolAnswer({ justification: 'Answers the question.', score: 0.8 }, { usage: { input_tokens: 900, output_tokens: 60 } }) });
  process.on('message', (m: { reset?: number }) => {
    if (m.reset === undefined) return;
    fake.resetStats(); // the bench reads no recorded request: keep the fake's heap small
    process.send!({ wasReset: m.reset });
  });
  return { url: fake.url };
}

async function serveTribunal(kind: Served, fakeUrl: string): Promise<Ready> {
  const { buildServices } = await import('../src/app.ts');
  const { loadConfig } = await import('../src/config.ts');
  const { createObservability } = await import('../src/observability/index.ts');
  const { createServer } = await import('../src/server.ts');
  const { JsonStore } = await import('../src/store/json-store.ts');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `tribunal-bench-obs-${kind}-`));
  process.on('exit', () => fs.rmSync(dataDir, { recursive: true, force: true }));
  const config = loadConfig({ TRIBUNAL_DATA_DIR: dataDir, TRIBUNAL_RATE_LIMIT: '100000000', ANTHROPIC_API_KEY: 'bench-dummy-key', ANTHROPIC_BASE_URL: fakeUrl, TRIBUNAL_MODEL_CONCURRENCY: '64', TRIBUNAL_LOG_PRETTY: 'false', TRIBUNAL_METRICS_TOKEN: 'bench-metrics-token-0123456789' });
  const store = new JsonStore({ dataDir });
  await store.init();
  const observability = kind === 'on' ? await createObservability(config) : false; // control: a second 'off'
  const services = await buildServices(config, store, observability ? observability.modelObserver : undefined);
  const app = createServer(services, { observability });
  const listener = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => listener.once('listening', () => resolve()));
  const base = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
  const demo = (await (await fetch(`${base}/create-demo-user/`, { method: 'POST' })).json()) as { api_key: string };
  const res = await fetch(`${base}/v1/judges/`, {
    method: 'POST',
    headers: { authorization: `Api-Key ${demo.api_key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'bench', intent: 'Help-desk answers.', evaluator_ids: ['Answer Relevance'] }),
  });
  const judge = (await res.json()) as { id: string };
  if (res.status !== 201) throw new Error(`creating a judge: ${res.status} ${JSON.stringify(judge)}`);
  return { url: base, execute: `${base}/v1/judges/${judge.id}/execute/`, key: demo.api_key };
}

if (process.argv[2] === '--serve') {
  process.once('SIGINT', () => process.exit(0));
  const kind = process.argv[3] as Kind;
  const ready = kind === 'fake' ? await serveFake() : await serveTribunal(kind, process.argv[4]!);
  process.send!({ ready });
  process.on('message', (m: { cpu?: number }) => {
    if (m.cpu === undefined) return;
    const u = process.cpuUsage();
    process.send!({ cpu: m.cpu, micros: u.user + u.system });
  });
}

function startChild(kind: Kind, fakeUrl = ''): Promise<{ child: ChildProcess; ready: Ready }> {
  const child = fork(SELF, ['--serve', kind, fakeUrl], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    child.once('message', (m: { ready: Ready }) => resolve({ child, ready: m.ready }));
    child.once('exit', (code) => reject(new Error(`${kind} server exited with ${code}`)));
  });
}

let asks = 0;
function ask<T>(child: ChildProcess, message: Record<string, unknown>, answerKey: string): Promise<T> {
  return new Promise((resolve) => {
    const onMessage = (m: Record<string, unknown>) => {
      if (!(answerKey in m)) return;
      child.off('message', onMessage);
      resolve(m as T);
    };
    child.on('message', onMessage);
    child.send(message);
  });
}
const childCpu = async (child: ChildProcess) => (await ask<{ micros: number }>(child, { cpu: ++asks }, 'micros')).micros;

function post(agent: http.Agent, url: URL, key: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const headers = { authorization: `Api-Key ${key}`, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(BODY)) };
    const req = http.request(url, { method: 'POST', agent, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(BODY);
  });
}

/** BENCH_CONCURRENCY keep-alive clients, each posting its next run when the last is answered. */
async function drive(ready: Ready, ms: number): Promise<{ ok: number; failed: number }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const url = new URL(ready.execute!);
  let ok = 0;
  let failed = 0;
  const deadline = performance.now() + ms;
  const worker = async () => {
    while (performance.now() < deadline) ((await post(agent, url, ready.key!)) === 200 ? ok++ : failed++);
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  agent.destroy();
  return { ok, failed };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main() {
  console.log(`Observability overhead bench: Node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? 'unknown'})`);
  const children: Array<{ child: ChildProcess }> = [];
  try {
    const fake = await startChild('fake');
    children.push(fake);
    const servers = { off: await startChild('off', fake.ready.url), control: await startChild('control', fake.ready.url), on: await startChild('on', fake.ready.url) };
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
      await ask(fake.child, { reset: ++asks }, 'wasReset');
      const cpu0: Record<string, number> = {};
      for (const k of order) cpu0[k] = await childCpu(servers[k].child);
      const runs = await Promise.all(order.map((k) => drive(servers[k].ready, SECONDS * 1000)));
      const line: string[] = [];
      for (const [i, k] of order.entries()) {
        const cpuMs = ((await childCpu(servers[k].child)) - cpu0[k]!) / 1000;
        failed += runs[i]!.failed;
        cpuPerRun[k].push(cpuMs / runs[i]!.ok);
      }
      for (const k of kinds) line.push(`${k} ${cpuPerRun[k].at(-1)!.toFixed(3)}`);
      console.log(`  round ${String(round).padStart(2)}  server CPU ms/run: ${line.join('   ')}`);
    }
    const ratio = (k: Served) => median(cpuPerRun[k].map((x, i) => x / cpuPerRun.off[i]!));
    console.log(`  median server CPU per run: off ${median(cpuPerRun.off).toFixed(3)} ms, control ${median(cpuPerRun.control).toFixed(3)} ms, on ${median(cpuPerRun.on).toFixed(3)} ms`);
    console.log(`  median of the rounds' ratios: on / off ${ratio('on').toFixed(3)}x (goal <= 1.05x); control / off ${ratio('control').toFixed(3)}x (the noise floor: the same server twice)${failed ? `  (${failed} failed runs)` : ''}`);
  } finally {
    for (const { child } of children) child.kill('SIGINT');
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
