// Tribunal server processes for the several-instances tests: `node --import tsx src/main.ts`, the
// production entry point, each on its own free port, configured through the environment only.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { cleanEnv, tempDir } from './server.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

import { freePort } from './wait.ts';

export { freePort };

export interface Instance {
  url: string;
  child: ChildProcess;
  /** Everything the process printed so far. */
  output(): string;
  /** Resolves once the output contains `text`. */
  waitFor(text: string, timeoutMs?: number): Promise<void>;
  request(method: string, p: string, opts?: { key?: string; body?: unknown }): Promise<{ status: number; headers: Headers; body: any }>;
  stop(): Promise<void>;
}

export async function startInstance(env: Record<string, string>): Promise<Instance> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await startOnce(env);
    } catch (err) {
      // Another process may have taken the free port between our check and the server's listen.
      if (attempt < 2 && /EADDRINUSE|in use/.test((err as Error).message)) continue;
      throw err;
    }
  }
}

async function startOnce(env: Record<string, string>): Promise<Instance> {
  const port = await freePort();
  const dataDir = tempDir('tribunal-instance-');
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: cleanEnv({
      HOST: '127.0.0.1',
      PORT: String(port),
      TRIBUNAL_DATA_DIR: dataDir,
      ANTHROPIC_API_KEY: '',
      TRIBUNAL_DEMO_RATE_LIMIT: '100000',
      TRIBUNAL_PG_POOL_MAX: '4',
      ...env,
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const waiters: Array<() => void> = [];
  const onData = (chunk: Buffer) => {
    out += chunk.toString();
    for (const w of waiters.splice(0)) w();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const waitFor = (text: string, timeoutMs = 30_000) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no "${text}" within ${timeoutMs} ms; output:\n${out}`)), timeoutMs);
      const check = () => {
        if (out.includes(text)) {
          clearTimeout(timer);
          resolve();
        } else if (child.exitCode !== null || child.signalCode !== null) {
          clearTimeout(timer);
          reject(new Error(`the server exited (${child.exitCode ?? child.signalCode}) before "${text}"; output:\n${out}`));
        } else waiters.push(check);
      };
      child.once('exit', () => {
        for (const w of waiters.splice(0)) w();
      });
      check();
    });
  try {
    await waitFor('Tribunal listening on', 60_000);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    child,
    output: () => out,
    waitFor,
    async request(method, p, opts = {}) {
      const headers: Record<string, string> = {};
      if (opts.key) headers.authorization = `Api-Key ${opts.key}`;
      if (opts.body !== undefined) headers['content-type'] = 'application/json';
      const res = await fetch(url + p, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
      const text = await res.text();
      let body: unknown = text;
      try {
        body = text ? JSON.parse(text) : null;
      } catch {
        /* not JSON */
      }
      return { status: res.status, headers: res.headers, body };
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      }
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
