// The plain JSON body read directly (src/http/plain-json.ts) against body-parser's way: the same
// bytes give the same req.body or the same problem, whichever way the body is read.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import express from 'express';
import { jsonBody } from '../src/http/body.ts';
import { takesPlainJson } from '../src/http/plain-json.ts';
import { requestContext } from '../src/observability/request-context.ts';

const LIMIT = 200;
let server: http.Server;
let port: number;
/** The async context each handler ran in, and whether each request's body was read directly. */
const contexts: Array<string | undefined> = [];
const direct: boolean[] = [];

before(async () => {
  const app = express();
  // Enters an async context when asked, to see that the body's reader continues inside it.
  app.use((req, _res, next) => {
    direct.push(takesPlainJson(req));
    const id = req.headers['x-context'];
    if (typeof id === 'string') requestContext.run({ requestId: id, span: undefined as never }, next);
    else next();
  });
  app.post('/echo', ...jsonBody(LIMIT), (req, res) => {
    contexts.push(requestContext.getStore()?.requestId);
    res.json({ body: req.body ?? null });
  });
  server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  port = (server.address() as AddressInfo).port;
});
after(() => server.close());

/** Sends raw bytes with a Content-Type; answers status and parsed JSON body. */
function send(bytes: Buffer, contentType: string, headers: Record<string, string> = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, path: '/echo', method: 'POST', headers: { 'content-type': contentType, 'content-length': String(bytes.length), ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
      },
    );
    req.on('error', reject);
    req.end(bytes);
  });
}

// 'application/json' is read directly; the same type with the charset spelled in capitals goes
// through body-parser (only the exact known spellings are taken directly).
const DIRECT = 'application/json';
const GENERAL = 'application/json; charset=UTF-8';

const cases: Array<[string, Buffer]> = [
  ['an object', Buffer.from('{"response":"ok","n":[1,2,{"x":null}]}')],
  ['a byte order mark first', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"response":"bom"}')])],
  ['an empty body', Buffer.alloc(0)],
  ['a bare value (strict: false)', Buffer.from('"just a string"')],
  ['invalid UTF-8 inside a string', Buffer.concat([Buffer.from('{"response":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')])],
  ['a key named __proto__', Buffer.from('{"__proto__":{"polluted":true},"response":"x"}')],
  ['broken JSON', Buffer.from('{"response":')],
  ['trailing garbage', Buffer.from('{"response":"x"} tail')],
];

for (const [name, bytes] of cases) {
  test(`${name}: read directly, the same answer as through body-parser`, async () => {
    direct.length = 0;
    const viaDirect = await send(bytes, DIRECT);
    const general = await send(bytes, GENERAL);
    assert.deepEqual(direct, [true, false]);
    // request_id differs per request; everything else of the answer is the same.
    delete viaDirect.body.request_id;
    delete general.body.request_id;
    assert.deepEqual(viaDirect, general);
    if (name === 'broken JSON') {
      assert.equal(viaDirect.status, 400);
      assert.match(String(viaDirect.body.detail), /not valid JSON/);
    }
    if (name === 'an object') assert.deepEqual(viaDirect.body.body, { response: 'ok', n: [1, 2, { x: null }] });
    if (name === 'a byte order mark first') assert.deepEqual(viaDirect.body.body, { response: 'bom' });
  });
}

test('a declared length over the limit is refused before the body is read, either way', async () => {
  const big = Buffer.from(JSON.stringify({ response: 'x'.repeat(LIMIT) }));
  assert.equal((await send(big, DIRECT)).status, 413);
  assert.equal((await send(big, GENERAL)).status, 413);
});

test('the handler after a directly read body runs in the async context the request entered', async () => {
  contexts.length = 0;
  await send(Buffer.from('{"response":"ctx"}'), DIRECT, { 'x-context': 'ctx-1' });
  await send(Buffer.from('{"response":"none"}'), DIRECT);
  assert.deepEqual(contexts, ['ctx-1', undefined]);
});

test('a client that goes away mid-body leaves the server answering the next request', async () => {
  await new Promise<void>((resolve) => {
    const req = http.request({ host: '127.0.0.1', port, path: '/echo', method: 'POST', headers: { 'content-type': DIRECT, 'content-length': '100' } });
    req.on('error', () => resolve());
    req.write('{"response":"');
    setTimeout(() => {
      req.destroy();
      resolve();
    }, 50);
  });
  const after = await send(Buffer.from('{"response":"still here"}'), DIRECT);
  assert.deepEqual(after, { status: 200, body: { body: { response: 'still here' } } });
});
