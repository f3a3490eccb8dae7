// MCP tool calls per second: Tribunal's /mcp (list_judges, run_judge with the fake judge model
// answering at once) next to a bare SDK server with a no-op tool, in the same transport mode
// (streamable HTTP, stateless, JSON responses), measured in the same run. Two bare references: a
// new McpServer per request (the SDK's stateless example) and McpServers reused across requests
// (what src/mcp.ts does). Results and their reading: docs/BENCHMARKS.md, section MCP.
//
//   npm run bench:mcp          BENCH_SECONDS=4 BENCH_ROUNDS=7 BENCH_CONCURRENCY=16 BENCH_INITIAL_WARMUP_MS=10000 by default;
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
import http from 'node:http';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
// The measuring helpers, then the child servers' lifecycle (bench/harness.ts).
import { benchEnv, childCpuMicros, demoWithJudges, forDuration, median, request, runBench } from './harness.ts';
import { listenOnLoopback, resetFake, serveChild, serveFake, serveTribunal, startChild, stopChildren, type Child, type Ready } from './harness.ts';

const SELF = fileURLToPath(import.meta.url);
const { SECONDS, ROUNDS, CONCURRENCY, INITIAL_WARMUP_MS } = benchEnv({ SECONDS: 4, ROUNDS: 7, CONCURRENCY: 16, INITIAL_WARMUP_MS: 10_000 });
const WARMUP_MS = 1000;
const PROTOCOL_VERSION = '2025-06-18';

interface Servers extends Ready {
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
  return { url: `${await listenOnLoopback(app)}/mcp` };
}

async function serveJudges(fakeUrl: string): Promise<Servers> {
  const { url } = await serveTribunal(fakeUrl, { TRIBUNAL_MODEL_RETRIES: '0' });
  // A few judges so list_judges returns a realistic page; run_judge uses a one-evaluator judge.
  const { key, judgeIds } = await demoWithJudges(url, {
    'bench judge 0': ['Answer Relevance'],
    'bench judge 1': ['Answer Relevance', 'Clarity'],
    'bench judge 2': ['Completeness', 'Conciseness'],
    'bench judge 3': ['Truthfulness'],
  });
  return { url: `${url}/mcp`, key, judgeId: judgeIds[0] };
}

if (process.argv[2] === '--serve') {
  const kind = process.argv[3];
  await serveChild(() => (kind === 'bare' ? serveBare() : kind === 'fake' ? serveFake() : serveJudges(process.argv[4]!)));
}

// ---- parent: the load ---------------------------------------------------------------------------

const startServer = (kind: 'bare' | 'tribunal' | 'fake', fakeUrl = '') => startChild<Servers>(SELF, kind, [fakeUrl], { stdout: 'inherit' });

interface Target {
  label: string;
  server: 'bare' | 'tribunal';
  /** Path on that server, default /mcp. */
  path?: string;
  tool: string;
  args: (ready: Servers) => Record<string, unknown>;
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

// BENCH_ONLY=run_judge keeps the targets whose label contains that text (for profiling one of them).
const TARGETS = process.env.BENCH_ONLY ? ALL_TARGETS.filter((t) => t.label.includes(process.env.BENCH_ONLY!)) : ALL_TARGETS;

async function drive(
  ready: Servers,
  path: string | undefined,
  tool: string,
  args: Record<string, unknown>,
  ms: number,
): Promise<{ calls: number; errors: number; seconds: number }> {
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
  const seconds = await forDuration(ms, CONCURRENCY, async () => {
    const payload = JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name: tool, arguments: args } });
    const res = await request(agent, url, headers, payload);
    let body: any;
    try {
      body = JSON.parse(res.text);
    } catch {
      body = undefined;
    }
    if (res.status !== 200 || !body?.result || body.result.isError) {
      errors++;
      firstError ??= `${res.status} ${res.text.slice(0, 300)}`;
    } else calls++;
  });
  agent.destroy();
  if (firstError) console.error(`  ${tool}: ${errors} failed calls, first: ${firstError}`);
  return { calls, errors, seconds };
}

interface Sample {
  /** Calls per wall-clock second. */
  wall: number;
  /** Calls per second of server CPU time (user + system): the capacity of one core. */
  perCpu: number;
}

async function main() {
  const servers: Record<string, Child<Servers>> = {};
  const samples: Record<string, Sample[]> = Object.fromEntries(TARGETS.map((t) => [t.label, []]));
  const failed: Record<string, number> = {};
  console.log(`MCP bench: ${ROUNDS} rounds x ${SECONDS}s per target, ${CONCURRENCY} concurrent clients, Node ${process.version}, ${os.cpus().length} CPUs`);
  try {
    // The fake judge model gets its own process too, so its CPU is not counted as the server's.
    servers.fake = await startServer('fake');
    for (const kind of new Set(TARGETS.map((t) => t.server))) servers[kind] = await startServer(kind, servers.fake.ready.url);
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
        const cpuBefore = await childCpuMicros(child);
        const r = await drive(ready, target.path, target.tool, target.args(ready), SECONDS * 1000);
        const cpuSeconds = ((await childCpuMicros(child)) - cpuBefore) / 1e6;
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
    stopChildren(Object.values(servers));
  }
  const med = (label: string, key: keyof Sample) => (samples[label]?.length ? median(samples[label]!.map((x) => x[key])) : NaN);
  const pct = (x: number, of: number) => (Number.isFinite(x / of) ? `${((x / of) * 100).toFixed(0)}%` : 'n/a');
  const [fresh, reused] = [ALL_TARGETS[0]!.label, ALL_TARGETS[1]!.label];
  console.log('\nmedians (goal: >= 80% of the bare SDK server in the same transport mode)');
  console.log(
    `  ${'target'.padEnd(46)} ${'calls/s'.padStart(8)} ${'vs fresh'.padStart(9)} ${'vs reused'.padStart(9)}   ${'calls/CPU-s'.padStart(11)} ${'vs fresh'.padStart(9)} ${'vs reused'.padStart(9)}`,
  );
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

runBench(main);
