// The OTLP/HTTP receiver (SPEC section 14, "Ingest"): real spans exported by the real OTLP exporters
// (protobuf and JSON, gzip) with Bearer and Api-Key; malformed, truncated, oversized and gzip-bomb
// bodies; partial_success; the span cap; org isolation; GET /v1/traces/ and /v1/traces/{id}/.
// Runs on PostgreSQL too (TRIBUNAL_TEST_STORE=postgres).
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import zlib from 'node:zlib';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { exportSpans, ExportResultCode, recordSpans } from './helpers/otel-export.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { decodeExportRequest, encodeExportRequest } from '../src/traces/proto.ts';
import protobuf from 'protobufjs';

async function postRaw(server: TestServer, key: string | undefined, body: Buffer | string, headers: Record<string, string>) {
  const res = await fetch(`${server.url}/otel/v1/traces`, {
    method: 'POST',
    headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers },
    body: typeof body === 'string' ? body : new Uint8Array(body),
  });
  const buf = Buffer.from(await res.arrayBuffer());
  return { status: res.status, type: res.headers.get('content-type') ?? '', buf };
}

/** The google.rpc.Status an OTLP error answer carries (protobuf). */
function statusOf(buf: Buffer): { code: number; message: string } {
  const t = new protobuf.Type('Status').add(new protobuf.Field('code', 1, 'int32')).add(new protobuf.Field('message', 2, 'string'));
  new protobuf.Root().add(t);
  return t.toObject(t.decode(buf)) as { code: number; message: string };
}

const jsonSpan = (traceId: string, spanId: string, name = 'op') => ({
  traceId,
  spanId,
  name,
  kind: 1,
  startTimeUnixNano: String(BigInt(Date.now()) * 1_000_000n),
  endTimeUnixNano: String(BigInt(Date.now() + 5) * 1_000_000n),
  attributes: [{ key: 'k', value: { stringValue: 'v' } }],
});
const jsonBody = (spans: unknown[], service = 'svc-json') => ({
  resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: service } }] }, scopeSpans: [{ scope: { name: 's' }, spans }] }],
});

describe('OTLP receiver', () => {
  let server: TestServer;
  let key: string;
  let otherKey: string;

  before(async () => {
    server = await startTestServer({ TRIBUNAL_OTLP_MAX_BODY: '64kb', TRIBUNAL_OTLP_MAX_DECOMPRESSED: '256kb' });
    key = (await server.demoUser()).api_key;
    otherKey = (await server.demoUser()).api_key;
  });
  after(() => server.close());

  const count = async (k = key) => (await server.request('GET', '/v1/traces/?limit=200', { key: k })).body.results.reduce((n: number, t: any) => n + t.span_count, 0);

  it('takes a span tree from the protobuf exporter and shows it as a tree', async () => {
    const spans = await recordSpans('checkout', (tracer) => {
      const root = tracer.startSpan('POST /order', { kind: SpanKind.SERVER });
      const attributes = { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o', tokens: 12 };
      const child = tracer.startSpan('chat gpt-4o', { kind: SpanKind.CLIENT, attributes }, trace.setSpan(ROOT_CONTEXT, root));
      child.addEvent('retry', { attempt: 2 });
      child.setStatus({ code: SpanStatusCode.ERROR, message: 'rate limited' });
      child.end();
      root.end();
    });
    const result = await exportSpans({ url: server.url, key, encoding: 'protobuf' }, spans);
    assert.equal(result.code, ExportResultCode.SUCCESS, String(result.error));
    const traceId = spans[0].spanContext().traceId;

    const list = await server.request('GET', '/v1/traces/?service=checkout', { key });
    assert.equal(list.status, 200);
    const summary = list.body.results.find((t: any) => t.trace_id === traceId);
    assert.ok(summary, 'the trace is listed');
    assert.deepEqual([summary.root_span_name, summary.service_name, summary.span_count, summary.error_count], ['POST /order', 'checkout', 2, 1]);

    const got = await server.request('GET', `/v1/traces/${traceId}/`, { key });
    assert.equal(got.status, 200);
    assert.deepEqual(
      got.body.spans.map((s: any) => [s.name, s.depth, s.kind]),
      [
        ['POST /order', 0, 'server'],
        ['chat gpt-4o', 1, 'client'],
      ],
    );
    const child = got.body.spans[1];
    assert.equal(child.parent_span_id, got.body.spans[0].span_id);
    assert.deepEqual(child.attributes, { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o', tokens: 12 });
    assert.deepEqual(child.status, { code: 'error', message: 'rate limited' });
    assert.deepEqual(
      child.events.map((e: any) => [e.name, e.attributes]),
      [['retry', { attempt: 2 }]],
    );
    assert.deepEqual(child.scope, { name: 'tribunal-test', version: '1.0.0' });
  });

  it('takes JSON and gzip bodies, with Bearer or Api-Key, and a retried batch is stored once', async () => {
    const before = await count();
    for (const [encoding, gzip, scheme] of [
      ['json', false, 'Api-Key'],
      ['json', true, 'Bearer'],
      ['protobuf', true, 'Api-Key'],
    ] as const) {
      const spans = await recordSpans(`svc-${encoding}-${gzip}`, (tracer) => tracer.startSpan('work', { attributes: { encoding } }).end());
      const opts = { url: server.url, key, encoding, gzip, scheme };
      assert.equal((await exportSpans(opts, spans)).code, ExportResultCode.SUCCESS);
      assert.equal((await exportSpans(opts, spans)).code, ExportResultCode.SUCCESS, 'the retry is accepted');
    }
    assert.equal(await count(), before + 3, 'three spans, each stored once');
    const byAttr = await server.request('GET', '/v1/traces/?attribute=encoding%3Djson', { key });
    assert.equal(byAttr.body.results.length, 2);
    const byName = await server.request('GET', '/v1/traces/?span_name=work&service=svc-protobuf-true', { key });
    assert.equal(byName.body.results.length, 1);
  });

  it('answers a wholly accepted protobuf export with an empty ExportTraceServiceResponse (Content-Length 0), twice on one connection', async () => {
    const body = (n: number) =>
      Buffer.from(
        encodeExportRequest({
          resource_spans: [
            {
              scope_spans: [
                { spans: [{ trace_id: Buffer.alloc(16, 40 + n), span_id: Buffer.alloc(8, 40 + n), name: 'x', start_time_unix_nano: String(BigInt(Date.now()) * 1_000_000n) }] },
              ],
            },
          ],
        }),
      );
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const sockets = new Set<unknown>();
      for (const n of [1, 2]) {
        const answer = await new Promise<{ status: number; headers: http.IncomingHttpHeaders; bytes: number; socket: unknown }>((resolve, reject) => {
          const req = http.request(
            `${server.url}/otel/v1/traces`,
            { method: 'POST', agent, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/x-protobuf' } },
            (res) => {
              let bytes = 0;
              res.on('data', (c: Buffer) => (bytes += c.length));
              res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, bytes, socket: req.socket }));
            },
          );
          req.on('error', reject);
          req.end(body(n));
        });
        assert.equal(answer.status, 200);
        assert.equal(answer.headers['content-type'], 'application/x-protobuf');
        assert.equal(answer.headers['content-length'], '0');
        assert.equal(answer.headers['transfer-encoding'], undefined);
        assert.equal(answer.bytes, 0);
        sockets.add(answer.socket);
      }
      assert.equal(sockets.size, 1, 'the connection is kept for the next export');
    } finally {
      agent.destroy();
    }
  });

  it('answers a malformed, truncated or shapeless body with 400 naming the problem, and stores nothing', async () => {
    const before = await count();
    const garbage = await postRaw(server, key, Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 1, 2, 3]), { 'content-type': 'application/x-protobuf' });
    assert.equal(garbage.status, 400);
    assert.equal(garbage.type, 'application/x-protobuf');
    assert.match(statusOf(garbage.buf).message, /not a valid OTLP ExportTraceServiceRequest in protobuf/);

    const good = Buffer.from(
      encodeExportRequest({
        resource_spans: [{ scope_spans: [{ spans: [{ trace_id: Buffer.alloc(16, 7), span_id: Buffer.alloc(8, 7), name: 'x', start_time_unix_nano: '1' }] }] }],
      }),
    );
    assert.ok(decodeExportRequest(good));
    const truncated = await postRaw(server, key, good.subarray(0, good.length - 4), { 'content-type': 'application/x-protobuf' });
    assert.equal(truncated.status, 400);
    assert.match(statusOf(truncated.buf).message, /protobuf/);

    const badJson = await postRaw(server, key, '{"resourceSpans": [', { 'content-type': 'application/json' });
    assert.equal(badJson.status, 400);
    assert.match(JSON.parse(badJson.buf.toString()).message, /not valid JSON/);
    const shapeless = await postRaw(server, key, '{"resourceSpans": {"x": 1}}', { 'content-type': 'application/json' });
    assert.equal(shapeless.status, 400);
    assert.match(JSON.parse(shapeless.buf.toString()).message, /resourceSpans must be an array/);
    const brokenGzip = await postRaw(server, key, Buffer.from('not gzip at all'), { 'content-type': 'application/json', 'content-encoding': 'gzip' });
    assert.equal(brokenGzip.status, 400);
    assert.match(JSON.parse(brokenGzip.buf.toString()).message, /not valid gzip/);
    const wrongType = await postRaw(server, key, 'hello', { 'content-type': 'text/plain' });
    assert.equal(wrongType.status, 415);
    assert.equal(await count(), before);
  });

  it('refuses oversized bodies and gzip bombs before decoding', async () => {
    const before = await count();
    const big = Buffer.alloc(100 * 1024, 1);
    const oversized = await postRaw(server, key, big, { 'content-type': 'application/x-protobuf' });
    assert.equal(oversized.status, 413);
    assert.match(statusOf(oversized.buf).message, /TRIBUNAL_OTLP_MAX_BODY/);
    // 10 MB of spaces squeeze into ~10 KB of gzip: under the sent limit, over the decompressed one.
    const bomb = zlib.gzipSync(Buffer.alloc(10 * 1024 * 1024, 0x20));
    assert.ok(bomb.length < 64 * 1024);
    const res = await postRaw(server, key, bomb, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
    assert.equal(res.status, 413);
    assert.match(JSON.parse(res.buf.toString()).message, /decompressed body is over the limit of 262144 bytes/);
    assert.equal(await count(), before);
  });

  it('refuses callers without a valid key', async () => {
    const body = JSON.stringify(jsonBody([jsonSpan('1'.repeat(32), '2'.repeat(16))]));
    assert.equal((await postRaw(server, undefined, body, { 'content-type': 'application/json' })).status, 401);
    assert.equal((await postRaw(server, 'trb_0000000000000000_' + 'x'.repeat(43), body, { 'content-type': 'application/json' })).status, 401);
  });

  it('answers partial_success for spans it cannot keep, and keeps the rest', async () => {
    const res = await postRaw(
      server,
      key,
      JSON.stringify(jsonBody([jsonSpan('ab'.repeat(16), 'cd'.repeat(8)), jsonSpan('00'.repeat(16), '11'.repeat(8)), { ...jsonSpan('ef'.repeat(16), '12'.repeat(8)), name: '' }])),
      {
        'content-type': 'application/json',
      },
    );
    assert.equal(res.status, 200);
    const body = JSON.parse(res.buf.toString());
    assert.equal(body.partialSuccess.rejectedSpans, 2);
    assert.match(body.partialSuccess.errorMessage, /trace_id must be 16 bytes/);
    assert.match(body.partialSuccess.errorMessage, /needs a name/);
    assert.equal((await server.request('GET', `/v1/traces/${'ab'.repeat(16)}/`, { key })).status, 200);
  });

  it("never shows one organization's traces to another", async () => {
    const traceId = 'ab'.repeat(16);
    assert.equal((await server.request('GET', `/v1/traces/${traceId}/`, { key: otherKey })).status, 404);
    assert.equal((await server.request('GET', '/v1/traces/', { key: otherKey })).body.results.length, 0);
    assert.equal((await server.request('GET', '/v1/traces/not-hex/', { key })).status, 400);
  });
});

describe('OTLP receiver span cap', () => {
  it('refuses spans beyond TRIBUNAL_TRACE_MAX_SPANS with partial_success', async () => {
    const server = await startTestServer({ TRIBUNAL_TRACE_MAX_SPANS: '3' });
    try {
      const { api_key } = await server.demoUser();
      const spans = ['01', '02', '03', '04', '05'].map((n) => jsonSpan('9a'.repeat(16), n.repeat(8)));
      const res = await postRaw(server, api_key, JSON.stringify(jsonBody(spans)), { 'content-type': 'application/json' });
      assert.equal(res.status, 200);
      const body = JSON.parse(res.buf.toString());
      assert.equal(body.partialSuccess.rejectedSpans, 2);
      assert.match(body.partialSuccess.errorMessage, /maximum of 3 spans/);
      const trace = await server.request('GET', `/v1/traces/${'9a'.repeat(16)}/`, { key: api_key });
      assert.equal(trace.body.spans.length, 3);
    } finally {
      await server.close();
    }
  });
});
