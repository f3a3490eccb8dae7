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
// Measured in the same run as references:
//   - a bare client, the same POST /execute/ requests from a plain fetch loop with the same
//     concurrency, which shows what the CLI itself adds;
//   - the floor judge server (bench/door-floors.ts: key lookup, one model call per evaluator at once,
//     one group-committed fdatasync'd line, nothing else), driven by the CLI and by the bare loop as
//     Tribunal is: what the least a durable judge server can do reaches on this machine, so that the
//     wall's goal can be read against what it leaves to the server (issue 33).
//
//   node --import tsx bench/cli-eval.bench.ts        (BENCH_ROWS=1000 BENCH_LATENCY=300 BENCH_CONCURRENCY=8,32)
//
// The fake judge model and the server each run in their own child process; the server's CPU comes
// from process.cpuUsage() over IPC, the CLI's from a preload that writes process.cpuUsage() at exit.
// The server runs with TRIBUNAL_MODEL_CONCURRENCY=128 (the default 16 would cap 32 rows x 3
// evaluators in flight) and a rate limit high enough not to interfere. The fake model keeps none of
// the 3,000 requests a run sends it (issue 33): holding their parsed prompts cost it garbage-collection
// pauses of 40-80 ms, each holding back every answer due meanwhile, for the CLI and the reference alike.
//
// BENCH_TIMELINE=1: also where each CLI run's time goes, stage by stage of a row's round trip (CLI,
// server, model calls, fake), from events recorded in every process (cli-timeline-preload.mjs, read
// by cli-timeline.ts); the recording costs CPU, so that run's CPU figures are not the bench's.
// BENCH_TIMELINE=<directory> keeps the recorded events there.
// BENCH_HEAP=<dir>: the server's allocation profile and GC pauses over the CLI run (harness.ts; with several
// concurrencies, the last run's). BENCH_HEAP_GC_ONLY=1 counts the GC pauses alone.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { timeline } from './cli-timeline.ts';
import { FLOOR_KEY, serveFloorJudge } from './door-floors.ts';
import { childCpuMicros, demoWithJudges, envNumber, heapOn, serveChild, serveFake, serveTribunal, startChild, stopChildren, tempDirRemovedAtExit, type Child } from './harness.ts';

const SELF = fileURLToPath(import.meta.url);
const ROOT = path.resolve(path.dirname(SELF), '..');
const ROWS = envNumber('BENCH_ROWS', 1000);
const LATENCY_MS = envNumber('BENCH_LATENCY', 300);
const CONCURRENCIES = (process.env.BENCH_CONCURRENCY ?? '8,32').split(',').map(Number);
const EVALUATORS = ['Answer Relevance', 'Clarity', 'Helpfulness'];

if (process.argv[2] === '--serve') {
  const [kind, fakeUrl = '', judgeId = ''] = process.argv.slice(3);
  await serveChild(async () => {
    if (kind === 'fake') return serveFake(LATENCY_MS, { record: false });
    if (kind === 'floor') return serveFloorJudge(fakeUrl, path.join(tempDirRemovedAtExit('tribunal-bench-floor-'), 'log.jsonl'), judgeId, EVALUATORS);
    return serveTribunal(fakeUrl, { TRIBUNAL_MODEL_CONCURRENCY: '128' });
  });
}

// ---- parent -------------------------------------------------------------------------------------

interface Run {
  wallMs: number;
  batchMs: number;
  serverCpuMs: number;
  clientCpuMs: number;
  scored: number;
  /** The CLI's process id (its timeline file), for the CLI runs. */
  pid?: number;
}

async function runCli(server: ChildProcess, env: Record<string, string>, judgeId: string, input: string, concurrency: number, preload: string, tag = ''): Promise<Run> {
  const out = path.join(path.dirname(input), `results-${tag}${concurrency}.jsonl`);
  const cpuFile = path.join(path.dirname(input), `cli-cpu-${tag}${concurrency}.json`);
  const serverBefore = await childCpuMicros(server);
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [
      // BENCH_CLI_PROFILE=<dir>: a CPU profile of each CLI run, to see where the client's time goes.
      ...(process.env.BENCH_CLI_PROFILE ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_CLI_PROFILE] : []),
      '--import',
      preload,
      path.join(ROOT, 'bin/tribunal.js'),
      'eval',
      '--judge',
      judgeId,
      '--input',
      input,
      '--out',
      out,
      '--concurrency',
      String(concurrency),
      '--force',
      '--quiet',
      '--json',
    ],
    {
      cwd: ROOT,
      env: { ...process.env, ...env, BENCH_CPU_FILE: cpuFile },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let stdout = '';
  child.stdout!.setEncoding('utf8').on('data', (d) => (stdout += d));
  const code = await new Promise<number | null>((r) => child.on('close', (c) => r(c)));
  const wallMs = performance.now() - started;
  const serverAfter = await childCpuMicros(server);
  if (code !== 0) throw new Error(`tribunal eval exited with ${code}: ${stdout}`);
  const summary = JSON.parse(stdout) as { scored: number; elapsed_s: number };
  const cpu = JSON.parse(fs.readFileSync(cpuFile, 'utf8')) as { user: number; system: number };
  return {
    wallMs,
    batchMs: summary.elapsed_s * 1000,
    serverCpuMs: (serverAfter - serverBefore) / 1000,
    clientCpuMs: (cpu.user + cpu.system) / 1000,
    scored: summary.scored,
    pid: child.pid,
  };
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
      const res = await fetch(`${url}/v1/judges/${judgeId}/execute/`, {
        method: 'POST',
        headers: { authorization: `Api-Key ${key}`, 'content-type': 'application/json' },
        body: rows[i],
      });
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
  // Every process started from here on records its events (the children inherit the environment).
  // BENCH_TIMELINE=<a directory> instead of 1 keeps the events there.
  const keep = process.env.BENCH_TIMELINE && process.env.BENCH_TIMELINE !== '1' ? path.resolve(process.env.BENCH_TIMELINE) : undefined;
  const timelineDir = process.env.BENCH_TIMELINE ? (keep ?? path.join(dir, 'timeline')) : undefined;
  if (timelineDir) {
    fs.mkdirSync(timelineDir, { recursive: true });
    process.env.BENCH_TIMELINE_DIR = timelineDir;
    process.env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ''} --import ${path.join(ROOT, 'bench', 'cli-timeline-preload.mjs')}`.trim();
  }
  const timelines: Array<{ pid: number; concurrency: number }> = [];
  let fake: Child | undefined;
  let server: Child | undefined;
  let floor: Child | undefined;
  try {
    fake = await startChild(SELF, 'fake');
    server = await startChild(SELF, 'tribunal', [fake.ready.url]);
    const { key, judgeIds } = await demoWithJudges(server.ready.url, { 'bench three': EVALUATORS });
    const judge = { id: judgeIds[0]! };
    const serverUrl = server.ready.url;
    // The floor judge server answers the same judge id, on the same fake model.
    floor = await startChild(SELF, 'floor', [fake.ready.url, judge.id]);
    const floorEnv = { TRIBUNAL_URL: floor.ready.url, TRIBUNAL_API_KEY: FLOOR_KEY };

    const items = Array.from({ length: ROWS }, (_, i) => ({
      request: `How do I reset my password? (case ${i + 1})`,
      response: 'Open Settings, choose Security, then Reset password. A link arrives by email within a minute.',
      tags: ['bench'],
    }));
    // The CLI's file carries row ids (it reports per row); the execute API refuses unknown fields, so
    // the bare reference sends the same rows without them.
    const rows = items.map((item, i) => JSON.stringify({ id: `q${i + 1}`, ...item }));
    const bareBodies = items.map((item) => JSON.stringify(item));
    const input = path.join(dir, 'data.jsonl');
    fs.writeFileSync(input, `${rows.join('\n')}\n`);
    const env = { TRIBUNAL_URL: serverUrl, TRIBUNAL_API_KEY: key };

    // Warm-up: tsx's transform cache and the server's first requests.
    await runCli(server.child, env, judge.id, path.join(dir, 'data.jsonl'), 64, preload).catch(() => undefined);
    await runCli(floor.child, floorEnv, judge.id, path.join(dir, 'data.jsonl'), 64, preload, 'floor-').catch(() => undefined);

    console.log(`tribunal eval: ${ROWS} rows, a judge of ${EVALUATORS.length} evaluators, fake judge model at ${LATENCY_MS} ms, ${os.cpus().length} CPUs`);
    const graded = ROWS * EVALUATORS.length;
    for (const concurrency of CONCURRENCIES) {
      const idealMs = (ROWS * LATENCY_MS) / concurrency;
      // BENCH_HEAP=<dir>: the server's allocations (and GC pauses) over the CLI run alone (harness.ts).
      if (process.env.BENCH_HEAP) await heapOn(server.child, true);
      const cli = await runCli(server.child, env, judge.id, input, concurrency, preload);
      if (process.env.BENCH_HEAP) await heapOn(server.child, false);
      if (cli.pid) timelines.push({ pid: cli.pid, concurrency });
      const bare = await runBare(server.child, serverUrl, key, judge.id, bareBodies, concurrency);
      const floorCli = await runCli(floor.child, floorEnv, judge.id, input, concurrency, preload, 'floor-');
      const floorBare = await runBare(floor.child, floor.ready.url, FLOOR_KEY, judge.id, bareBodies, concurrency);
      for (const [label, r] of [
        ['tribunal eval (CLI)', cli],
        ['bare fetch loop (reference)', bare],
        ['CLI -> floor judge server', floorCli],
        ['bare loop -> floor server', floorBare],
      ] as const) {
        if (r.scored !== ROWS) throw new Error(`${label}: ${r.scored} of ${ROWS} rows scored`);
        const perEval = (r.serverCpuMs + r.clientCpuMs) / graded;
        const line =
          `concurrency ${String(concurrency).padStart(2)}  ${label.padEnd(28)} wall ${(r.wallMs / 1000).toFixed(2)} s = ${(r.wallMs / idealMs).toFixed(3)} x ideal ${(idealMs / 1000).toFixed(2)} s` +
          (label.includes('CLI') ? ` (batch alone ${(r.batchMs / idealMs).toFixed(3)} x)` : '') +
          `; CPU server ${(r.serverCpuMs / 1000).toFixed(2)} s + client ${(r.clientCpuMs / 1000).toFixed(2)} s = ${perEval.toFixed(2)} ms per graded evaluator`;
        console.log(line);
      }
      console.log(`concurrency ${String(concurrency).padStart(2)}  the CLI's wall, Tribunal / the floor server: ${(cli.wallMs / floorCli.wallMs).toFixed(3)}`);
    }
    console.log('\ngoals: wall within 1.1 x ideal; at most 5 ms CPU (server + CLI) per graded evaluator');
    console.log('reference (issue, this machine): promptfoo model-graded ~1.5 x ideal, ~40 ms/grading; autoevals ~1.08 x, ~7 ms');
    if (timelineDir) {
      // The children write their events as they exit.
      const exited = [fake, server, floor].map((c) => new Promise((resolve) => c!.child.once('exit', resolve)));
      stopChildren([fake, server, floor]);
      await Promise.all(exited);
      for (const t of timelines) console.log(`\n${timeline(timelineDir, t.pid, LATENCY_MS, t.concurrency).join('\n')}`);
    }
  } finally {
    stopChildren([fake, server, floor]);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] !== '--serve') await main();
