// The CLI's lean HTTP/1.1 client (src/cli/http1.ts) against a raw TCP server that writes exact
// bytes: each way an answer can be framed, split across reads, and each way an exchange can fail.
// The CLI's own tests (cli-*.test.ts) drive it end to end against the real server.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, test } from 'node:test';
import { type Http1Answer, Http1Pool } from '../src/cli/http1.ts';

/** A parse that waits forever would hang the suite: each test fails after this instead. */
const LIMIT = { timeout: 10_000 };
const closers: Array<() => void> = [];
after(() => {
  for (const close of closers) close();
});

/** A server whose handler gets each request's raw text and the socket to answer on. */
async function rawServer(handler: (socket: net.Socket, request: string) => void) {
  const sockets = new Set<net.Socket>();
  let connections = 0;
  const server = net.createServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    let text = '';
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) return;
      const length = Number(/content-length: (\d+)/i.exec(text.slice(0, end))?.[1] ?? 0);
      if (text.length < end + 4 + length) return;
      const request = text.slice(0, end + 4 + length);
      text = text.slice(end + 4 + length);
      handler(socket, request);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  closers.push(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
  return { pool: new Http1Pool(new URL(`http://127.0.0.1:${port}`)), port, connections: () => connections };
}

function send(pool: Http1Pool, body?: string, headers: Record<string, string> = {}) {
  return new Promise<Http1Answer>((resolve, reject) => {
    pool.request('POST', '/v1/x/', { 'content-type': 'application/json', ...headers }, body, (err, answer) => (err ? reject(err) : resolve(answer!)));
  });
}

/** Writes the pieces one by one, a few milliseconds apart, so the client reads them apart. */
async function trickle(socket: net.Socket, pieces: Array<string | Buffer>) {
  for (const piece of pieces) {
    socket.write(piece);
    await new Promise((r) => setTimeout(r, 5));
  }
}

test('a Content-Length answer, its headers and its text; the connection is kept for the next request', LIMIT, async () => {
  const requests: string[] = [];
  const { pool, port, connections } = await rawServer((socket, request) => {
    requests.push(request);
    const body = JSON.stringify({ ok: true, n: requests.length });
    socket.write(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Twice: a\r\nx-twice: b\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
  });
  const first = await send(pool, '{"a":1}', { authorization: 'Api-Key k' });
  assert.equal(first.status, 200);
  assert.deepEqual(JSON.parse(first.text), { ok: true, n: 1 });
  assert.equal(first.headers['content-type'], 'application/json');
  assert.equal(first.headers['x-twice'], 'a, b');
  const second = await send(pool, '{"a":2}');
  assert.deepEqual(JSON.parse(second.text), { ok: true, n: 2 });
  assert.equal(connections(), 1, 'one kept-alive connection carried both');
  assert.match(requests[0]!, new RegExp(`^POST /v1/x/ HTTP/1\\.1\r\nhost: 127\\.0\\.0\\.1:${port}\r\n`));
  assert.match(requests[0]!, /\r\nauthorization: Api-Key k\r\n/);
  assert.ok(requests[0]!.endsWith('\r\n\r\n{"a":1}'), 'the body follows the head whole');
});

test('a chunked answer read in pieces, a character split between them, with an extension and trailers', LIMIT, async () => {
  const text = '{"justification":"déjà vu ✓"}';
  const bytes = Buffer.from(text, 'utf8');
  const split = bytes.indexOf(Buffer.from('✓')) + 1; // in the middle of a three-byte character
  const { pool } = await rawServer((socket) => {
    const a = bytes.subarray(0, split);
    const b = bytes.subarray(split);
    void trickle(socket, [
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n',
      '\r\n',
      `${a.length.toString(16)};note=1\r\n`,
      a,
      `\r\n${b.length.toString(16)}\r\n`,
      b,
      '\r\n0\r\nX-Checksum: 1\r\n',
      '\r\n',
    ]);
  });
  const answer = await send(pool);
  assert.equal(answer.text, text);
});

test('an interim 100 answer is skipped; 204 has no body; the connection is kept', LIMIT, async () => {
  let n = 0;
  const { pool, connections } = await rawServer((socket) => {
    if (n++ === 0) socket.write('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\n{}');
    else socket.write('HTTP/1.1 204 No Content\r\n\r\n');
  });
  const created = await send(pool, '{}');
  assert.equal(created.status, 201);
  assert.equal(created.text, '{}');
  const empty = await send(pool);
  assert.equal(empty.status, 204);
  assert.equal(empty.text, '');
  assert.equal(connections(), 1);
});

test('an answer framed by the connection end, or with Connection: close, is read whole and its connection not reused', LIMIT, async () => {
  let n = 0;
  const { pool, connections } = await rawServer((socket) => {
    if (n++ === 0) void trickle(socket, ['HTTP/1.1 200 OK\r\n\r\n{"par', 'tial":false}']).then(() => socket.end());
    else socket.write('HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n[]');
  });
  assert.equal((await send(pool)).text, '{"partial":false}');
  assert.equal((await send(pool)).text, '[]');
  await send(pool).catch(() => undefined); // the third needs a third connection
  assert.equal(connections(), 3);
});

test('an idle connection the server closed is not reused: the next request opens a new one', LIMIT, async () => {
  const { pool, connections } = await rawServer((socket) => {
    socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
    setTimeout(() => socket.end(), 5);
  });
  assert.equal((await send(pool)).text, 'ok');
  await new Promise((r) => setTimeout(r, 50));
  assert.equal((await send(pool)).text, 'ok');
  assert.equal(connections(), 2);
});

test('failures: a connection closed mid-answer, a refused connection, a non-HTTP answer, a header that would split the request', LIMIT, async () => {
  const { pool } = await rawServer((socket) => socket.end('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc'));
  await assert.rejects(send(pool), { code: 'ECONNRESET' });

  const closed = net.createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as net.AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));
  await assert.rejects(send(new Http1Pool(new URL(`http://127.0.0.1:${port}`))), { code: 'ECONNREFUSED' });

  const garbage = await rawServer((socket) => socket.write('SSH-2.0-OpenSSH\r\n\r\n'));
  await assert.rejects(send(garbage.pool), { code: 'HPE_INVALID_CONSTANT' });

  const bad = await rawServer((socket) => socket.write('HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n'));
  await assert.rejects(send(bad.pool), { code: 'HPE_INVALID_CONTENT_LENGTH' });

  assert.throws(() => pool.request('GET', '/', { authorization: 'Api-Key a\r\nx-injected: 1' }, undefined, () => undefined), { code: 'ERR_INVALID_CHAR' });
  assert.throws(() => pool.request('GET', '/a b HTTP/1.1\r\nx: 1', {}, undefined, () => undefined), { code: 'ERR_UNESCAPED_CHARACTERS' });
});

test('destroy ends an exchange with its error, once, and closes its connection', LIMIT, async () => {
  let served: net.Socket | undefined;
  const { pool } = await rawServer((socket) => (served = socket)); // never answers
  const calls: Array<Error | undefined> = [];
  const exchange = pool.request('POST', '/', {}, '{}', (err) => calls.push(err));
  while (!served) await new Promise((r) => setTimeout(r, 2));
  exchange.destroy(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT_TOTAL' }));
  await new Promise((resolve) => served!.once('close', resolve));
  assert.equal(calls.length, 1);
  assert.equal((calls[0] as NodeJS.ErrnoException).code, 'ETIMEDOUT_TOTAL');
});

test('the ApiClient sends to http:// through the lean client, and to a URL with a user name through node:http', LIMIT, async () => {
  const seen: string[] = [];
  const { port } = await rawServer((socket, request) => {
    seen.push(request);
    socket.write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{"ok":true}');
  });
  const { ApiClient } = await import('../src/cli/client.ts');
  for (const url of [`http://127.0.0.1:${port}`, `http://someone@127.0.0.1:${port}`]) {
    const client = new ApiClient({ url, apiKey: 'tk_test', timeoutMs: 5000 });
    assert.deepEqual(await client.post('/v1/x/', { a: 1 }), { ok: true });
  }
  assert.equal(seen.length, 2);
  assert.match(seen[0]!, /^POST \/v1\/x\/ HTTP\/1\.1\r\nhost: /, 'the lean client writes its own head');
  assert.match(seen[1]!, /\r\nHost: 127\.0\.0\.1/, "node:http's head");
  for (const request of seen) assert.ok(request.endsWith('\r\n\r\n{"a":1}') && /\r\nauthorization: Api-Key tk_test\r\n/.test(request));
});

test('an API key with a control character is refused before any request, naming where it came from', LIMIT, async () => {
  const { resolveClientOptions } = await import('../src/cli/client.ts');
  assert.throws(
    () => resolveClientOptions({}, { TRIBUNAL_API_KEY: 'tk_abc\ndef' }),
    (err: Error & { exitCode?: number }) => /^TRIBUNAL_API_KEY holds a control character/.test(err.message) && err.exitCode === 2,
  );
  assert.throws(() => resolveClientOptions({ 'api-key': 'tk_\u0001' }, {}), { message: /^--api-key holds a control character/ });
  assert.equal(resolveClientOptions({}, { TRIBUNAL_API_KEY: ' tk_abc\n' }).apiKey, 'tk_abc', 'a trailing newline is trimmed, as before');
});

test('bytes past the end of an answer (chunked or sized) retire its connection', LIMIT, async () => {
  let n = 0;
  const { pool, connections } = await rawServer((socket) => {
    const stray = 'HTTP/1.1 200 OK\r\n';
    if (n++ % 2 === 0) socket.write(`HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n${stray}`);
    else socket.write(`HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok${stray}`);
  });
  for (let i = 0; i < 3; i++) assert.equal((await send(pool)).text, 'ok');
  assert.equal(connections(), 3, 'no connection carried a second request');
});
