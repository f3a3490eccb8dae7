// The front door (src/http/front-door.ts): requests born with the app's express prototypes, and a
// run or an OTLP traces export through the door answered with everything the app's own way gives it.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import express from 'express';
import { loadConfig } from '../src/config.ts';
import { expressMessages } from '../src/http/front-door.ts';
import { createObservability } from '../src/observability/index.ts';
import { createLogger } from '../src/observability/logger.ts';
import { startTestServer } from './helpers/server.ts';

test('a server made with expressMessages hands the app requests and responses born with its prototypes', async () => {
  const app = express();
  const seen: Array<{ req: boolean; res: boolean; incoming: boolean; outgoing: boolean }> = [];
  app.get('/x', (req, res) => {
    seen.push({
      req: Object.getPrototypeOf(req) === app.request,
      res: Object.getPrototypeOf(res) === app.response,
      incoming: req instanceof http.IncomingMessage,
      outgoing: res instanceof http.ServerResponse,
    });
    res.status(201).json({ q: req.query.q, ip: typeof req.ip });
  });
  const server = http.createServer(expressMessages(app), app).listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/x?q=1`);
    assert.equal(res.status, 201);
    assert.deepEqual(await res.json(), { q: '1', ip: 'string' });
    assert.deepEqual(seen, [{ req: true, res: true, incoming: true, outgoing: true }]);
  } finally {
    server.close();
  }
});

test('a run through the front door answers with the headers, errors and limits of the app', async () => {
  const server = await startTestServer({ TRIBUNAL_MAX_BODY: '2000' });
  try {
    const { api_key } = await server.demoUser();
    const path = '/v1/judges/jdg_0123/execute/';
    // No key: refused first, as a problem, with the request id and nosniff of every answer.
    const anonymous = await server.request('POST', path, { body: { response: 'x' } });
    assert.equal(anonymous.status, 401);
    assert.equal(anonymous.headers.get('content-type'), 'application/problem+json; charset=utf-8');
    assert.equal(anonymous.headers.get('x-content-type-options'), 'nosniff');
    assert.match(anonymous.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    assert.equal(anonymous.body.request_id, anonymous.headers.get('x-request-id'));
    // A caller's request id is echoed; the rate limit headers are set once the key is known.
    const unknown = await server.request('POST', path, { key: api_key, body: { response: 'x' }, headers: { 'x-request-id': 'req-42' } });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.headers.get('x-request-id'), 'req-42');
    assert.match(unknown.headers.get('ratelimit') ?? '', /^limit=\d+, remaining=\d+, reset=\d+$/);
    // Strict input and the body's limits, as problems.
    const badJson = await server.request('POST', path, { key: api_key, body: '{"response":' });
    assert.equal(badJson.status, 400);
    assert.match(badJson.body.detail, /not valid JSON/);
    const tooLarge = await server.request('POST', path, { key: api_key, body: { response: 'x'.repeat(3000) } });
    assert.equal(tooLarge.status, 413);
    const notJson = await server.request('POST', path, { key: api_key, body: 'response=x', headers: { 'content-type': 'text/plain' } });
    assert.equal(notJson.status, 415);
  } finally {
    await server.close();
  }
});

test('an OTLP traces export is served by the front door, with its metric label, log line and errors as before', async () => {
  const lines: Array<Record<string, unknown>> = [];
  const destination = {
    write: (chunk: string) =>
      void lines.push(
        ...chunk
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l)),
      ),
  };
  const env = { TRIBUNAL_METRICS_TOKEN: 'metrics-token-for-tests-0123456789' };
  const obs = await createObservability(loadConfig(env), { logger: await createLogger({ logLevel: 'info', logPretty: false }, destination), processMetrics: false });
  const server = await startTestServer(env, { observability: obs });
  // Counts every entry into a layer of the app's router (the front door's requests enter none).
  let entered = 0;
  for (const layer of (server.app as unknown as { router: { stack: Array<{ handle: (this: unknown, ...args: unknown[]) => unknown }> } }).router.stack) {
    const handle = layer.handle;
    if (handle.length < 4)
      layer.handle = function (this: unknown, req: unknown, res: unknown, next: unknown) {
        entered++;
        return handle.call(this, req, res, next);
      };
  }
  const post = (key: string | undefined, body: unknown, path = '/otel/v1/traces') =>
    fetch(server.url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) }, body: JSON.stringify(body) });
  const now = String(BigInt(Date.now()) * 1_000_000n);
  const span = { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', name: 'op', kind: 1, startTimeUnixNano: now, endTimeUnixNano: now };
  const spans = { resourceSpans: [{ resource: { attributes: [] }, scopeSpans: [{ scope: { name: 's' }, spans: [span] }] }] };
  try {
    const { api_key } = await server.demoUser();
    entered = 0;
    const accepted = await post(api_key, spans);
    assert.equal(accepted.status, 200);
    assert.deepEqual(await accepted.json(), {});
    assert.equal(accepted.headers.get('x-content-type-options'), 'nosniff');
    assert.match(accepted.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    // With a trailing slash, as express's non-strict route takes it.
    assert.equal((await post(api_key, spans, '/otel/v1/traces/')).status, 200);
    // Authentication as on /v1, refused as a problem before the body is read; a bad body in OTLP's shape.
    const anonymous = await post(undefined, spans);
    assert.equal(anonymous.status, 401);
    assert.equal(anonymous.headers.get('content-type'), 'application/problem+json; charset=utf-8');
    const malformed = await post(api_key, { resourceSpans: 'no' });
    assert.equal(malformed.status, 400);
    assert.equal((await malformed.json()).code, 3);
    assert.equal(entered, 0, 'a POST to the traces receiver entered a layer of the app router');
    // Other methods still take the app's own way, and answer as before.
    const get = await fetch(`${server.url}/otel/v1/traces`);
    assert.equal(get.status, 404);
    assert.ok(entered > 0);
    const metrics = await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${env.TRIBUNAL_METRICS_TOKEN}` } })).text();
    assert.match(metrics, /^tribunal_http_requests_total\{method="POST",route="\/otel\/v1\/traces",status="200"\} 2$/m);
    assert.match(metrics, /^tribunal_http_requests_total\{method="POST",route="\/otel\/v1\/traces",status="401"\} 1$/m);
    const logged = lines.filter((l) => l.msg === 'request' && l.route === '/otel/v1/traces').map((l) => l.status);
    assert.deepEqual(logged.sort(), [200, 200, 400, 401]);
  } finally {
    await server.close();
    await obs.shutdown();
  }
});
