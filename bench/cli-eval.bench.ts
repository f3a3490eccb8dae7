// Batch evaluation through the CLI (issue 8): `tribunal eval` on 1,000 rows with a judge of three
// evaluators, the fake judge model answering after 300 ms.
//
//  1. Wall time against the ideal, rows x 300 ms / concurrency, at concurrency 8 and 32.
//     Goal: within 1.1 x the ideal. Measured from spawning the CLI to its exit (start-up included),
//     and also the batch alone (the CLI's own elapsed_s, from first request to summary).
//  2. CPU time of server and CLI together per graded evaluator (rows x 3). Goal: at most 5 ms.
//     Reference points from the issue, measured on this machine: promptfoo's model-graded
//     assertions about 1.5 x the ideal and 40 ms of CPU per grading, autoevals about 1.08 x and 7 ms.
//
// Measured in the same run as a reference: a bare client, the same POST /execute/ requests from a
// plain fetch loop with the same concurrency, which shows what the CLI itself adds.
//
//   node --import tsx bench/cli-eval.bench.ts        (BENCH_ROWS=1000 BENCH_LATENCY=300 BENCH_CONCURRENCY=8,32)
//
// The fake judge model and the server each run in their own child process; the server's CPU comes
// from process.cpuUsage() over IPC, the CLI's from a preload that writes process.cpuUsage() at exit.
// The server runs with TRIBUNAL_MODEL_CONCURRENCY=128 (the default 16 would cap 32 rows x 3
// evaluators in flight) and a rate limit high enough not to interfere.
import { fork, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const SELF = fileURLToPath(import.meta.url);
const ROOT = path.resolve(path.dirname(SELF), '..');
const ROWS = Number(process.env.BENCH_ROWS ?? 1000);
const LATENCY_MS = Number(process.env.BENCH_LATENCY ?? 300);
const CONCURRENCIES = (process.env.BENCH_CONCURRENCY ?? '8,32').split(',').map(Number);
const EVALUATORS = ['Answer Relevance', 'Clarity', 'Helpfulness'];

// ---- children -----------------------------------------------------------------------------------

async function serveFake(): Promise<{ url: string }> {
  const { startFakeAnthropic, toolAnswer } = await import('../test/helpers/fake-anthropic.ts');
  const fake = await startFakeAnthropic({
    latencyMs: LATENCY_MS,
    responder: () => toolAnswer({ justification: 'The response answers the question directly and clearly.', score: 0.8 }, { usage: { input_tokens: 900, output_tokens: 60 } }),
  });
  return { url: fake.url };
}

async function serveTribunal(fakeUrl: string): Promise<{ url: string }> {
  const { serve } = await import('../src/main.ts');
  const { loadConfig } = await import('../src/config.ts');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tribunal-bench-cli-'));
  process.on('exit', () => fs.rmSync(dataDir, { recursive: true, force: true }));
  const config = loadConfig({
    TRIBUNAL_DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    TRIBUNAL_RATE_LIMIT: '100000000',
    ANTHROPIC_API_KEY: 'bench-dummy-key',
    ANTHROPIC_BASE_URL: fakeUrl,
    TRIBUNAL_MODEL_CONCURRENCY: '128',
  });
  const { url } = await serve(config);
  return { url };
}

if (process.argv[2] === '--serve') {
  process.once('SIGINT', () => process.exit(0));
  const ready = process.argv[3] === 'fake' ? await serveFake() : await serveTribunal(process.argv[4]!);
  process.send!({ ready });
  process.on('message', (m: { cpu?: number }) => {
    if (m.cpu !== undefined) {
      const u = process.cpuUsage();
      process.send!({ cpu: m.cpu, micros: u.user + u.system });
    }
  });
}

// ---- parent -------------------------------------------------------------------------------------

function startChild(kind: 'fake' | 'tribunal', fakeUrl = ''): Promise<{ child: ChildProcess; url: string }> {
  const child = fork(SELF, ['--serve', kind, fakeUrl], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    child.once('message', (m: { ready: { url: string } }) => resolve({ child, url: m.ready.url }));
    child.once('exit', (code) => reject(new Error(`${kind} exited with ${code}`)));
  });
}

let asks = 0;
function childCpuMicros(child: ChildProcess): Promise<number> {
  return new Promise((resolve) => {
    const id = ++asks;
    const onMessage = (m: { cpu?: number; micros?: number }) => {
      if (m.cpu === id) {
        child.off('message', onMessage);
        resolve(m.micros!);
      }
    };
    child.on('message', onMessage);
    child.send({ cpu: id });
  });
}

interface Run {
  wallMs: number;
  batchMs: number;
  serverCpuMs: number;
  clientCpuMs: number;
  scored: number;
}

async function runCli(server: ChildProcess, env: Record<string, string>, judgeId: string, input: string, concurrency: number, preload: string): Promise<Run> {
  const out = path.join(path.dirname(input), `results-${concurrency}.jsonl`);
  const cpuFile = path.join(path.dirname(input), `cli-cpu-${concurrency}.json`);
  const serverBefore = await childCpuMicros(server);
  const started = performance.now();
  const child = spawn(process.execPath, ['--import', preload, path.join(ROOT, 'bin/tribunal.js'), 'eval', '--judge', judgeId, '--input', input, '--out', out, '--concurrency', String(concurrency), '--force', '--quiet', '--json'], {
    cwd: ROOT,
    env: { ...process.env, ...env, BENCH_CPU_FILE: cpuFile },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let stdout = '';
  child.stdout!.setEncoding('utf8').on('data', (d) => (stdout += d));
  const code = await new Promise<number | null>((r) => child.on('close', (c) => r(c)));
  const wallMs = performance.now() - started;
  const serverAfter = await childCpuMicros(server);
  if (code !== 0) throw new Error(`tribunal eval exited with ${code}: ${stdout}`);
  const summary = JSON.parse(stdout) as { scored: number; elapsed_s: number };
  const cpu = JSON.parse(fs.readFileSync(cpuFile, 'utf8')) as { user: number; system: number };
  return { wallMs, batchMs: summary.elapsed_s * 1000, serverCpuMs: (serverAfter - serverBefore) / 1000, clientCpuMs: (cpu.user + cpu.system) / 1000, scored: summary.scored };
}

/** The reference: the same requests from a bare fetch loop in this process (no CLI). */
async function runBare(server: ChildProcess, url: string, key: string, judgeId: string, rows: string[], concurrency: number): Promise<Run> {
  const serverBefore = await childCpuMicros(server);
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  let next = 0;
  let scored = 0;
  const worker = async () => {
    for (let i = next++; i < rows.length; i = next++) {
      const res = await fetch(`${url}/v1/judges/${judgeId}/execute/`, { method: 'POST', headers: { authorization: `Api-Key ${key}`, 'content-type': 'application/json' }, body: rows[i] });
      const body = (await res.json()) as { execution_log_id?: string };
      if (res.status === 200 && body.execution_log_id) scored++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const wallMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  const serverAfter = await childCpuMicros(server);
  return { wallMs, batchMs: wallMs, serverCpuMs: (serverAfter - serverBefore) / 1000, clientCpuMs: (cpu.user + cpu.system) / 1000, scored };
}

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tribunal-bench-cli-eval-'));
  const preload = path.join(dir, 'cpu-at-exit.mjs');
  fs.writeFileSync(
    preload,
    "import fs from 'node:fs';\nprocess.on('exit', () => { const u = process.cpuUsage(); fs.writeFileSync(process.env.BENCH_CPU_FILE, JSON.stringify(u)); });\n",
  );
  const fake = await startChild('fake');
  const server = await startChild('tribunal', fake.url);
  try {
    const demo = (await (await fetch(`${server.url}/create-demo-user/`, { method: 'POST' })).json()) as { api_key: string };
    const headers = { authorization: `Api-Key ${demo.api_key}`, 'content-type': 'application/json' };
    const made = await fetch(`${server.url}/v1/judges/`, { method: 'POST', headers, body: JSON.stringify({ name: 'bench three', intent: 'Help-desk answers.', evaluator_ids: EVALUATORS }) });
    const judge = (await made.json()) as { id: string };
    if (made.status !== 201) throw new Error(`creating the judge: ${made.status} ${JSON.stringify(judge)}`);

    const rows = Array.from({ length: ROWS }, (_, i) =>
      JSON.stringify({ id: `q${i + 1}`, request: `How do I reset my password? (case ${i + 1})`, response: 'Open Settings, choose Security, then Reset password. A link arrives by email within a minute.', tags: ['bench'] }),
    );
    const input = path.join(dir, 'data.jsonl');
    fs.writeFileSync(input, `${rows.join('\n')}\n`);
    const env = { TRIBUNAL_URL: server.url, TRIBUNAL_API_KEY: demo.api_key };

    // Warm-up: tsx's transform cache and the server's first requests.
    await runCli(server.child, env, judge.id, path.join(dir, 'data.jsonl'), 64, preload).catch(() => undefined);

    console.log(`tribunal eval: ${ROWS} rows, a judge of ${EVALUATORS.length} evaluators, fake judge model at ${LATENCY_MS} ms, ${os.cpus().length} CPUs`);
    const graded = ROWS * EVALUATORS.length;
    const lines: string[] = [];
    for (const concurrency of CONCURRENCIES) {
      const idealMs = (ROWS * LATENCY_MS) / concurrency;
      const cli = await runCli(server.child, env, judge.id, input, concurrency, preload);
      const bare = await runBare(server.child, server.url, demo.api_key, judge.id, rows, concurrency);
      for (const [label, r] of [
        ['tribunal eval (CLI)', cli],
        ['bare fetch loop (reference)', bare],
      ] as const) {
        if (r.scored !== ROWS) throw new Error(`${label}: ${r.scored} of ${ROWS} rows scored`);
        const perEval = (r.serverCpuMs + r.clientCpuMs) / graded;
        const line =
          `concurrency ${String(concurrency).padStart(2)}  ${label.padEnd(28)} wall ${(r.wallMs / 1000).toFixed(2)} s = ${(r.wallMs / idealMs).toFixed(3)} x ideal ${(idealMs / 1000).toFixed(2)} s` +
          (label.startsWith('tribunal') ? ` (batch alone ${(r.batchMs / idealMs).toFixed(3)} x)` : '') +
          `; CPU server ${(r.serverCpuMs / 1000).toFixed(2)} s + client ${(r.clientCpuMs / 1000).toFixed(2)} s = ${perEval.toFixed(2)} ms per graded evaluator`;
        lines.push(line);
        console.log(line);
      }
    }
    console.log('\ngoals: wall within 1.1 x ideal; at most 5 ms CPU (server + CLI) per graded evaluator');
    console.log('reference (issue, this machine): promptfoo model-graded ~1.5 x ideal, ~40 ms/grading; autoevals ~1.08 x, ~7 ms');
  } finally {
    fake.child.kill('SIGINT');
    server.child.kill('SIGINT');
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] !== '--serve') await main();
