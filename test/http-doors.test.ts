// The doors (REST, MCP, the web app) under hostile or odd traffic: one error mapping for every door,
// door-neutral problem texts, limits on every REST operation, rate limits that a JSON-RPC batch or a
// pile of keys cannot multiply, bodies never read before the key is checked, slow uploads ended,
// malformed paths answered 4xx, nosniff everywhere, X-Forwarded-For only from configured proxies.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../src/config.ts';
import { serve } from '../src/main.ts';
import { PostgresStore } from '../src/store/postgres-store.ts';
import type { Store } from '../src/store/types.ts';
import { connectMcp, MCP_POST_HEADERS, rawRequest } from './helpers/mcp-client.ts';
import { startTestServer, tempDir, type TestServer } from './helpers/server.ts';

/** Sends the head and the first bytes of a request, never the rest; resolves with what came back. */
function partialRequest(url: string, head: string, firstBytes: string): Promise<{ text: string; closed: boolean }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    let text = '';
    const socket = net.connect(Number(port), hostname, () => socket.write(head + firstBytes));
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer while the body was still unsent; got so far: ${JSON.stringify(text)}`));
    }, 15_000);
    socket.on('data', (d) => (text += d.toString('utf8')));
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ text, closed: true });
    });
    socket.on('error', () => {});
  });
}

const statusOf = (raw: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1]);

describe('one error mapping for every door', () => {
  let server: TestServer;
  let dead: PostgresStore;
  before(async () => {
    // Authentication works (the real store answers); project reads go to a PostgreSQL that is not there.
    const dataDir = tempDir();
    const { JsonStore } = await import('../src/store/json-store.ts');
    const real = new JsonStore({ dataDir });
    await real.init();
    dead = new PostgresStore({ connectionString: 'postgres://postgres@127.0.0.1:1/test', poolMax: 1, connectTimeoutMs: 500 });
    const store = new Proxy(real, {
      get: (target, prop, receiver) => (prop === 'listProjects' ? dead.listProjects.bind(dead) : Reflect.get(target, prop, receiver)),
    }) as Store;
    server = await startTestServer({}, { store });
  });
  after(async () => {
    await server.close();
    await dead.close();
  });

  it('reports an unreachable store to MCP as store_unavailable with a retry hint, as REST does', async () => {
    const { api_key } = await server.demoUser();
    const rest = await server.request('GET', '/v1/projects/', { key: api_key });
    assert.equal(rest.status, 503);
    assert.equal(rest.body.code, 'store_unavailable');
    const mcp = await connectMcp(server.url, api_key);
    try {
      const result = await mcp.call('list_projects');
      assert.equal(result.isError, true);
      assert.match(result.text, /list_projects failed \(store_unavailable\)/);
      assert.match(result.text, /retry/);
      const problem = JSON.parse((result.content[1] as { text: string }).text);
      assert.equal(problem.status, 503);
      assert.equal(problem.code, 'store_unavailable');
    } finally {
      await mcp.close();
    }
  });
});

describe('the REST door', () => {
  let server: TestServer;
  let key: string;
  before(async () => {
    server = await startTestServer({ TRIBUNAL_MAX_TEXT: '100', TRIBUNAL_MAX_KEYS_PER_DEMO_ORG: '2', TRIBUNAL_RATE_LIMIT: '100000' });
    key = (await server.demoUser()).api_key;
  });
  after(() => server.close());

  it('names no MCP tool in its problems; the MCP door adds the tool to use', async () => {
    const byName = await server.request('POST', '/v1/judges/', { key, body: { name: 'x', intent: 'y', evaluator_ids: ['No such evaluator'] } });
    assert.equal(byName.status, 400);
    assert.match(byName.body.detail, /No such evaluator/);
    const badProject = await server.request('POST', '/v1/judges/', { key, body: { name: 'x', intent: 'y', evaluator_ids: ['Clarity'], project_id: 'prj_nope' } });
    assert.equal(badProject.status, 400);
    for (const res of [byName, badProject]) assert.doesNotMatch(res.body.detail, /list_\w+/);

    const mcp = await connectMcp(server.url, key);
    try {
      const viaMcp = await mcp.call('create_judge', { name: 'x', intent: 'y', evaluator_ids: ['No such evaluator'] });
      assert.equal(viaMcp.isError, true);
      assert.match(viaMcp.text, /list_evaluators/);
      const project = await mcp.call('create_judge', { name: 'x', intent: 'y', evaluator_ids: ['Clarity'], project_id: 'prj_nope' });
      assert.match(project.text, /list_projects/);
      const named = await mcp.call('run_judge', { judge_name: 'nobody', response: 'r' });
      assert.match(named.text, /Find judges with list_judges\./);
    } finally {
      await mcp.close();
    }
  });

  it('applies the size limits to REST-only operations too', async () => {
    const long = await server.request('POST', '/v1/projects/', { key, body: { name: 'p', description: 'd'.repeat(101) } });
    assert.equal(long.status, 400);
    assert.equal(long.body.code, 'validation_error');
    assert.equal(long.body.errors[0].field, 'description');
    assert.equal((await server.request('POST', '/v1/projects/', { key, body: { name: 'p', description: 'short' } })).status, 201);
  });

  it('caps the live API keys of a demo organization', async () => {
    const second = await server.request('POST', '/v1/api-keys/', { key, body: { name: 'second' } });
    assert.equal(second.status, 201);
    const third = await server.request('POST', '/v1/api-keys/', { key, body: { name: 'third' } });
    assert.equal(third.status, 409, JSON.stringify(third.body));
    assert.equal(third.body.code, 'conflict');
    assert.match(third.body.detail, /TRIBUNAL_MAX_KEYS_PER_DEMO_ORG/);
    assert.equal((await server.request('DELETE', `/v1/api-keys/${second.body.id}/`, { key })).status, 200);
    assert.equal((await server.request('POST', '/v1/api-keys/', { key, body: { name: 'third' } })).status, 201, 'a revoked key frees its place');
  });

  it('answers malformed percent-encoding in a path with a 400 problem', async () => {
    for (const p of ['/v1/judges/%FF/', '/v1/evaluators/%E0%A4%A/', '/v1/execution-logs/%/']) {
      const res = await server.request('GET', p, { key });
      assert.equal(res.status, 400, `${p}: ${JSON.stringify(res.body)}`);
      assert.match(res.headers.get('content-type') ?? '', /application\/problem\+json/);
      assert.equal(res.body.code, 'validation_error');
    }
    for (const p of ['/app/%FF', '/app/static/%FF.js']) {
      const res = await server.request('GET', p);
      assert.ok(res.status >= 400 && res.status < 500, `${p}: ${res.status}`);
      assert.match(res.headers.get('content-type') ?? '', /application\/problem\+json/);
    }
  });

  it('sends x-content-type-options: nosniff on every answer', async () => {
    const answers = [
      await server.request('GET', '/healthz'),
      await server.request('GET', '/v1/openapi.json'),
      await server.request('GET', '/v1/judges/', { key }),
      await server.request('GET', '/v1/judges/'),
      await server.request('GET', '/nowhere'),
      await server.request('GET', '/mcp', { key }),
      await server.request('GET', '/'),
    ];
    for (const res of answers) assert.equal(res.headers.get('x-content-type-options'), 'nosniff', `status ${res.status}`);
  });

  it('refuses an unauthenticated body before reading it', async () => {
    const head = (auth: string) => `POST /v1/projects/ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${1024 * 1024}\r\n${auth}\r\n`;
    // Only 1 KiB of the announced 1 MiB is ever sent: an answer can only come if the body was not awaited.
    const anonymous = await partialRequest(server.url, head(''), '{"name":"' + 'x'.repeat(1024));
    assert.equal(statusOf(anonymous.text), 401, anonymous.text);
    assert.match(anonymous.text, /connection: close/i);
    assert.match(anonymous.text, /application\/problem\+json/);
    const mcp = await partialRequest(server.url, head('').replace('/v1/projects/', '/mcp'), '{"jsonrpc":"2.0",');
    assert.equal(statusOf(mcp.text), 401, mcp.text);
    const wrongKey = await partialRequest(server.url, head('Authorization: Api-Key trb_0000000000000000_' + 'a'.repeat(43) + '\r\n'), '{');
    assert.equal(statusOf(wrongKey.text), 401, wrongKey.text);
    // With a valid key, a body announced over the limit is refused unread too.
    const tooBig = await partialRequest(server.url, head(`Authorization: Api-Key ${key}\r\n`).replace(String(1024 * 1024), String(2 * 1024 * 1024)), '{');
    assert.equal(statusOf(tooBig.text), 413, tooBig.text);
  });
});

describe('rate limits that cannot be multiplied', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ TRIBUNAL_RATE_LIMIT: '6' });
  });
  after(() => server.close());

  const call = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'list_projects', arguments: {} } });

  it('counts every message of a JSON-RPC batch on /mcp against the key', async () => {
    const { api_key } = await server.demoUser();
    const headers = { ...MCP_POST_HEADERS, authorization: `Bearer ${api_key}`, host: new URL(server.url).host };
    const small = await rawRequest(`${server.url}/mcp`, { headers, body: JSON.stringify([call(1), call(2), call(3)]) });
    assert.equal(small.status, 200, small.text);
    assert.equal(small.json.length, 3);
    // 3 used; a batch of 4 more would make 7 of 6.
    const big = await rawRequest(`${server.url}/mcp`, { headers, body: JSON.stringify([call(4), call(5), call(6), call(7)]) });
    assert.equal(big.status, 429, big.text);
    assert.equal(big.json.code, 'rate_limited');
    assert.ok(Number(big.headers['retry-after']) >= 1);
  });

  it('refuses a batch of 100 with a budget of 6', async () => {
    const { api_key } = await server.demoUser();
    const headers = { ...MCP_POST_HEADERS, authorization: `Bearer ${api_key}`, host: new URL(server.url).host };
    const batch = Array.from({ length: 100 }, (_, i) => call(i + 1));
    const res = await rawRequest(`${server.url}/mcp`, { headers, body: JSON.stringify(batch) });
    assert.equal(res.status, 429, res.text.slice(0, 300));
  });
});

describe('client addresses', () => {
  /** Three demo users asked for, each claiming another client address in X-Forwarded-For. */
  async function demoStatuses(env: Record<string, string>): Promise<number[]> {
    const server = await startTestServer({ TRIBUNAL_DEMO_RATE_LIMIT: '2', ...env });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await server.request('POST', '/create-demo-user/', { headers: { 'x-forwarded-for': `203.0.113.${i + 1}` } })).status);
      return statuses;
    } finally {
      await server.close();
    }
  }

  it('ignores X-Forwarded-For by default, so the demo limit holds per connection address', async () => {
    assert.deepEqual(await demoStatuses({}), [201, 201, 429]);
  });

  it('trusts X-Forwarded-For from a configured proxy (TRUST_PROXY)', async () => {
    assert.deepEqual(await demoStatuses({ TRUST_PROXY: 'loopback' }), [201, 201, 201]);
  });
});

describe('slow uploads', () => {
  it('ends a request whose body does not arrive within TRIBUNAL_REQUEST_TIMEOUT', async () => {
    const dataDir = tempDir();
    const running = await serve(loadConfig({ TRIBUNAL_DATA_DIR: dataDir, PORT: '0', TRIBUNAL_REQUEST_TIMEOUT: '1s', TRIBUNAL_HEADERS_TIMEOUT: '1s' }));
    try {
      const demo = (await (await fetch(`${running.url}/create-demo-user/`, { method: 'POST' })).json()) as { api_key: string };
      const head = `POST /v1/projects/ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\nAuthorization: Api-Key ${demo.api_key}\r\n\r\n`;
      const slow = await partialRequest(running.url, head, '{"name":');
      assert.equal(slow.closed, true);
      assert.equal(statusOf(slow.text), 408, slow.text);
    } finally {
      await running.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
