// Starts a real Tribunal server on 127.0.0.1 (random port) for a test, on a fresh store.
// TRIBUNAL_TEST_STORE=postgres runs the same tests on PostgreSQL (see test/helpers/postgres.ts).
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Express } from 'express';
import { buildServices, stopServices } from '../../src/app.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import { createServer, type ServerOptions } from '../../src/server.ts';
import { JsonStore } from '../../src/store/json-store.ts';
import type { Store } from '../../src/store/types.ts';
import type { Services } from '../../src/tool.ts';

export interface TestServer {
  url: string;
  /** The app createServer made (a test may look at its layers). */
  app: Express;
  config: Config;
  services: Services;
  store: Store;
  dataDir: string;
  /** POST /create-demo-user/ -> the demo key and ids. */
  demoUser(): Promise<{ api_key: string; organization_id: string; project_id: string; expires_at: string }>;
  /** fetch against the server with an Api-Key header (when key given) and JSON body. */
  request(method: string, path: string, opts?: { key?: string; body?: unknown; headers?: Record<string, string> }): Promise<{ status: number; headers: Headers; body: any }>;
  close(): Promise<void>;
}

const SERVER_SETTINGS = /^(TRIBUNAL_|ANTHROPIC_)|^(DATABASE_URL|REDIS_URL|PORT|HOST|MCP_ENABLED|TRUST_PROXY)$/;

/**
 * The environment for a process a test spawns (a server, the CLI): this machine's environment
 * without any Tribunal setting, so a variable exported in the developer's shell cannot change
 * what the test checks; then the test's own settings.
 */
export function cleanEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!SERVER_SETTINGS.test(k)) env[k] = v;
  for (const [k, v] of Object.entries(extra)) if (v !== undefined) env[k] = v;
  return env;
}

export function tempDir(prefix = 'tribunal-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** Opens the store a test server uses: JSON in a temp dir, or a fresh PostgreSQL schema. */
export async function openTestStore(dataDir: string): Promise<Store> {
  if (process.env.TRIBUNAL_TEST_STORE === 'postgres') {
    const { openTestPostgresStore } = await import('./postgres.ts');
    return openTestPostgresStore();
  }
  const store = new JsonStore({ dataDir });
  await store.init();
  return store;
}

export async function startTestServer(
  env: Record<string, string | undefined> = {},
  opts: ServerOptions & { store?: Store; services?: Partial<Services> } = {},
): Promise<TestServer> {
  const dataDir = tempDir();
  // h-harden: tests register models with demo keys unless they say otherwise (the default refuses them).
  const config = loadConfig({ TRIBUNAL_DATA_DIR: dataDir, PORT: '0', TRIBUNAL_DEMO_RATE_LIMIT: '1000', TRIBUNAL_DEMO_MODELS: 'true', ...env });
  const store = opts.store ?? (await openTestStore(dataDir));
  const services = { ...(await buildServices(config, store)), ...opts.services };
  const app = createServer(services, opts);
  const server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const request: TestServer['request'] = async (method, p, o = {}) => {
    const headers: Record<string, string> = { ...(o.headers ?? {}) };
    if (o.key) headers.authorization = `Api-Key ${o.key}`;
    let body: string | undefined;
    if (o.body !== undefined) {
      body = typeof o.body === 'string' ? o.body : JSON.stringify(o.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(url + p, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      /* not JSON */
    }
    return { status: res.status, headers: res.headers, body: parsed };
  };

  return {
    url,
    app,
    config,
    services,
    store,
    dataDir,
    request,
    async demoUser() {
      const res = await request('POST', '/create-demo-user/');
      if (res.status !== 201) throw new Error(`demo user: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await stopServices(services, 1000);
      if (!opts.store) await store.close();
      fs.rmSync(dataDir, { recursive: true, force: true, maxRetries: 3 });
    },
  };
}
