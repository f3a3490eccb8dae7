// What `tribunal keys ...` says about where it wrote. A key written to a data directory that no
// server reads is a key every server rejects, so the command names the store it used and warns when
// a Tribunal server runs elsewhere: the lock file of the default data directory names a live server,
// or a Tribunal server answers on the configured URL or port.
import http from 'node:http';
import path from 'node:path';
import type { Config } from '../config.ts';
import { liveLockOwner } from '../store/lock.ts';

/** A PostgreSQL URL fit to print: the password is left out. */
export function safeDatabaseUrl(url: string | undefined): string {
  try {
    const u = new URL(url ?? '');
    u.password = '';
    return u.toString();
  } catch {
    return '(an unreadable DATABASE_URL)';
  }
}

/** One line naming the store and data directory the command worked on. */
export function describeStore(config: Config): string {
  if (config.store !== 'json') return `Store: PostgreSQL ${safeDatabaseUrl(config.databaseUrl)}`;
  const owner = liveLockOwner(config.dataDir);
  const how = owner?.role === 'server' ? `written by the Tribunal server that owns it (pid ${owner.pid})` : 'no server owns it; written directly';
  return `Store: JSON files in ${config.dataDir} (${how})`;
}

interface Health {
  status?: string;
  store?: { kind?: string };
}

/** GET <base>/healthz; the answer when a Tribunal server gives one within a second, else null. */
function probe(base: string): Promise<Health | null> {
  return new Promise((resolve) => {
    let url: URL;
    try {
      url = new URL('/healthz', base);
    } catch {
      return resolve(null);
    }
    if (url.protocol !== 'http:') return resolve(null);
    const req = http.get(url, { timeout: 1000 }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d) => (text += d));
      res.on('end', () => {
        try {
          const body = JSON.parse(text) as Health;
          resolve(body && typeof body === 'object' && body.store ? body : null);
        } catch {
          resolve(null);
        }
      });
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(null));
  });
}

/** The URLs a server of this configuration would answer on: TRIBUNAL_URL, then HOST:PORT. */
function candidateUrls(config: Config, env: NodeJS.ProcessEnv): string[] {
  const host = ['0.0.0.0', '::', ''].includes(config.host) ? '127.0.0.1' : config.host.includes(':') ? `[${config.host}]` : config.host;
  const urls = [env.TRIBUNAL_URL, config.publicUrl, config.port ? `http://${host}:${config.port}` : undefined];
  return [...new Set(urls.filter((u): u is string => Boolean(u && u.trim())))];
}

/**
 * A warning when the key went somewhere no running server reads while a Tribunal server runs
 * elsewhere; null when all is well (or nothing can be told).
 */
export async function otherServerWarning(config: Config, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): Promise<string | null> {
  const fix = "run this command with the server's settings (TRIBUNAL_DATA_DIR, or TRIBUNAL_STORE=postgres and DATABASE_URL).";
  if (config.store === 'json') {
    if (liveLockOwner(config.dataDir)?.role === 'server') return null;
    const defaultDir = path.resolve(cwd, '.tribunal-data');
    const other = defaultDir !== config.dataDir ? liveLockOwner(defaultDir) : null;
    if (other?.role === 'server') {
      return `warning: no Tribunal server owns ${config.dataDir}, but one (pid ${other.pid}) is running on ${defaultDir}: it will not know this key; ${fix}`;
    }
  }
  for (const url of candidateUrls(config, env)) {
    const health = await probe(url);
    if (!health) continue;
    const where = config.store === 'json' ? `no Tribunal server owns ${config.dataDir}` : `this command used PostgreSQL ${safeDatabaseUrl(config.databaseUrl)}`;
    // A PostgreSQL server may well share our database; only a JSON one surely does not.
    if (config.store !== 'json' && health.store?.kind !== 'json') continue;
    return `warning: ${where}, but a Tribunal server answers at ${url} (store: ${health.store?.kind ?? 'unknown'}): it will not know this key unless it uses the same store; ${fix}`;
  }
  return null;
}
