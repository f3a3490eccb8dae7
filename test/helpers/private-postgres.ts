// A private PostgreSQL cluster for tests that stop and start the database: initdb in a temp
// directory, on a free port, owned by the `postgres` OS user when we run as root. The machine's
// shared PostgreSQL on 5432 is never touched. Answers null when initdb/pg_ctl are not available,
// so the caller can fall back to cutting a proxy instead.
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './instances.ts';

export interface PrivateCluster {
  port: number;
  url: string;
  /** 'fast': clean shutdown, clients disconnected; 'immediate': like a crash (recovery on start). */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  start(): Promise<void>;
  destroy(): void;
}

function findBinary(name: string): string | null {
  const candidates = [
    ...(process.env.PATH ?? '').split(':').map((d) => path.join(d, name)),
    ...(() => {
      try {
        return fs.readdirSync('/usr/lib/postgresql').map((v) => path.join('/usr/lib/postgresql', v, 'bin', name));
      } catch {
        return [];
      }
    })(),
  ];
  return candidates.find((c) => fs.existsSync(c)) ?? null;
}

export async function startPrivateCluster(): Promise<PrivateCluster | null> {
  const initdb = findBinary('initdb');
  const pgCtl = findBinary('pg_ctl');
  if (!initdb || !pgCtl) return null;
  const asRoot = process.getuid?.() === 0;
  if (asRoot && spawnSync('id', ['postgres']).status !== 0) return null;
  // As root, PostgreSQL refuses to run: run its tools as the postgres user.
  const run = (bin: string, args: string[]) =>
    asRoot ? execFileSync('runuser', ['-u', 'postgres', '--', bin, ...args], { stdio: 'pipe' }) : execFileSync(bin, args, { stdio: 'pipe' });

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tribunal-pg-'));
  const data = path.join(dir, 'data');
  if (asRoot) execFileSync('chown', ['postgres', dir]);
  const port = await freePort();
  try {
    run(initdb, ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
  } catch {
    fs.rmSync(dir, { recursive: true, force: true });
    return null;
  }
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=40 -c shared_buffers=16MB`;
  // pg_ctl runs asynchronously: a test server in this process keeps answering meanwhile.
  const runAsync = async (bin: string, args: string[]) => {
    await promisify(execFile)(asRoot ? 'runuser' : bin, asRoot ? ['-u', 'postgres', '--', bin, ...args] : args);
  };
  const start = () => runAsync(pgCtl, ['-D', data, '-l', path.join(dir, 'log'), '-w', '-t', '60', '-o', options, 'start']);
  const stop = (mode: 'fast' | 'immediate' = 'fast') => runAsync(pgCtl, ['-D', data, '-w', '-m', mode, 'stop']);
  try {
    await start();
  } catch {
    fs.rmSync(dir, { recursive: true, force: true });
    return null;
  }
  let destroyed = false;
  return {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop,
    start,
    destroy() {
      if (destroyed) return;
      destroyed = true;
      try {
        run(pgCtl, ['-D', data, '-w', '-m', 'immediate', 'stop']);
      } catch {
        /* already stopped */
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
