// `npm run conformance`: the official MCP conformance suite (server scenarios) against Tribunal.
//
// Starts a Tribunal server on 127.0.0.1 with a fresh data directory and a demo key, puts a loopback
// proxy in front of it that adds `Authorization: Bearer <demo key>` (the suite cannot send headers),
// and runs `conformance server` against the proxy's /mcp. Scenarios that cannot apply to a server
// that only has tools are listed, each with its reason, in scripts/conformance-expected-failures.yml;
// everything else must pass (the suite also fails when a listed scenario starts passing).
//
//   npm run conformance                       all active server scenarios
//   npm run conformance -- --scenario ping    one scenario (extra arguments go to the suite)
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildServices } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { createServer } from '../src/server.ts';
import { JsonStore } from '../src/store/json-store.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const expectedFailures = path.join(root, 'scripts', 'conformance-expected-failures.yml');

function listen(server: http.Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

/** A reverse proxy that forwards everything unchanged (Host and Origin included) plus an Authorization header. */
export function authProxy(targetPort: number, authorization: string): http.Server {
  return http.createServer((req, res) => {
    const upstream = http.request({ host: '127.0.0.1', port: targetPort, method: req.method, path: req.url, headers: { ...req.headers, authorization } }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
  });
}

async function main() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tribunal-conformance-'));
  const config = loadConfig({ TRIBUNAL_DATA_DIR: dataDir, PORT: '0', TRIBUNAL_RATE_LIMIT: '100000' });
  const store = new JsonStore({ dataDir });
  await store.init();
  const app = createServer(await buildServices(config, store));
  const server = http.createServer(app);
  const port = await listen(server);
  const demo = await fetch(`http://127.0.0.1:${port}/create-demo-user/`, { method: 'POST' });
  if (demo.status !== 201) throw new Error(`could not create a demo key: ${demo.status} ${await demo.text()}`);
  const { api_key } = (await demo.json()) as { api_key: string };
  const proxy = authProxy(port, `Bearer ${api_key}`);
  const proxyPort = await listen(proxy);
  const url = `http://127.0.0.1:${proxyPort}/mcp`;
  console.log(`Tribunal on 127.0.0.1:${port}, conformance proxy (adds the demo key) at ${url}`);

  const bin = path.join(root, 'node_modules', '.bin', 'conformance');
  const args = ['server', '--url', url, '--expected-failures', expectedFailures, ...process.argv.slice(2)];
  const code = await new Promise<number>((resolve) => {
    const child = spawn(bin, args, { stdio: 'inherit' });
    child.on('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0)));
    child.on('error', (err) => {
      console.error(`could not run ${bin}: ${err.message} (npm install first)`);
      resolve(1);
    });
  });
  server.closeAllConnections();
  proxy.closeAllConnections();
  await Promise.all([new Promise((r) => server.close(r)), new Promise((r) => proxy.close(r))]);
  await store.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
  process.exit(code);
}

if (import.meta.url === `file://${process.argv[1]}`) void main();
