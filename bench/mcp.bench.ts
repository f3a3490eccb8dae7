// MCP tool calls per second: Tribunal's /mcp (list_judges, run_judge with the fake judge model
// answering at once) next to a bare SDK server with a no-op tool, in the same transport mode
// (streamable HTTP, stateless, JSON responses), measured in the same run. Two bare references: a
// new McpServer per request (the SDK's stateless example) and McpServers reused across requests
// (what src/mcp.ts does). Results and their reading: docs/BENCHMARKS.md, section MCP.
//
//   npm run bench:mcp          BENCH_SECONDS=4 BENCH_ROUNDS=3 BENCH_CONCURRENCY=16 BENCH_INITIAL_WARMUP_MS=10000 by default;
//                              BENCH_ONLY=<text> keeps the targets whose label contains it;
//                              BENCH_PROFILE=<dir> writes CPU profiles of the child processes.
//
// The servers and the fake Anthropic server each run in their own child process; the measured
// server is the only one under load at any time. This process drives it with BENCH_CONCURRENCY
// keep-alive HTTP clients posting JSON-RPC tools/call requests as an MCP client does, and reads the
// server's CPU time over IPC around each measured window. Rounds alternate between the targets and
// the median round is reported. Before the first round every target gets the same initial warm-up
// (BENCH_INITIAL_WARMUP_MS), so that the rounds compare JIT-warm servers: Tribunal's longer code
// path takes more traffic to settle than a no-op tool. The fake model forgets the requests it has
// recorded before every measured window, so its heap does not grow over the run.
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import http from 'node:http';

const SELF = fileURLToPath(import.meta.url);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const WARMUP_MS = 1000;
const INITIAL_WARMUP_MS = Number(process.env.BENCH_INITIAL_WARMUP_MS ?? 10_000);
const PROTOCOL_VERSION = '2025-06-18';

interface Ready {
  url: string;
  key?: string;
  judgeId?: string;
}

// ---- child: the servers -----------------------------------------------------------------------

async function serveBare(): Promise<Ready> {
  const express = (await import('express')).default;
  const { McpServer } = await import('@modelcontextprotocol/sdk/server/mcp.js');
  const { StreamableHTTPServerTransport } = await import('@modelcontextprotocol/sdk/server/streamableHttp.js');
  const app = express();
  app.use(express.json({ limit: '1mb' }));
  const bareServer = () => {
    const server = new McpServer({ name: 'bare', version: '1.0.0' });
    server.registerTool('noop', { description: 'does nothing', inputSchema: {} }, async () => ({ content: [{ type: 'text', text: 'ok' }] }));
    return server;
  };
  // The SDK's documented stateless pattern: a new server and transport for every request.
  app.post('/mcp', async (req, res) => {
    const server = bareServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });
  // The same, with servers reused across requests the way src/mcp.ts does (a fresh transport each time).
  const idle: Array<ReturnType<typeof bareServer>> = [];
  app.post('/mcp-reused', async (req, res) => {
    const server = idle.pop() ?? bareServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      transport.close().then(() => idle.push(server));
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });
  const listener = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => listener.once('listening', () => resolve()));
  return { url: `http://127.0.0.1:${(listener.address() as AddressInfo).port}/mcp` };
}

async function serveTribunal(fakeUrl: string): Promise<Ready> {
  const { buildServices } = await import('../src/app.ts');
  const { loadConfig } = await import('../src/config.ts');
  const { createServer } = await import('../src/server.ts');
  const { JsonStore } = await import('../src/store/json-store.ts');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tribunal-bench-'));
  process.on('exit', () => fs.rmSync(dataDir, { recursive: true, force: true }));
  const config = loadConfig({
    TRIBUNAL_DATA_DIR: dataDir,
    PORT: '0',
    TRIBUNAL_RATE_LIMIT: '100000000',
    ANTHROPIC_API_KEY: 'bench-dummy-key',
    ANTHROPIC_BASE_URL: fakeUrl,
    TRIBUNAL_MODEL_RETRIES: '0',
  });
  const store = new JsonStore({ dataDir });
  await store.init();
  const services = await buildServices(config, store);
  const app = createServer(services);
  const listener = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => listener.once('listening', () => resolve()));
  const base = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
  const demo = (await (await fetch(`${base}/create-demo-user/`, { method: 'POST' })).json()) as { api_key: string };
  const headers = { authorization: `Api-Key ${demo.api_key}`, 'content-type': 'application/json' };
  // A few judges so list_judges returns a realistic page; run_judge uses a one-evaluator judge.
  let judgeId = '';
  for (const [i, evaluators] of [['Answer Relevance'], ['Answer Relevance', 'Clarity'], ['Completeness', 'Conciseness'], ['Truthfulness']].entries()) {
    const res = await fetch(`${base}/v1/judges/`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: `bench judge ${i}`, intent: 'Support answers of a help-desk assistant.', evaluator_ids: evaluators }),
    });
    const body = (await res.json()) as { id: string };
    if (res.status !== 201) throw new Error(`creating a judge: ${res.status} ${JSON.stringify(body)}`);
    if (i === 0) judgeId = body.id;
  }
  return { url: `${base}/mcp`, key: demo.api_key, judgeId };
}

async function serveFake(): Promise<Ready> {
  const { startFakeAnthropic } = await import('../test/helpers/fake-anthropic.ts');
  // Answers at once with a valid evaluation, whatever the evaluator.
  const fake = await startFakeAnthropic({ responder: () => ({ kind: 'tool', input: { justification: 'The response answers the question directly.', score: 0.8 } }) });
  // The bench reads none of the recorded requests: the parent asks to drop them before each window.
  process.on('message', (m: { reset?: number }) => {
    if (m.reset !== undefined) {
      fake.resetStats();
      process.send!({ wasReset: m.reset });
    }
  });
  return { url: fake.url };
}

if (process.argv[2] === '--serve') {
  process.once('SIGINT', () => process.exit(0));
  const kind = process.argv[3];
  const ready = kind === 'bare' ? await serveBare() : kind === 'fake' ? await serveFake() : await serveTribunal(process.argv[4]!);
  process.send!({ ready });
  // The parent asks for this process's CPU time around each measured window.
  process.on('message', (m: { cpu?: number }) => {
    if (m.cpu !== undefined) {
      const u = process.cpuUsage();
      process.send!({ cpu: m.cpu, micros: u.user + u.system });
    }
  });
}

// ---- parent: the load ---------------------------------------------------------------------------

let cpuAsk = 0;
/** CPU time (user + system, microseconds) the child has used so far. */
function childCpu(child: ChildProcess): Promise<number> {
  const ask = ++cpuAsk;
  return new Promise((resolve) => {
    const onMessage = (m: { cpu?: number; micros?: number }) => {
      if (m.cpu === ask) {
        child.off('message', onMessage);
        resolve(m.micros!);
      }
    };
    child.on('message', onMessage);
    child.send({ cpu: ask });
  });
}

/** Asks the fake to forget its recorded requests. */
function resetFake(child: ChildProcess): Promise<void> {
  const ask = ++cpuAsk;
  return new Promise((resolve) => {
    const onMessage = (m: { wasReset?: number }) => {
      if (m.wasReset === ask) {
        child.off('message', onMessage);
        resolve();
      }
    };
    child.on('message', onMessage);
    child.send({ reset: ask });
  });
}

function startChild(kind: 'bare' | 'tribunal' | 'fake', fakeUrl = ''): Promise<{ child: ChildProcess; ready: Ready }> {
  const profile = process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [];
  const child = fork(SELF, ['--serve', kind, fakeUrl], { execArgv: ['--import', 'tsx', ...profile], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    child.once('message', (m: { ready: Ready }) => resolve({ child, ready: m.ready }));
    child.once('exit', (code) => reject(new Error(`${kind} server exited with ${code}`)));
  });
}

interface Target {
  label: string;
  server: 'bare' | 'tribunal';
  /** Path on that server, default /mcp. */
  path?: string;
  tool: string;
  args: (ready: Ready) => Record<string, unknown>;
}

const ALL_TARGETS: Target[] = [
  { label: 'bare SDK server, no-op tool', server: 'bare', tool: 'noop', args: () => ({}) },
  { label: 'bare SDK server reused, no-op tool', server: 'bare', path: '/mcp-reused', tool: 'noop', args: () => ({}) },
  { label: 'Tribunal list_judges', server: 'tribunal', tool: 'list_judges', args: () => ({}) },
  {
    label: 'Tribunal run_judge (1 evaluator, fake model)',
    server: 'tribunal',
    tool: 'run_judge',
    args: (r) => ({ judge_id: r.judgeId, request: 'How do I reset my password?', response: 'Open Settings, choose Security, then Reset password.' }),
  },
];

/** POST a JSON body over a keep-alive agent; resolves with the status and the parsed body. */
function post(agent: http.Agent, url: URL, headers: Record<string, string>, body: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          /* left as text */
        }
        resolve({ status: res.statusCode ?? 0, body: parsed });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

// BENCH_ONLY=run_judge keeps the targets whose label contains that text (for profiling one of them).
const TARGETS = process.env.BENCH_ONLY ? ALL_TARGETS.filter((t) => t.label.includes(process.env.BENCH_ONLY!)) : ALL_TARGETS;

async function drive(ready: Ready, path: string | undefined, tool: string, args: Record<string, unknown>, ms: number): Promise<{ calls: number; errors: number; seconds: number }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const url = new URL(path ?? '/mcp', ready.url);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': PROTOCOL_VERSION,
    ...(ready.key ? { authorization: `Bearer ${ready.key}` } : {}),
  };
  let id = 0;
  let calls = 0;
  let errors = 0;
  let firstError: string | undefined;
  const started = performance.now();
  const deadline = started + ms;
  const worker = async () => {
    while (performance.now() < deadline) {
      const payload = JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name: tool, arguments: args } });
      const res = await post(agent, url, headers, payload);
      if (res.status !== 200 || !res.body?.result || res.body.result.isError) {
        errors++;
        firstError ??= `${res.status} ${JSON.stringify(res.body).slice(0, 300)}`;
      } else calls++;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  if (firstError) console.error(`  ${tool}: ${errors} failed calls, first: ${firstError}`);
  return { calls, errors, seconds };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

interface Sample {
  /** Calls per wall-clock second. */
  wall: number;
  /** Calls per second of server CPU time (user + system): the capacity of one core. */
  perCpu: number;
}

async function main() {
  const servers: Record<string, { child: ChildProcess; ready: Ready }> = {};
  const samples: Record<string, Sample[]> = Object.fromEntries(TARGETS.map((t) => [t.label, []]));
  const failed: Record<string, number> = {};
  console.log(`MCP bench: ${ROUNDS} rounds x ${SECONDS}s per target, ${CONCURRENCY} concurrent clients, Node ${process.version}, ${os.cpus().length} CPUs`);
  try {
    // The fake judge model gets its own process too, so its CPU is not counted as the server's.
    servers.fake = await startChild('fake');
    for (const kind of new Set(TARGETS.map((t) => t.server))) servers[kind] = await startChild(kind, servers.fake.ready.url);
    if (INITIAL_WARMUP_MS > 0) {
      console.log(`  initial warm-up: ${INITIAL_WARMUP_MS / 1000}s per target`);
      for (const target of TARGETS) {
        const { ready } = servers[target.server]!;
        await drive(ready, target.path, target.tool, target.args(ready), INITIAL_WARMUP_MS);
      }
    }
    for (let round = 1; round <= ROUNDS; round++) {
      for (const target of TARGETS) {
        const { child, ready } = servers[target.server]!;
        await drive(ready, target.path, target.tool, target.args(ready), WARMUP_MS);
        await resetFake(servers.fake.child);
        const cpuBefore = await childCpu(child);
        const r = await drive(ready, target.path, target.tool, target.args(ready), SECONDS * 1000);
        const cpuSeconds = ((await childCpu(child)) - cpuBefore) / 1e6;
        const sample = { wall: r.calls / r.seconds, perCpu: r.calls / cpuSeconds };
        samples[target.label]!.push(sample);
        failed[target.label] = (failed[target.label] ?? 0) + r.errors;
        console.log(
          `  round ${round}  ${target.label.padEnd(46)} ${sample.wall.toFixed(0).padStart(6)} calls/s  ${((cpuSeconds / r.calls) * 1000).toFixed(2).padStart(6)} server CPU ms/call`,
        );
      }
    }
  } finally {
    // SIGINT lets a profiled child write its profile before it exits.
    for (const { child } of Object.values(servers)) child.kill('SIGINT');
  }
  const med = (label: string, key: keyof Sample) => (samples[label]?.length ? median(samples[label]!.map((x) => x[key])) : NaN);
  const pct = (x: number, of: number) => (Number.isFinite(x / of) ? `${((x / of) * 100).toFixed(0)}%` : 'n/a');
  const [fresh, reused] = [ALL_TARGETS[0]!.label, ALL_TARGETS[1]!.label];
  console.log('\nmedians (goal: >= 80% of the bare SDK server in the same transport mode)');
  console.log(`  ${'target'.padEnd(46)} ${'calls/s'.padStart(8)} ${'vs fresh'.padStart(9)} ${'vs reused'.padStart(9)}   ${'calls/CPU-s'.padStart(11)} ${'vs fresh'.padStart(9)} ${'vs reused'.padStart(9)}`);
  for (const target of TARGETS) {
    const wall = med(target.label, 'wall');
    const perCpu = med(target.label, 'perCpu');
    const errs = failed[target.label] ? `  (${failed[target.label]} failed calls)` : '';
    console.log(
      `  ${target.label.padEnd(46)} ${wall.toFixed(0).padStart(8)} ${pct(wall, med(fresh, 'wall')).padStart(9)} ${pct(wall, med(reused, 'wall')).padStart(9)}   ` +
        `${perCpu.toFixed(0).padStart(11)} ${pct(perCpu, med(fresh, 'perCpu')).padStart(9)} ${pct(perCpu, med(reused, 'perCpu')).padStart(9)}${errs}`,
    );
  }
  console.log('  calls/s: wall-clock throughput; calls/CPU-s: calls per second of the server process CPU time (one core),');
  console.log('  which holds up better on a shared machine. fresh: a new McpServer per request (the SDK stateless example);');
  console.log('  reused: McpServers pooled across requests, as Tribunal does. Both: stateless transport, JSON responses.');
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
