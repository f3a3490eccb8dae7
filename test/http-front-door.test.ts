// The judged call's front door (src/http/front-door.ts): requests born with the app's express
// prototypes, and a run through the door answered with everything the app's own way gives it.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import express from 'express';
import { expressMessages } from '../src/http/front-door.ts';
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
