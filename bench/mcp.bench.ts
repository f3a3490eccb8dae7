// MCP tool calls per second: Tribunal's /mcp (list_judges, run_judge with the fake judge model
// answering at once) next to a bare SDK server with a no-op tool, in the same transport mode
// (streamable HTTP, stateless, JSON responses), measured in the same run.
//
//   npm run bench:mcp                       (BENCH_SECONDS=4 BENCH_ROUNDS=3 BENCH_CONCURRENCY=8)
//
// Each server runs in its own child process (one at a time, so they never compete for CPU); this
// process drives it with BENCH_CONCURRENCY keep-alive HTTP clients posting JSON-RPC tools/call
// requests as the SDK client does, and hosts the fake Anthropic server. Rounds alternate between the
// targets and the median round is reported.
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
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const WARMUP_MS = 1000;
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
  // The SDK's documented stateless pattern: a new server and transport for every request.
  app.post('/mcp', async (req, res) => {
    const server = new McpServer({ name: 'bare', version: '1.0.0' });
    server.registerTool('noop', { description: 'does nothing', inputSchema: {} }, async () => ({ content: [{ type: 'text', text: 'ok' }] }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
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
  tool: string;
  args: (ready: Ready) => Record<string, unknown>;
}

const ALL_TARGETS: Target[] = [
  { label: 'bare SDK server, no-op tool', server: 'bare', tool: 'noop', args: () => ({}) },
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

async function drive(ready: Ready, tool: string, args: Record<string, unknown>, ms: number): Promise<{ calls: number; errors: number; seconds: number }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const url = new URL(ready.url);
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
    for (let round = 1; round <= ROUNDS; round++) {
      for (const target of TARGETS) {
        const { child, ready } = servers[target.server]!;
        await drive(ready, target.tool, target.args(ready), WARMUP_MS);
        const cpuBefore = await childCpu(child);
        const r = await drive(ready, target.tool, target.args(ready), SECONDS * 1000);
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
  const base = samples[ALL_TARGETS[0]!.label];
  const baseWall = base ? median(base.map((x) => x.wall)) : NaN;
  const basePerCpu = base ? median(base.map((x) => x.perCpu)) : NaN;
  const pct = (x: number, of: number) => (Number.isFinite(of) ? `${((x / of) * 100).toFixed(0)}%`.padStart(5) : '  n/a');
  console.log('\nmedians; ratios to the bare SDK server (goal >= 80%):');
  console.log(`  ${'target'.padEnd(46)} ${'calls/s'.padStart(8)} ${'ratio'.padStart(6)}   ${'calls per server CPU-second'.padStart(27)} ${'ratio'.padStart(6)}`);
  for (const target of TARGETS) {
    const wall = median(samples[target.label]!.map((x) => x.wall));
    const perCpu = median(samples[target.label]!.map((x) => x.perCpu));
    const errs = failed[target.label] ? `  (${failed[target.label]} failed calls)` : '';
    console.log(`  ${target.label.padEnd(46)} ${wall.toFixed(0).padStart(8)} ${pct(wall, baseWall).padStart(6)}   ${perCpu.toFixed(0).padStart(27)} ${pct(perCpu, basePerCpu).padStart(6)}${errs}`);
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
