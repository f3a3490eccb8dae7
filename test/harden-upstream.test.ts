// Issue 24, items 1, 2 and 9 (h-harden): upstream answers are read with bounds (a gzip bomb, an
// endless plain body), the SSRF policy of registered models (demo orgs, link-local and metadata
// addresses, query strings, checked on every connection), and upstream error text shortened with the
// registered key redacted. A hostile "model" server on 127.0.0.1 is the only fake.
// TRIBUNAL_TEST_STORE=postgres runs it on PostgreSQL.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import dns from 'node:dns/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import zlib from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { guardedLookup, refuseLiteral } from '../src/engine/providers/address-policy.ts';
import { readBoundedBody, UpstreamTooLargeError } from '../src/engine/providers/bounded-body.ts';
import { evaluatorBody } from './helpers/execute.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

const SECRET = randomBytes(32).toString('base64');
const MODEL_KEY = `sk-live-${randomBytes(16).toString('hex')}`;
const env = { TRIBUNAL_SECRET_KEY: SECRET, TRIBUNAL_MODEL_RETRIES: '0', TRIBUNAL_MODEL_TIMEOUT: '60s', TRIBUNAL_RATE_LIMIT: '100000' };

type Mode = 'bomb' | 'huge' | 'echo-key' | 'page' | 'ok';

/** A hostile upstream: what it answers depends on the model id it is asked for. */
async function startHostile(): Promise<{ url: string; hits: number; close(): Promise<void> }> {
  // 16 gzip members of 64 MiB of zeros each: about 1 MiB on the wire, 1 GiB decompressed.
  const member = zlib.gzipSync(Buffer.alloc(64 * 1024 * 1024), { level: 9 });
  const bomb = Buffer.concat(Array.from({ length: 16 }, () => member));
  const state = { hits: 0 };
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      state.hits++;
      const mode = (JSON.parse(body || '{}').model ?? 'ok') as Mode;
      if (mode === 'bomb') {
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': String(bomb.length) });
        res.end(bomb);
      } else if (mode === 'huge') {
        res.writeHead(200, { 'content-type': 'application/json' });
        const chunk = Buffer.alloc(1024 * 1024, 0x20);
        let sent = 0;
        const pump = () => {
          while (sent < 512 && !res.destroyed) {
            sent++;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          res.end();
        };
        res.on('error', () => {});
        pump();
      } else if (mode === 'echo-key') {
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            error: {
              message: `Incorrect API key provided: ${req.headers.authorization?.replace(/^Bearer /, '')}. Internal note: ${'x'.repeat(5000)}`,
              type: 'invalid_request_error',
            },
          }),
        );
      } else {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `internal page ${'secret-internal-data '.repeat(200)}` } }));
      }
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    get hits() {
      return state.hits;
    },
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

describe('bounded upstream reads and the SSRF policy', () => {
  let server: TestServer;
  let hostile: Awaited<ReturnType<typeof startHostile>>;
  let key: string;

  const register = async (name: string, model: string, base = hostile.url, as = key) =>
    server.request('POST', '/v1/models/', { key: as, body: { name, provider: 'openai', base_url: base, model, api_key: MODEL_KEY } });
  const scoreWith = async (model: string) => {
    const ev = await server.request('POST', '/v1/evaluators/', { key, body: evaluatorBody({ model }) });
    assert.equal(ev.status, 201, JSON.stringify(ev.body));
    return server.request('POST', `/v1/evaluators/${ev.body.id}/execute/`, { key, body: { request: 'What is 2+2?', response: 'It is 4.' } });
  };

  before(async () => {
    hostile = await startHostile();
    server = await startTestServer(env);
    key = (await server.demoUser()).api_key;
  });
  after(async () => {
    await server.close();
    await hostile.close();
  });

  test('a gzip bomb and a 512 MiB body end as model_unavailable; memory stays flat and /healthz answers', async () => {
    for (const mode of ['bomb', 'huge'] as const) {
      assert.equal((await register(`m-${mode}`, mode)).status, 201);
    }
    global.gc?.();
    const before = process.memoryUsage().rss;
    for (const mode of ['bomb', 'huge'] as const) {
      const scoring = scoreWith(`m-${mode}`);
      // /healthz keeps answering while the hostile answer is read.
      const health = await fetch(`${server.url}/healthz`);
      assert.equal(health.status, 200);
      const res = await scoring;
      assert.equal(res.status, 502, JSON.stringify(res.body));
      assert.equal(res.body.code, 'model_unavailable');
      assert.match(JSON.stringify(res.body), /larger than \d+ bytes/);
    }
    const grown = (process.memoryUsage().rss - before) / 1024 / 1024;
    assert.ok(grown < 300, `RSS grew by ${grown.toFixed(0)} MiB`);
  });

  test('readBoundedBody stops a bomb after decompression and a long body on the wire', async () => {
    const member = zlib.gzipSync(Buffer.alloc(8 * 1024 * 1024));
    await assert.rejects(readBoundedBody([member, member], { encoding: 'gzip', maxBytes: 1024 * 1024 }), (e) => e instanceof UpstreamTooLargeError && e.stage === 'decoded');
    await assert.rejects(readBoundedBody([Buffer.alloc(600), Buffer.alloc(600)], { maxWireBytes: 1000 }), (e) => e instanceof UpstreamTooLargeError && e.stage === 'wire');
    assert.equal((await readBoundedBody([zlib.gzipSync(Buffer.from('{"ok":true}'))], { encoding: 'gzip' })).toString(), '{"ok":true}');
  });

  test('a provider that echoes the key: the key is redacted and the text shortened, in the answer and the stored log', async () => {
    assert.equal((await register('m-echo', 'echo-key')).status, 201);
    const res = await scoreWith('m-echo');
    assert.equal(res.status, 502, JSON.stringify(res.body));
    const text = JSON.stringify(res.body);
    assert.ok(!text.includes(MODEL_KEY) && !text.includes(MODEL_KEY.slice(0, 12)), text);
    assert.ok(text.length < 3000, 'the 5,000-character upstream text is not echoed');
    const made = await server.request('GET', '/v1/models/m-echo/', { key });
    const verify = await server.request('POST', `/v1/models/${made.body.id}/verify/`, { key });
    assert.equal(verify.status >= 400, true);
    assert.ok(!JSON.stringify(verify.body).includes(MODEL_KEY), JSON.stringify(verify.body));
    assert.match(JSON.stringify(verify.body), /\[redacted\]/);
    const logs = await server.request('GET', '/v1/execution-logs/?limit=50', { key });
    assert.ok(!JSON.stringify(logs.body).includes(MODEL_KEY));
  });

  test('an upstream error page is not echoed verbatim', async () => {
    assert.equal((await register('m-page', 'page')).status, 201);
    const res = await scoreWith('m-page');
    const text = JSON.stringify(res.body);
    assert.ok((text.match(/secret-internal-data/g) ?? []).length < 15, text);
  });

  test('link-local, metadata, query strings and fragments are refused at registration', async () => {
    for (const base of [
      'http://169.254.169.254/latest',
      'http://[fd00:ec2::254]/v1',
      'http://metadata.google.internal/computeMetadata/v1',
      'http://[::ffff:169.254.169.254]/',
      'http://0.0.0.0:80/v1',
      `${hostile.url}?x=/admin`,
      `${hostile.url}#frag`,
    ]) {
      const res = await register(`bad-${randomBytes(3).toString('hex')}`, 'ok', base);
      assert.equal(res.status, 400, `${base}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.errors?.[0]?.field, 'base_url');
    }
    // Private ranges are refused unless the operator allows them; loopback (this fake) is allowed by default.
    assert.equal((await register('private', 'ok', 'http://10.1.2.3/v1')).status, 400);
    assert.equal((await register('loopback', 'ok')).status, 201);
  });

  test('every connection is checked after DNS: a name resolving to a refused address is refused when called', async () => {
    const lookup = guardedLookup({ allowLoopback: false, allowPrivate: false });
    const outcome = await new Promise<unknown>((resolve) => lookup('localhost', {}, (err) => resolve(err)));
    assert.match(String(outcome), /does not call localhost/);
    assert.equal(refuseLiteral('127.0.0.1', { allowLoopback: true, allowPrivate: false }), null);
    assert.ok(refuseLiteral('169.254.169.254', { allowLoopback: true, allowPrivate: true }));
    // End to end, with a name of this machine that resolves to loopback (skipped where none does).
    const name = [os.hostname(), 'vm', 'runsc'].find((n) => n && n !== 'localhost');
    const resolved = name ? await dns.lookup(name).catch(() => null) : null;
    if (!name || !resolved || !resolved.address.startsWith('127.')) return;
    const strict = await startTestServer({ ...env, TRIBUNAL_MODEL_ALLOW_LOOPBACK: 'false' });
    try {
      const k = (await strict.demoUser()).api_key;
      const port = new URL(hostile.url).port;
      const made = await strict.request('POST', '/v1/models/', { key: k, body: { name: 'by-name', provider: 'openai', base_url: `http://${name}:${port}/v1`, model: 'ok' } });
      assert.equal(made.status, 201, 'a DNS name passes registration');
      const hitsBefore = hostile.hits;
      const verify = await strict.request('POST', `/v1/models/${made.body.id}/verify/`, { key: k });
      assert.equal(verify.status, 502, JSON.stringify(verify.body));
      assert.match(verify.body.detail, /refused/);
      assert.equal(hostile.hits, hitsBefore, 'no request reached the refused address');
    } finally {
      await strict.close();
    }
  });

  test('demo organizations cannot register models by default', async () => {
    const strict = await startTestServer({ ...env, TRIBUNAL_DEMO_MODELS: undefined });
    try {
      const k = (await strict.demoUser()).api_key;
      const res = await strict.request('POST', '/v1/models/', { key: k, body: { name: 'demo', provider: 'openai', base_url: hostile.url, model: 'ok' } });
      assert.equal(res.status, 403, JSON.stringify(res.body));
      assert.match(res.body.detail, /Demo organizations cannot register models/);
    } finally {
      await strict.close();
    }
  });
});
