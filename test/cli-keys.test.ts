// `tribunal keys ...` names the store it wrote to and warns when a Tribunal server runs on another
// data directory (issue 13 item 3): a key written where no server reads is a key every server rejects.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { safeDatabaseUrl } from '../src/cli/store-notice.ts';
import { runCli } from './helpers/cli.ts';
import { startTestServer, tempDir, type TestServer } from './helpers/server.ts';

/** A port nothing listens on, so that the command's probe of HOST:PORT finds no server. */
async function closedPort(): Promise<string> {
  const net = await import('node:net');
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const port = (srv.address() as import('node:net').AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return String(port);
}

describe('tribunal keys: which store', () => {
  let server: TestServer;
  let cwd: string;
  let port: string;
  before(async () => {
    server = await startTestServer();
    cwd = tempDir();
    port = await closedPort();
  });
  after(async () => {
    await server.close();
    fs.rmSync(cwd, { recursive: true, force: true });
  });

  test('names the data directory written; no warning when no server runs elsewhere', async () => {
    const dir = tempDir();
    const r = await runCli(['keys', 'create', '--org', 'acme', '--json'], { cwd, env: { TRIBUNAL_DATA_DIR: dir, PORT: port } });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).organization_name, 'acme', 'stdout stays pure JSON');
    assert.equal(r.stderr, `Store: JSON files in ${path.resolve(dir)} (no server owns it; written directly)\n`);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('warns when a Tribunal server answers on the configured URL but does not own the directory', async () => {
    const dir = tempDir();
    const r = await runCli(['keys', 'create', '--org', 'acme'], { cwd, env: { TRIBUNAL_DATA_DIR: dir, TRIBUNAL_URL: server.url, PORT: port } });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /New API key/);
    assert.match(r.stderr, new RegExp(`^Store: JSON files in ${path.resolve(dir).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} `, 'm'));
    assert.match(
      r.stderr,
      new RegExp(
        `^warning: no Tribunal server owns .*, but a Tribunal server answers at ${server.url.replace(/[.]/g, '\\.')} \\(store: (json|postgres)\\).*TRIBUNAL_DATA_DIR`,
        'm',
      ),
    );
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('warns when the default data directory is locked by a live server and another one was written; also after a failure', async () => {
    const dir = tempDir();
    const defaultDir = path.join(cwd, '.tribunal-data');
    fs.mkdirSync(defaultDir, { recursive: true });
    // This test process stands in for the server: a live pid on this host.
    fs.writeFileSync(path.join(defaultDir, 'tribunal.lock'), JSON.stringify({ pid: process.pid, host: os.hostname(), role: 'server', since: new Date().toISOString() }));
    try {
      const r = await runCli(['keys', 'list', '--org', 'nobody'], { cwd, env: { TRIBUNAL_DATA_DIR: dir, PORT: port } });
      assert.equal(r.code, 5, r.stderr);
      assert.match(r.stderr, /^error: No organization named "nobody"/m);
      assert.match(r.stderr, new RegExp(`^warning: no Tribunal server owns .*, but one \\(pid ${process.pid}\\) is running on ${defaultDir.replace(/[.]/g, '\\.')}`, 'm'));
    } finally {
      fs.rmSync(defaultDir, { recursive: true, force: true });
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a PostgreSQL URL is printed without its password', () => {
    const shown = safeDatabaseUrl('postgres://tribunal:s3cret@db.internal:5432/tribunal?sslmode=require');
    assert.equal(shown, 'postgres://tribunal@db.internal:5432/tribunal?sslmode=require');
  });
});
