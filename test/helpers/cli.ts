// Runs the real `tribunal` command (node bin/tribunal.js) as a child process, against a real
// Tribunal server in the test process that talks to the fake judge model. Spawned asynchronously:
// the server lives in this process's event loop, so a blocking spawnSync would starve it.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServerWithFakeModel } from './execute.ts';
import type { FakeAnthropic } from './fake-anthropic.ts';
import { cleanEnv, type TestServer } from './server.ts';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = path.join(ROOT, 'bin/tribunal.js');

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  env?: Record<string, string | undefined>;
  /** Written to stdin, then stdin is closed. */
  input?: string;
  cwd?: string;
  timeoutMs?: number;
}

/** The environment of a CLI run: no inherited Tribunal settings, never interactive unless asked. */
const cliEnv = (extra: Record<string, string | undefined> = {}) => cleanEnv(extra);

export function spawnCli(args: string[], opts: CliOptions = {}): { child: ChildProcess; done: Promise<CliResult> } {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: opts.cwd ?? ROOT, env: cliEnv(opts.env), stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (d) => (stdout += d));
  child.stderr!.setEncoding('utf8').on('data', (d) => (stderr += d));
  if (opts.input !== undefined) child.stdin!.end(opts.input);
  else child.stdin!.end();
  const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
  const done = new Promise<CliResult>((resolve) => {
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
  return { child, done };
}

export const runCli = (args: string[], opts: CliOptions = {}) => spawnCli(args, opts).done;

export interface CliRig {
  fake: FakeAnthropic;
  server: TestServer;
  key: string;
  projectId: string;
  /** Environment pointing the CLI at the rig's server with its key. */
  env: Record<string, string>;
  cli(args: string[], opts?: CliOptions): Promise<CliResult>;
  close(): Promise<void>;
}

export async function startCliRig(serverEnv: Record<string, string | undefined> = {}): Promise<CliRig> {
  const { fake, server } = await startServerWithFakeModel(serverEnv);
  const demo = await server.demoUser();
  const env = { TRIBUNAL_URL: server.url, TRIBUNAL_API_KEY: demo.api_key };
  return {
    fake,
    server,
    key: demo.api_key,
    projectId: demo.project_id,
    env,
    cli: (args, opts = {}) => runCli(args, { ...opts, env: { ...env, ...opts.env } }),
    async close() {
      await server.close();
      await fake.close();
    },
  };
}
