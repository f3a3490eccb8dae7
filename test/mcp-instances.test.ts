// No sticky sessions needed: two Tribunal instances on one store behind a round-robin proxy (a real
// HTTP server on 127.0.0.1, like a load balancer without affinity) serve one SDK client's
// consecutive requests alternately, from initialize to tool calls.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { startFakeAnthropic, type FakeAnthropic } from './helpers/fake-anthropic.ts';
import { connectMcp } from './helpers/mcp-client.ts';
import { openTestStore, startTestServer, tempDir, type TestServer } from './helpers/server.ts';
import type { Store } from '../src/store/types.ts';

/** Forwards request i to targets[i % n], Host header and all, and records who served what. */
async function roundRobinProxy(targets: string[]) {
  const served: Array<{ target: number; method: string; rpc: string }> = [];
  let next = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const target = next++ % targets.length;
      const body = Buffer.concat(chunks);
      let rpc = '';
      try {
        rpc = JSON.parse(body.toString('utf8')).method ?? '';
      } catch {
        /* not JSON-RPC */
      }
      served.push({ target, method: req.method ?? '', rpc });
      const upstream = http.request(new URL(req.url ?? '/', targets[target]), { method: req.method, headers: req.headers }, (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      });
      upstream.on('error', () => {
        res.writeHead(502);
        res.end();
      });
      upstream.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    served,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let fake: FakeAnthropic;
let store: Store;
let dataDir: string;
let instances: TestServer[];
let proxy: Awaited<ReturnType<typeof roundRobinProxy>>;

before(async () => {
  fake = await startFakeAnthropic();
  dataDir = tempDir();
  store = await openTestStore(dataDir);
  const env = { ANTHROPIC_API_KEY: 'test-dummy-key', ANTHROPIC_BASE_URL: fake.url };
  instances = [await startTestServer(env, { store }), await startTestServer(env, { store })];
  proxy = await roundRobinProxy(instances.map((i) => i.url));
});
after(async () => {
  await proxy?.close();
  for (const i of instances ?? []) await i.close();
  await store?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
  await fake?.close();
});

test('one MCP client, requests alternating between two instances, no session affinity', async () => {
  const { api_key } = await instances[0].demoUser();
  const mcp = await connectMcp(proxy.url, api_key);
  try {
    const created = await mcp.call('create_judge', { name: 'Alternating judge', intent: 'Answers of a support bot.', evaluator_ids: ['Answer Relevance', 'Clarity'] });
    assert.ok(!created.isError, created.text);
    const fetched = await mcp.call('get_judge', { judge_id: created.json.id });
    assert.ok(!fetched.isError, fetched.text);
    assert.equal(fetched.json.evaluators.length, 2);
    const run = await mcp.call('run_judge', { judge_name: 'Alternating judge', request: 'Where is my order?', response: 'It ships tomorrow.' });
    assert.ok(!run.isError, run.text);
    assert.equal(run.json.evaluator_results.length, 2);
    const log = await mcp.call('get_execution_log', { log_id: run.json.execution_log_id });
    assert.ok(!log.isError, log.text);
    assert.equal(log.json.judge_id, created.json.id);
  } finally {
    await mcp.close();
  }

  const posts = proxy.served.filter((s) => s.method === 'POST');
  const init = posts.find((s) => s.rpc === 'initialize')!;
  const calls = posts.filter((s) => s.rpc === 'tools/call');
  assert.equal(calls.length, 4);
  assert.ok(
    calls.some((c) => c.target !== init.target),
    'tool calls were served by an instance that never saw initialize',
  );
  assert.deepEqual(new Set(posts.map((p) => p.target)), new Set([0, 1]), 'both instances served MCP requests');
  // Consecutive requests of the client went to different instances.
  for (let i = 1; i < proxy.served.length; i++) assert.notEqual(proxy.served[i].target, proxy.served[i - 1].target);
});
