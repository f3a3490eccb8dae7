// The plumbing every HTTP bench shares, so that the drivers hold only what they measure: the
// servers (a Tribunal server as `npm start` runs it, the fake judge model) each in a child process
// of its own, the IPC that reads a child's CPU time or sets the fake's latency, a keep-alive HTTP
// request, and the statistics. A bench file forks itself with `--serve <kind>`; its child half
// calls serveChild() and its parent half startChild().
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';

export interface Ready {
  url: string;
  key?: string;
  [extra: string]: unknown;
}

export interface Child<R extends Ready = Ready> {
  child: ChildProcess;
  ready: R;
}

/** A number from the environment, or the default. */
export const envNumber = (name: string, fallback: number) => Number(process.env[name] ?? fallback);

/**
 * A bench's knobs at once: each key K is read from BENCH_K in the environment, or takes its default
 * here (`benchEnv({ SECONDS: 4, ROUNDS: 7 })` reads BENCH_SECONDS and BENCH_ROUNDS).
 */
export function benchEnv<const K extends string>(defaults: Record<K, number>): Record<K, number> {
  const knobs = {} as Record<K, number>;
  for (const key of Object.keys(defaults) as K[]) knobs[key] = envNumber(`BENCH_${key}`, defaults[key]);
  return knobs;
}

// ---- child side ---------------------------------------------------------------------------------

/**
 * Runs in a bench's `--serve <kind>` child: starts the server `start` builds, tells the parent it is
 * ready, and answers the parent's CPU-time questions. SIGINT ends the child (and lets a profiled one
 * write its profile).
 */
export async function serveChild(start: () => Promise<Ready>): Promise<void> {
  process.once('SIGINT', () => process.exit(0));
  const ready = await start();
  process.send!({ ready });
  const heap = process.env.BENCH_HEAP_FILE ? await heapSampler(process.env.BENCH_HEAP_FILE) : undefined;
  process.on('message', (m: { cpu?: number; heap?: number; heapOn?: boolean }) => {
    if (m.cpu !== undefined) {
      const u = process.cpuUsage();
      process.send!({ cpu: m.cpu, micros: u.user + u.system });
    }
    if (m.heap !== undefined) void (heap?.(m.heapOn ?? false) ?? Promise.resolve()).then(() => process.send!({ heapDone: m.heap }));
  });
}

/**
 * BENCH_HEAP=<dir> (instrumentation): the profiled children sample every allocation, collected or not
 * (V8's sampling heap profiler with the collected objects kept), between the parent's heapOn(true)
 * and heapOn(false); the profile is written to BENCH_HEAP_FILE on the second, its GC pauses by kind
 * beside it (<file>.gc.json). Knobs: BENCH_HEAP_ARGV adds Node flags to those children
 * (`--no-turbo-inlining`: each allocation charged to the function that made it); BENCH_HEAP_INTERVAL
 * is the sampling interval in bytes (16384); BENCH_HEAP_SURVIVORS=1 samples only what outlives a
 * scavenge; BENCH_HEAP_GC_ONLY=1 records the GC pauses without the profiler (its cost left out).
 */
async function heapSampler(file: string): Promise<(on: boolean) => Promise<void>> {
  const inspector = await import('node:inspector');
  const session = new inspector.Session();
  session.connect();
  const post = (method: string, params?: object) => new Promise<any>((resolve, reject) => session.post(method, params, (e, r) => (e ? reject(e) : resolve(r))));
  await post('HeapProfiler.enable');
  // GC pauses by kind while sampling (perf_hooks 'gc' entries), written beside the profile.
  const { PerformanceObserver, constants } = await import('node:perf_hooks');
  const gc: Record<string, { count: number; ms: number }> = {};
  const kinds: Record<number, string> = {
    [constants.NODE_PERFORMANCE_GC_MINOR]: 'scavenge',
    [constants.NODE_PERFORMANCE_GC_MAJOR]: 'mark-compact',
    [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
    [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak',
  };
  let sampling = false;
  new PerformanceObserver((list) => {
    if (!sampling) return;
    for (const e of list.getEntries()) {
      const kind = kinds[(e as unknown as { detail: { kind: number } }).detail.kind] ?? 'other';
      gc[kind] ??= { count: 0, ms: 0 };
      gc[kind].count++;
      gc[kind].ms += e.duration;
    }
  }).observe({ entryTypes: ['gc'] });
  return async (on) => {
    sampling = on;
    if (process.env.BENCH_HEAP_GC_ONLY) {
      if (!on) fs.writeFileSync(`${file}.gc.json`, JSON.stringify({ gc, heapUsed: process.memoryUsage().heapUsed }));
      return;
    }
    if (on) {
      await post('HeapProfiler.startSampling', {
        samplingInterval: Number(process.env.BENCH_HEAP_INTERVAL ?? 16384),
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: !process.env.BENCH_HEAP_SURVIVORS,
      });
      return;
    }
    const { profile } = await post('HeapProfiler.stopSampling');
    fs.writeFileSync(file, JSON.stringify(profile));
    fs.writeFileSync(`${file}.gc.json`, JSON.stringify({ gc, heapUsed: process.memoryUsage().heapUsed }));
  };
}

/** Starts (true) or stops and writes (false) a child's BENCH_HEAP sampling; a no-op without BENCH_HEAP. */
export function heapOn(child: ChildProcess, on: boolean): Promise<void> {
  const id = ++asks;
  return new Promise((resolve) => {
    const onMessage = (m: Record<string, unknown>) => {
      if (m.heapDone !== id) return;
      child.off('message', onMessage);
      resolve();
    };
    child.on('message', onMessage);
    child.send({ heap: id, heapOn: on });
  });
}

/**
 * The fake Anthropic server answering every evaluation at once with a valid score. The parent may
 * set its latency ({latency}) and ask it to forget its recorded requests ({reset}), which the bench
 * never reads, so that its heap (and its CPU, which shares the machine) does not grow over a run;
 * `record: false` keeps none in the first place (a bench whose fake answers thousands of calls in
 * one measured run).
 */
export async function serveFake(latencyMs = 0, opts: { record?: boolean } = {}): Promise<Ready> {
  const { startFakeAnthropic, toolAnswer } = await import('../test/helpers/fake-anthropic.ts');
  const fake = await startFakeAnthropic({
    latencyMs,
    record: opts.record,
    responder: () => toolAnswer({ justification: 'The response answers the question directly.', score: 0.8 }, { usage: { input_tokens: 900, output_tokens: 60 } }),
  });
  process.on('message', (m: { latency?: number; reset?: number; last?: number }) => {
    if (m.last !== undefined) {
      const last = fake.requests.at(-1);
      process.send!({ lastRequest: m.last, request: last && { path: last.path, headers: last.headers, body: JSON.stringify(last.body) } });
    }
    if (m.latency !== undefined) {
      fake.setLatency(m.latency);
      process.send!({ latencySet: m.latency });
    }
    if (m.reset !== undefined) {
      fake.resetStats();
      process.send!({ wasReset: m.reset });
    }
  });
  return { url: fake.url };
}

/**
 * A temporary directory under the OS's, removed when the process exits. A write still in flight on
 * the thread pool at exit can add a file while the directory is being removed (ENOTEMPTY, seen once
 * in `bench:mcp`): the removal is tried again, and a directory that still will not go is named on
 * stderr rather than thrown, which would end the bench with a stack trace after its figures.
 */
export function tempDirRemovedAtExit(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  process.on('exit', () => {
    try {
      fs.rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 20 });
    } catch (err) {
      process.stderr.write(`could not remove ${dir}: ${(err as Error).message}\n`);
    }
  });
  return dir;
}

/**
 * The real server as `npm start` runs it (JSON store in a temporary data directory, removed at
 * exit), on a random port, judging with the fake model at `fakeUrl`, with a rate limit high enough
 * not to interfere. `env` adds or overrides settings.
 */
export async function serveTribunal(fakeUrl: string, env: Record<string, string> = {}): Promise<{ url: string }> {
  const { serve } = await import('../src/main.ts');
  const { loadConfig } = await import('../src/config.ts');
  const dataDir = tempDirRemovedAtExit('tribunal-bench-');
  const config = loadConfig({
    TRIBUNAL_DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    TRIBUNAL_RATE_LIMIT: '100000000',
    ANTHROPIC_API_KEY: 'bench-dummy-key',
    ANTHROPIC_BASE_URL: fakeUrl,
    ...env,
  });
  return { url: (await serve(config)).url };
}

/** A demo key on `base` and one judge per entry of `judges` (name -> evaluator names); answers the key and the judge ids. */
export async function demoWithJudges(base: string, judges: Record<string, string[]>): Promise<{ key: string; judgeIds: string[] }> {
  const demo = (await (await fetch(`${base}/create-demo-user/`, { method: 'POST' })).json()) as { api_key: string };
  const headers = { authorization: `Api-Key ${demo.api_key}`, 'content-type': 'application/json' };
  const judgeIds: string[] = [];
  for (const [name, evaluator_ids] of Object.entries(judges)) {
    const res = await fetch(`${base}/v1/judges/`, { method: 'POST', headers, body: JSON.stringify({ name, intent: 'Support answers of a help-desk assistant.', evaluator_ids }) });
    const body = (await res.json()) as { id: string };
    if (res.status !== 201) throw new Error(`creating a judge: ${res.status} ${JSON.stringify(body)}`);
    judgeIds.push(body.id);
  }
  return { key: demo.api_key, judgeIds };
}

/**
 * A demo organization on `base` set up to be judged through the proxy: `app-model` registered on the
 * fake OpenAI `upstreamUrl`, one custom evaluator and a judge of it. Answers the key, its JSON headers,
 * the judge id and a POST helper that throws on a non-2xx answer.
 */
export async function proxyRig(base: string, upstreamUrl: string) {
  const demo = (await (await fetch(`${base}/create-demo-user/`, { method: 'POST' })).json()) as { api_key: string };
  const headers = { authorization: `Bearer ${demo.api_key}`, 'content-type': 'application/json' };
  const post = async (p: string, body: unknown) => {
    const res = await fetch(base + p, { method: 'POST', headers, body: JSON.stringify(body) });
    const json = (await res.json()) as any;
    if (res.status >= 300) throw new Error(`${p}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  await post('/v1/models/', { name: 'app-model', provider: 'openai', base_url: upstreamUrl, model: 'gpt-bench', api_key: 'sk-bench-dummy' });
  const ev = await post('/v1/evaluators/', { name: 'Bench relevance', intent: 'Is the answer relevant?', rubric: 'High (1): answers the question. Low (0): does not.' });
  const judge = await post('/v1/judges/', { name: 'Bench judge', intent: 'Bench.', evaluator_ids: [ev.id] });
  return { key: demo.api_key, headers, post, judgeId: judge.id as string };
}

/** Listens on a random loopback port; answers the base URL. */
export async function listenOnLoopback(app: { listen(port: number, host: string): http.Server }): Promise<string> {
  const listener = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => listener.once('listening', () => resolve()));
  return `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
}

// ---- parent side --------------------------------------------------------------------------------

/**
 * Forks `benchFile --serve kind ...args` and waits for its ready message. BENCH_PROFILE=<dir> writes
 * a CPU profile of the children `profile` accepts (node --cpu-prof).
 */
export function startChild<R extends Ready = Ready>(
  benchFile: string,
  kind: string,
  args: string[] = [],
  opts: { stdout?: 'inherit' | 'ignore'; profile?: boolean } = {},
): Promise<Child<R>> {
  const profile = process.env.BENCH_PROFILE && opts.profile !== false ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [];
  const heap = process.env.BENCH_HEAP && opts.profile !== false ? { BENCH_HEAP_FILE: path.join(process.env.BENCH_HEAP, `${kind}-${Date.now()}.heapprofile`) } : {};
  // The child writes its profile there when asked; a missing directory would fail that write and leave the parent waiting.
  if (heap.BENCH_HEAP_FILE) fs.mkdirSync(process.env.BENCH_HEAP!, { recursive: true });
  const child = fork(benchFile, ['--serve', kind, ...args], {
    execArgv: ['--import', 'tsx', ...profile, ...(heap.BENCH_HEAP_FILE && process.env.BENCH_HEAP_ARGV ? process.env.BENCH_HEAP_ARGV.split(' ') : [])],
    env: { ...process.env, ...heap },
    stdio: ['ignore', opts.stdout ?? 'ignore', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('message', (m: { ready: R }) => resolve({ child, ready: m.ready }));
    child.once('exit', (code) => reject(new Error(`${kind} server exited with ${code}`)));
  });
}

let asks = 0;
/** Sends `{[question]: id}` to a child and waits for the answer that echoes the id under `echoKey`. */
export function ask<T>(child: ChildProcess, question: string, echoKey: string, id = ++asks): Promise<T> {
  return new Promise((resolve) => {
    const onMessage = (m: Record<string, unknown>) => {
      if (m[echoKey] === id) {
        child.off('message', onMessage);
        resolve(m as T);
      }
    };
    child.on('message', onMessage);
    child.send({ [question]: id });
  });
}

/** CPU time (user + system, microseconds) the child has used so far. */
export const childCpuMicros = async (child: ChildProcess) => (await ask<{ micros: number }>(child, 'cpu', 'cpu')).micros;
/** Sets the fake judge model's answer latency. */
export const setFakeLatency = async (fake: ChildProcess, ms: number) => void (await ask(fake, 'latency', 'latencySet', ms));
/** The last request the fake judge model received (it must record): its path, headers and body as sent again. */
export const lastFakeRequest = async (fake: ChildProcess) =>
  (await ask<{ request?: { path: string; headers: Record<string, string | string[] | undefined>; body: string } }>(fake, 'last', 'lastRequest')).request;
/** Asks the fake judge model to forget its recorded requests. */
export const resetFake = async (fake: ChildProcess) => void (await ask(fake, 'reset', 'wasReset'));

/** Stops every child (SIGINT, so a profiled one writes its profile). */
export function stopChildren(children: Array<Child | undefined>): void {
  for (const c of children) c?.child.kill('SIGINT');
}

/** One request over a keep-alive agent: GET when `body` is null, else POST. */
export function request(agent: http.Agent, url: URL, headers: Record<string, string>, body: string | null): Promise<{ status: number; text: string }> {
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

/** Runs `worker` on `concurrency` loops until `ms` have passed; answers the wall seconds. */
export async function forDuration(ms: number, concurrency: number, once: () => Promise<void>): Promise<number> {
  const started = performance.now();
  const deadline = started + ms;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) await once();
    }),
  );
  return (performance.now() - started) / 1000;
}

/** The parent half of a bench file: runs `main` and exits 0, or prints the error and exits 1. */
export function runBench(main: () => Promise<void>): void {
  if (process.argv[2] === '--serve') return;
  main().then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}

// ---- statistics ---------------------------------------------------------------------------------

export const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))]!;
export const median = (xs: number[]) => quantile(xs, 0.5);
