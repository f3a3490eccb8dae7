// The code sandbox: a pool of worker threads running QuickJS (WebAssembly) for code evaluators
// (sandbox-worker.mjs). The event loop never runs user code: a run is a message to a worker, and a
// watchdog ends a worker that does not answer in time (the time limit plus a grace), so even a
// loop the interrupt handler cannot reach costs one worker restart, not the server.
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';

export interface SandboxSettings {
  /** CPU time one run may take inside the sandbox. */
  timeoutMs: number;
  /** Heap of one evaluator's QuickJS runtime. */
  memoryBytes: number;
  /** Worker threads (each holds the runtimes of the evaluators hashed to it). */
  workers: number;
}

export type SandboxFailure = { kind: 'compile' | 'throw' | 'timeout' | 'memory' | 'stack' | 'output' | 'crash'; message: string; line?: number };
export type SandboxOutcome = { ok: true; output: string } | { ok: false; error: SandboxFailure };

const STACK_BYTES = 256 * 1024;
const MAX_OUTPUT_CHARS = 20_000;
/** A busy worker that has answered nothing for the time limit plus this long is ended. */
const WATCHDOG_GRACE_MS = 1000;
const WATCHDOG_EVERY_MS = 100;
/** A worker that has not loaded QuickJS this long after it started is ended too. */
const STARTUP_LIMIT_MS = 30_000;

interface Pending {
  resolve: (o: SandboxOutcome) => void;
}

class SandboxWorker {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  /** When the worker last answered (or was given work while idle): runs are answered in order, so silence means stuck. */
  private lastProgress = 0;
  private watchdog: NodeJS.Timeout | null = null;
  /** QuickJS is loaded in the current worker: the watchdog counts from then. */
  private ready = false;
  private startedAt = 0;
  /** The longest time limit among the runs waiting. */
  private budgetMs = 0;

  constructor(private readonly timeoutMs: number) {}

  private start(): Worker {
    const worker = new Worker(new URL('./sandbox-worker.mjs', import.meta.url), {
      // The worker's own JavaScript heap; QuickJS's heaps are WebAssembly memory, capped per runtime.
      resourceLimits: { maxOldGenerationSizeMb: 256, stackSizeMb: 8 },
    });
    worker.unref();
    this.ready = false;
    this.startedAt = performance.now();
    worker.on('message', (answer: { id: number; output?: string; error?: SandboxFailure; ready?: boolean }) => {
      if (answer.ready !== undefined) {
        if (this.worker === worker) this.ready = true;
        this.lastProgress = performance.now();
        return;
      }
      const p = this.pending.get(answer.id);
      if (!p) return;
      this.pending.delete(answer.id);
      this.lastProgress = performance.now();
      if (!this.pending.size) this.idle(worker);
      p.resolve(answer.error ? { ok: false, error: answer.error } : { ok: true, output: answer.output ?? '' });
    });
    const fail = (why: string) => {
      // A worker the watchdog already replaced has had its runs failed; the pending runs are the new one's.
      if (this.worker !== worker) return;
      this.worker = null;
      this.idle(worker);
      this.failAll({ kind: 'crash', message: why });
    };
    worker.on('error', (e) => fail(`the sandbox worker failed (${e.message})`));
    worker.on('exit', () => fail('the sandbox worker stopped'));
    return worker;
  }

  private failAll(error: SandboxFailure) {
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const p of pending) p.resolve({ ok: false, error });
  }

  private idle(worker: Worker) {
    worker.unref();
    if (this.watchdog) clearInterval(this.watchdog);
    this.watchdog = null;
  }

  /** The watchdog: work that never comes back (a native loop the interrupt cannot reach) ends the worker. */
  private watch(worker: Worker) {
    this.watchdog ??= setInterval(() => {
      if (this.worker !== worker || !this.pending.size) return;
      const now = performance.now();
      if (!this.ready ? now - this.startedAt < STARTUP_LIMIT_MS : now - this.lastProgress < this.budgetMs + WATCHDOG_GRACE_MS) return;
      this.worker = null;
      this.idle(worker);
      this.failAll({ kind: 'timeout', message: 'it ran past the time limit (the sandbox was restarted)' });
      void worker.terminate();
    }, WATCHDOG_EVERY_MS);
    this.watchdog.unref();
  }

  send(msg: Record<string, unknown>, timeoutMs = this.timeoutMs): Promise<SandboxOutcome> {
    this.worker ??= this.start();
    const worker = this.worker;
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.budgetMs = Math.max(this.pending.size ? this.budgetMs : 0, timeoutMs);
      if (!this.pending.size) {
        this.lastProgress = performance.now();
        // Kept alive only while a run waits on it.
        worker.ref();
        this.watch(worker);
      }
      this.pending.set(id, { resolve });
      worker.postMessage({ id, ...msg });
    });
  }

  async close() {
    const w = this.worker;
    this.worker = null;
    if (w) {
      this.idle(w);
      this.failAll({ kind: 'crash', message: 'the sandbox was closed' });
      await w.terminate();
    }
  }
}

function hash(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}

export class CodeSandbox {
  private readonly workers: SandboxWorker[];

  constructor(readonly settings: SandboxSettings) {
    this.workers = Array.from({ length: Math.max(1, settings.workers) }, () => new SandboxWorker(settings.timeoutMs));
  }

  private limits() {
    return { timeoutMs: this.settings.timeoutMs, memoryBytes: this.settings.memoryBytes, stackBytes: STACK_BYTES, maxOutputChars: MAX_OUTPUT_CHARS };
  }

  /**
   * Runs `code` on the input. `key` names the runtime that keeps the compiled code between runs: it
   * must change with the code (an evaluator version) and with the organization running it, so no
   * state a run leaves in its globals reaches another organization's runs.
   */
  run(key: string, code: string, input: unknown): Promise<SandboxOutcome> {
    const worker = this.workers[hash(key) % this.workers.length];
    return worker.send({ op: 'run', key, code, input: JSON.stringify(input), limits: this.limits() });
  }

  /** Compiles `code` in a fresh runtime and runs it once on `sample` (nothing is kept). */
  tryOnce(code: string, sample: unknown): Promise<SandboxOutcome> {
    const worker = this.workers[hash(code) % this.workers.length];
    // A generous bound (5x the time limit): it is there to catch code that never ends, not to time a busy machine.
    const limits = { ...this.limits(), timeoutMs: this.settings.timeoutMs * 5 };
    return worker.send({ op: 'check', key: '', code, input: JSON.stringify(sample), limits }, limits.timeoutMs);
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.close()));
  }
}

// One pool per distinct settings, made on first use: the workers are unref'd, so an idle pool
// never keeps the process alive.
const pools = new Map<string, CodeSandbox>();
export function sandboxFor(settings: SandboxSettings): CodeSandbox {
  const key = `${settings.timeoutMs}/${settings.memoryBytes}/${settings.workers}`;
  let pool = pools.get(key);
  if (!pool) pools.set(key, (pool = new CodeSandbox(settings)));
  return pool;
}
