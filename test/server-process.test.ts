// The server as a process: `npm start`'s entry point, restarts, the data-directory lock, and the
// `tribunal keys` command with and without a running server.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { hang, startFakeAnthropic } from './helpers/fake-anthropic.ts';
import { cleanEnv, tempDir } from './helpers/server.ts';
import { freePort } from './helpers/wait.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const children: ChildProcess[] = [];
after(() => {
  for (const c of children) c.kill('SIGKILL');
});

interface Started {
  child: ChildProcess;
  output: () => string;
  url: string;
}

/** `npm start`'s entry (src/main.ts), or the CLI's `tribunal serve`, which must behave the same. */
const ENTRIES = {
  main: { args: ['--import', 'tsx', 'src/main.ts'], ready: 'get a key:' },
  'tribunal serve': { args: ['bin/tribunal.js', 'serve'], ready: 'Tribunal listening on' },
} as const;

async function startServer(dataDir: string, env: Record<string, string> = {}, entry: keyof typeof ENTRIES = 'main'): Promise<Started> {
  const port = await freePort();
  const child = spawn(process.execPath, [...ENTRIES[entry].args], {
    cwd: ROOT,
    env: cleanEnv({ TRIBUNAL_DATA_DIR: dataDir, PORT: String(port), ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${out}`)), 60_000); // generous: CI runs two test files at once on 2 cores
    const check = () => {
      if (out.includes(ENTRIES[entry].ready)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(Object.assign(new Error(`server exited ${code}:\n${out}`), { output: out, code }));
    });
  });
  return { child, output: () => out, url: `http://127.0.0.1:${port}` };
}

async function stop(s: Started): Promise<void> {
  if (s.child.exitCode !== null) return;
  const exited = new Promise((r) => s.child.once('exit', r));
  s.child.kill('SIGTERM');
  await exited;
}

/**
 * The CLI as a child process, without blocking this test's event loop: a blocked loop cannot see the
 * server close an idle keep-alive connection, and the next fetch would reuse a dead socket.
 */
function cli(args: string[], dataDir: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/tribunal.js', ...args], { cwd: ROOT, env: cleanEnv({ TRIBUNAL_DATA_DIR: dataDir }), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => (stdout += d));
    child.stderr!.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.once('error', reject);
    child.once('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

describe('the server process', () => {
  it('prints where it listens, the MCP URL and how to get a key; state survives a restart', async () => {
    const dir = tempDir();
    let s = await startServer(dir);
    assert.match(s.output(), /Tribunal listening on http:\/\/127\.0\.0\.1:\d+/);
    assert.match(s.output(), /\/mcp/);
    assert.match(s.output(), /create-demo-user/);
    const demo = (await (await fetch(`${s.url}/create-demo-user/`, { method: 'POST' })).json()) as { api_key: string };
    const headers = { authorization: `Api-Key ${demo.api_key}`, 'content-type': 'application/json' };
    const judge = (await (
      await fetch(`${s.url}/v1/judges/`, { method: 'POST', headers, body: JSON.stringify({ name: 'kept', intent: 'x', evaluator_ids: ['Clarity'] }) })
    ).json()) as { id: string };
    await stop(s);

    s = await startServer(dir);
    const again = await fetch(`${s.url}/v1/judges/${judge.id}/`, { headers });
    assert.equal(again.status, 200, 'the key and the judge survived the restart');
    assert.equal(((await again.json()) as { name: string }).name, 'kept');

    // A second process on the same data directory is refused with a clear message.
    await assert.rejects(startServer(dir), (err: Error & { output?: string; code?: number }) => {
      assert.equal(err.code, 1);
      assert.match(err.output ?? '', /data directory .* is in use by a Tribunal server \(pid \d+/);
      assert.match(err.output ?? '', /TRIBUNAL_STORE=postgres/);
      return true;
    });
    await stop(s);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('takes over a lock left by a dead process', async () => {
    const dir = tempDir();
    fs.writeFileSync(
      path.join(dir, 'tribunal.lock'),
      JSON.stringify({ pid: 999_999_999, host: (await import('node:os')).hostname(), role: 'server', since: '2026-01-01T00:00:00Z' }),
    );
    const s = await startServer(dir);
    assert.match(s.output(), /Tribunal listening/);
    await stop(s);
    assert.equal(s.child.exitCode, 0, 'a clean shutdown on SIGTERM');
    assert.ok(!fs.existsSync(path.join(dir, 'tribunal.lock')), 'the lock is released on shutdown');
  });
});

describe('tribunal keys', () => {
  it('creates an organization and keys with the server stopped and running, without corrupting its data', async () => {
    const dir = tempDir();
    const offline = await cli(['keys', 'create', '--org', 'acme', '--json'], dir);
    assert.equal(offline.status, 0, offline.stderr);
    const first = JSON.parse(offline.stdout) as { api_key: string; created_organization: boolean; organization_id: string };
    assert.equal(first.created_organization, true);
    assert.ok(!fs.existsSync(path.join(dir, 'tribunal.lock')), 'the CLI released the data directory');

    const s = await startServer(dir);
    const auth = (key: string) => ({ authorization: `Bearer ${key}` });
    assert.equal((await fetch(`${s.url}/v1/projects/`, { headers: auth(first.api_key) })).status, 200);

    // While the server runs, the CLI goes through it (one writer) and the key works at once.
    const online = await cli(['keys', 'create', '--org', 'acme', '--name', 'ci', '--json'], dir);
    assert.equal(online.status, 0, online.stderr);
    const second = JSON.parse(online.stdout) as { api_key: string; created_organization: boolean; organization_id: string; key: { id: string } };
    assert.equal(second.created_organization, false);
    assert.equal(second.organization_id, first.organization_id);
    assert.equal((await fetch(`${s.url}/v1/projects/`, { headers: auth(second.api_key) })).status, 200);

    const listed = await cli(['keys', 'list', '--org', 'acme', '--json'], dir);
    assert.equal(listed.status, 0, listed.stderr);
    assert.deepEqual(
      (JSON.parse(listed.stdout) as Array<{ name: string }>).map((k) => k.name),
      ['ci', 'admin'],
    );
    assert.ok(!listed.stdout.includes(second.api_key), 'secrets are never listed');

    const revoked = await cli(['keys', 'revoke', '--org', 'acme', '--key', second.key.id], dir);
    assert.equal(revoked.status, 0, revoked.stderr);
    assert.equal((await fetch(`${s.url}/v1/projects/`, { headers: auth(second.api_key) })).status, 401);

    const unknown = await cli(['keys', 'list', '--org', 'nobody'], dir);
    assert.equal(unknown.status, 5, 'not found');
    assert.match(unknown.stderr, /No organization named "nobody"/);
    await stop(s);

    // Everything the CLI wrote through the server is on disk after the server stops.
    const after = await cli(['keys', 'list', '--org', 'acme', '--json'], dir);
    assert.equal((JSON.parse(after.stdout) as unknown[]).length, 2);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe('graceful shutdown', () => {
  /** A server whose judge model is a fake, with a demo key and a one-evaluator judge. */
  async function serverWithJudge(env: Record<string, string>, entry: keyof typeof ENTRIES = 'main') {
    const fake = await startFakeAnthropic();
    const dir = tempDir();
    const s = await startServer(dir, { ANTHROPIC_API_KEY: 'sk-ant-test-dummy', ANTHROPIC_BASE_URL: fake.url, ...env }, entry).catch(async (err) => {
      await fake.close(); // or its open server keeps the test process alive
      throw err;
    });
    const demo = (await (await fetch(`${s.url}/create-demo-user/`, { method: 'POST' })).json()) as { api_key: string };
    const headers = { authorization: `Api-Key ${demo.api_key}`, 'content-type': 'application/json' };
    const judge = (await (
      await fetch(`${s.url}/v1/judges/`, { method: 'POST', headers, body: JSON.stringify({ name: 'j', intent: 'x', evaluator_ids: ['Clarity'] }) })
    ).json()) as { id: string };
    const execute = () => fetch(`${s.url}/v1/judges/${judge.id}/execute/`, { method: 'POST', headers, body: JSON.stringify({ request: 'q', response: 'a' }) });
    const exited = new Promise<number | null>((resolve) => s.child.once('exit', (code) => resolve(code)));
    const cleanup = async () => {
      await fake.close();
      fs.rmSync(dir, { recursive: true, force: true });
    };
    return { fake, s, execute, exited, cleanup };
  }

  const until = async (check: () => boolean) => {
    const deadline = Date.now() + 30_000;
    while (!check()) {
      if (Date.now() > deadline) throw new Error('the run never reached the judge model');
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  for (const entry of ['main', 'tribunal serve'] as const) {
    it(`on SIGTERM cuts a run on a hanging model short after the grace period, logs it as failed, and exits (${entry})`, async () => {
      const { fake, s, execute, exited, cleanup } = await serverWithJudge({ TRIBUNAL_SHUTDOWN_GRACE: '1s' }, entry);
      try {
        fake.respondWith(() => hang());
        const run = execute().then(
          (res) => `answered ${res.status}`,
          () => 'cut short',
        );
        await until(() => fake.inFlight > 0);
        s.child.kill('SIGTERM');
        assert.equal(await exited, 0);
        assert.equal(await run, 'cut short', 'the caller got no answer');
        assert.match(s.output(), /request failed, cut short after the 1 s grace period \(TRIBUNAL_SHUTDOWN_GRACE\): POST \/v1\/judges\/[^/]+\/execute\/ \(key trb_[0-9a-f]{16}/);
      } finally {
        await cleanup();
      }
    });
  }

  it('lets a run that ends within the grace period answer before exiting', async () => {
    const { fake, s, execute, exited, cleanup } = await serverWithJudge({ TRIBUNAL_SHUTDOWN_GRACE: '30s' });
    try {
      fake.setLatency(500);
      const run = execute();
      await until(() => fake.inFlight > 0);
      s.child.kill('SIGTERM');
      const res = await run;
      assert.equal(res.status, 200);
      assert.equal(typeof ((await res.json()) as { score: unknown }).score, 'number');
      assert.equal(await exited, 0);
      assert.doesNotMatch(s.output(), /cut short/);
    } finally {
      await cleanup();
    }
  });
});
