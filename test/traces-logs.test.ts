// The OTLP/HTTP logs receiver (POST /otel/v1/logs) and the log events it keeps (issue 28): GenAI
// events sent as log records by the real OTLP logs exporters (protobuf and JSON, gzip, Bearer and
// Api-Key) become events of their span, whether the span arrives before or after them; malformed,
// truncated, oversized and gzip-bomb bodies; partial_success; the cap; org isolation; the store's
// contract (dedupe, cap, retention, purge). Runs on PostgreSQL too (TRIBUNAL_TEST_STORE=postgres).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import zlib from 'node:zlib';
import { SeverityNumber } from '@opentelemetry/api-logs';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { InMemoryLogRecordExporter, LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { trace, context } from '@opentelemetry/api';
import protobuf from 'protobufjs';
import { exportLogs, exportSpans, ExportResultCode, recordSpans } from './helpers/otel-export.ts';
import { openTestStore, startTestServer, tempDir, type TestServer } from './helpers/server.ts';
import { traceStoreOf } from '../src/traces/store.ts';
import type { SpanLogEvent } from '../src/traces/types.ts';

const METRICS_TOKEN = 'metrics-token-for-tests-0002';
const nowNanos = () => String(BigInt(Date.now()) * 1_000_000n);

async function postLogs(server: TestServer, key: string | undefined, body: Buffer | string, headers: Record<string, string>) {
  const res = await fetch(`${server.url}/otel/v1/logs`, {
    method: 'POST',
    headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers },
    body: typeof body === 'string' ? body : new Uint8Array(body),
  });
  const buf = Buffer.from(await res.arrayBuffer());
  return { status: res.status, type: res.headers.get('content-type') ?? '', buf };
}
const postJson = (server: TestServer, key: string, body: unknown) => postLogs(server, key, JSON.stringify(body), { 'content-type': 'application/json' });

function statusOf(buf: Buffer): { code: number; message: string } {
  const t = new protobuf.Type('Status').add(new protobuf.Field('code', 1, 'int32')).add(new protobuf.Field('message', 2, 'string'));
  new protobuf.Root().add(t);
  return t.toObject(t.decode(buf)) as { code: number; message: string };
}

const PROTO_DIR = fileURLToPath(new URL('../src/traces/proto/', import.meta.url));
let logsRoot: protobuf.Root | undefined;
/** A message type of the vendored logs service definitions, loaded with the field names of the .proto. */
function logsType(name: string): protobuf.Type {
  if (!logsRoot) {
    logsRoot = new protobuf.Root();
    logsRoot.resolvePath = (_origin, target) => path.join(PROTO_DIR, target);
    logsRoot.loadSync('opentelemetry/proto/collector/logs/v1/logs_service.proto', { keepCase: true });
  }
  return logsRoot.lookupType(`opentelemetry.proto.collector.logs.v1.${name}`);
}

/** An OTLP/JSON log record as instrumentation-openai 0.20 sends one (event name as an attribute, content in the body). */
const jsonRecord = (traceId: string, spanId: string, name: string, body: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  timeUnixNano: nowNanos(),
  severityNumber: 9,
  traceId,
  spanId,
  attributes: [
    { key: 'event.name', value: { stringValue: name } },
    { key: 'gen_ai.system', value: { stringValue: 'openai' } },
  ],
  body: { kvlistValue: { values: Object.entries(body).map(([key, v]) => ({ key, value: typeof v === 'string' ? { stringValue: v } : v })) } },
  ...extra,
});
const jsonLogs = (records: unknown[]) => ({
  resourceLogs: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'app' } }] }, scopeLogs: [{ scope: { name: 's' }, logRecords: records }] }],
});
const chatSpan = (traceId: string, spanId: string) => ({
  resourceSpans: [
    {
      resource: { attributes: [{ key: 'service.name', value: { stringValue: 'app' } }] },
      scopeSpans: [
        {
          scope: { name: '@opentelemetry/instrumentation-openai' },
          spans: [
            {
              traceId,
              spanId,
              name: 'chat gpt-4o-mini',
              kind: 3,
              startTimeUnixNano: nowNanos(),
              endTimeUnixNano: nowNanos(),
              attributes: [
                { key: 'gen_ai.operation.name', value: { stringValue: 'chat' } },
                { key: 'gen_ai.request.model', value: { stringValue: 'gpt-4o-mini' } },
              ],
            },
          ],
        },
      ],
    },
  ],
});
const exchange = (traceId: string, spanId: string, question: string, answer: string) => [
  jsonRecord(traceId, spanId, 'gen_ai.user.message', { content: question }),
  jsonRecord(traceId, spanId, 'gen_ai.choice', {
    index: { intValue: 0 },
    finish_reason: 'stop',
    message: { kvlistValue: { values: [{ key: 'content', value: { stringValue: answer } }] } },
  }),
];

describe('OTLP logs receiver', () => {
  let server: TestServer;
  let key: string;
  let otherKey: string;
  let n = 0;
  const ids = () => {
    n++;
    return { t: `${'ab'.repeat(12)}${n.toString(16).padStart(8, '0')}`, s: `${'cd'.repeat(4)}${n.toString(16).padStart(8, '0')}` };
  };
  const spanOf = async (traceId: string, spanId: string, k = key) => {
    const res = await server.request('GET', `/v1/traces/${traceId}/`, { key: k });
    return res.status === 200 ? (res.body.spans as any[]).find((s) => s.span_id === spanId) : null;
  };
  const sendSpan = async (traceId: string, spanId: string, k = key) => {
    const res = await fetch(`${server.url}/otel/v1/traces`, {
      method: 'POST',
      headers: { authorization: `Bearer ${k}`, 'content-type': 'application/json' },
      body: JSON.stringify(chatSpan(traceId, spanId)),
    });
    assert.equal(res.status, 200);
  };

  before(async () => {
    server = await startTestServer({ TRIBUNAL_OTLP_MAX_BODY: '64kb', TRIBUNAL_OTLP_MAX_DECOMPRESSED: '256kb', TRIBUNAL_METRICS_TOKEN: METRICS_TOKEN });
    key = (await server.demoUser()).api_key;
    otherKey = (await server.demoUser()).api_key;
  });
  after(() => server.close());

  it('makes GenAI log records events of their span, whether the span came first or last', async () => {
    // Span first, then its log records: appended to it.
    const a = ids();
    await sendSpan(a.t, a.s);
    assert.equal((await spanOf(a.t, a.s)).extracted, null, 'no content yet');
    const res = await postJson(server, key, jsonLogs(exchange(a.t, a.s, 'What is 2+2?', 'Four.')));
    assert.equal(res.status, 200);
    assert.deepEqual(JSON.parse(res.buf.toString()), {});
    const first = await spanOf(a.t, a.s);
    assert.deepEqual(
      first.events.map((e: any) => e.name),
      ['gen_ai.user.message', 'gen_ai.choice'],
    );
    assert.deepEqual(JSON.parse(first.events[0].attributes['event.body']), { content: 'What is 2+2?' });
    assert.equal(first.events[0].attributes['gen_ai.system'], 'openai');
    assert.deepEqual([first.extracted.request, first.extracted.response], ['What is 2+2?', 'Four.']);

    // Log records first (the event name in the record's event_name field), then the span: attached when it arrives.
    const b = ids();
    const early = exchange(b.t, b.s, 'Capital of France?', 'Paris.').map((r) => ({ ...r, eventName: r.attributes[0].value.stringValue, attributes: r.attributes.slice(1) }));
    assert.equal((await postJson(server, key, jsonLogs(early))).status, 200);
    assert.equal((await server.request('GET', `/v1/traces/${b.t}/`, { key })).status, 404, 'no span yet');
    await sendSpan(b.t, b.s);
    const second = await spanOf(b.t, b.s);
    assert.deepEqual([second.extracted.request, second.extracted.response], ['Capital of France?', 'Paris.']);
  });

  it('takes the real logs exporters (protobuf with gzip and Bearer, JSON with Api-Key); a retried batch is kept once', async () => {
    const memory = new InMemoryLogRecordExporter();
    const provider = new LoggerProvider({ resource: resourceFromAttributes({ 'service.name': 'real-logs' }), processors: [new SimpleLogRecordProcessor({ exporter: memory })] });
    const spans = await recordSpans('real-logs', (tracer) => {
      const span = tracer.startSpan('chat gpt-4o-mini', { attributes: { 'gen_ai.operation.name': 'chat' } });
      const ctx = trace.setSpan(context.active(), span);
      const logger = provider.getLogger('test');
      logger.emit({ context: ctx, severityNumber: SeverityNumber.INFO, eventName: 'gen_ai.system.message', body: { content: 'Be brief.' } });
      logger.emit({ context: ctx, severityNumber: SeverityNumber.INFO, eventName: 'gen_ai.user.message', body: { content: 'Sky colour?' } });
      logger.emit({ context: ctx, severityNumber: SeverityNumber.INFO, body: 'an ordinary log line: accepted, not kept' });
      logger.emit({ context: ctx, severityNumber: SeverityNumber.INFO, eventName: 'gen_ai.choice', body: { index: 0, finish_reason: 'stop', message: { content: 'Blue.' } } });
      span.end();
    });
    await provider.forceFlush();
    const records = memory.getFinishedLogRecords();
    assert.equal(records.length, 4);
    const proto = await exportLogs({ url: server.url, key, encoding: 'protobuf', gzip: true }, records.slice(0, 2));
    assert.equal(proto.code, ExportResultCode.SUCCESS, String(proto.error));
    const json = await exportLogs({ url: server.url, key, encoding: 'json', scheme: 'Api-Key' }, records.slice(2));
    assert.equal(json.code, ExportResultCode.SUCCESS, String(json.error));
    assert.equal((await exportLogs({ url: server.url, key, encoding: 'json' }, records.slice(2))).code, ExportResultCode.SUCCESS, 'a retry');
    assert.equal((await exportSpans({ url: server.url, key, encoding: 'protobuf' }, spans)).code, ExportResultCode.SUCCESS);
    const { traceId, spanId } = spans[0].spanContext();
    const s = await spanOf(traceId, spanId);
    assert.deepEqual(
      s.events.map((e: any) => e.name),
      ['gen_ai.system.message', 'gen_ai.user.message', 'gen_ai.choice'],
      'the ordinary log line is not kept and the retry added nothing',
    );
    assert.deepEqual([s.extracted.system_prompt, s.extracted.request, s.extracted.response], ['Be brief.', 'Sky colour?', 'Blue.']);
    await provider.shutdown();
  });

  it('answers a malformed, truncated or shapeless body with 400 naming the problem, and keeps nothing', async () => {
    const a = ids();
    await sendSpan(a.t, a.s);
    const garbage = await postLogs(server, key, Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 1, 2, 3]), { 'content-type': 'application/x-protobuf' });
    assert.equal(garbage.status, 400);
    assert.equal(garbage.type, 'application/x-protobuf');
    assert.match(statusOf(garbage.buf).message, /not a valid OTLP ExportLogsServiceRequest in protobuf/);
    const badJson = await postLogs(server, key, '{"resourceLogs": [', { 'content-type': 'application/json' });
    assert.equal(badJson.status, 400);
    assert.match(JSON.parse(badJson.buf.toString()).message, /not valid JSON/);
    const shapeless = await postLogs(server, key, '{"resourceLogs": [{"scopeLogs": {"x": 1}}]}', { 'content-type': 'application/json' });
    assert.equal(shapeless.status, 400);
    assert.match(JSON.parse(shapeless.buf.toString()).message, /ExportLogsServiceRequest: resource_logs\[0\]\.scopeLogs must be an array/);
    const brokenGzip = await postLogs(server, key, Buffer.from('not gzip'), { 'content-type': 'application/json', 'content-encoding': 'gzip' });
    assert.equal(brokenGzip.status, 400);
    assert.match(JSON.parse(brokenGzip.buf.toString()).message, /not valid gzip/);
    assert.equal((await postLogs(server, key, 'hello', { 'content-type': 'text/plain' })).status, 415);
    // A body cut short: a valid record's bytes, truncated.
    const records = exchange(a.t, a.s, 'q', 'a');
    const full = Buffer.from(JSON.stringify(jsonLogs(records)));
    const cut = await postLogs(server, key, full.subarray(0, full.length - 3), { 'content-type': 'application/json' });
    assert.equal(cut.status, 400);
    assert.deepEqual((await spanOf(a.t, a.s)).events, [], 'nothing kept from a refused body');
  });

  it('refuses oversized bodies, gzip bombs and callers without a key', async () => {
    const oversized = await postLogs(server, key, Buffer.alloc(100 * 1024, 1), { 'content-type': 'application/x-protobuf' });
    assert.equal(oversized.status, 413);
    assert.match(statusOf(oversized.buf).message, /TRIBUNAL_OTLP_MAX_BODY/);
    const bomb = zlib.gzipSync(Buffer.alloc(10 * 1024 * 1024, 0x20));
    const res = await postLogs(server, key, bomb, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
    assert.equal(res.status, 413);
    assert.match(JSON.parse(res.buf.toString()).message, /decompressed body is over the limit of 262144 bytes \(TRIBUNAL_OTLP_MAX_DECOMPRESSED\)/);
    assert.equal((await postLogs(server, undefined, '{}', { 'content-type': 'application/json' })).status, 401);
    assert.equal((await postLogs(server, 'tr_not_a_key', '{}', { 'content-type': 'application/json' })).status, 401);
  });

  it('answers partial_success for records it cannot keep and warns of GenAI records without a span', async () => {
    const a = ids();
    const old = String((BigInt(Date.now()) - 30n * 86_400_000n) * 1_000_000n);
    const body = jsonLogs([
      ...exchange(a.t, a.s, 'kept?', 'yes'),
      jsonRecord('zz', a.s, 'gen_ai.user.message', { content: 'bad trace id' }),
      jsonRecord(a.t, a.s, 'gen_ai.user.message', { content: 'too old' }, { timeUnixNano: old }),
      jsonRecord('', '', 'gen_ai.user.message', { content: 'no span' }),
      { timeUnixNano: nowNanos(), body: { stringValue: 'not a GenAI event' }, traceId: a.t, spanId: a.s },
    ]);
    const res = await postJson(server, key, body);
    assert.equal(res.status, 200);
    const p = JSON.parse(res.buf.toString()).partialSuccess;
    assert.equal(p.rejectedLogRecords, 2);
    assert.match(p.errorMessage, /1 log record\(s\): trace_id must be 16 bytes/);
    assert.match(p.errorMessage, /1 log record\(s\): the record is from before the retention period/);
    assert.match(p.errorMessage, /1 GenAI log record\(s\) have no trace_id\/span_id and were not kept/);
    await sendSpan(a.t, a.s);
    assert.deepEqual(
      (await spanOf(a.t, a.s)).events.map((e: any) => JSON.parse(e.attributes['event.body']).content ?? 'choice'),
      ['kept?', 'choice'],
    );
    // Not a GenAI event: accepted (OTLP), not kept, and nothing to warn of.
    const plain = await postJson(server, key, jsonLogs([{ timeUnixNano: nowNanos(), body: { stringValue: 'hello' } }]));
    assert.deepEqual([plain.status, JSON.parse(plain.buf.toString())], [200, {}]);
    // Each outcome is counted in /metrics (this instance).
    const metrics = await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
    for (const outcome of ['kept', 'rejected', 'ignored', 'unattached']) {
      const m = new RegExp(`tribunal_otlp_log_records_total\\{outcome="${outcome}"\\} (\\d+)`).exec(metrics);
      assert.ok(m && Number(m[1]) >= 1, `${outcome} is counted: ${m?.[0]}`);
    }
  });

  it('reads the newer GenAI form: one gen_ai.client.inference.operation.details record with the messages as attributes', async () => {
    const a = ids();
    const messages = (role: string, text: string) => ({
      arrayValue: {
        values: [
          {
            kvlistValue: {
              values: [
                { key: 'role', value: { stringValue: role } },
                {
                  key: 'parts',
                  value: {
                    arrayValue: {
                      values: [
                        {
                          kvlistValue: {
                            values: [
                              { key: 'type', value: { stringValue: 'text' } },
                              { key: 'content', value: { stringValue: text } },
                            ],
                          },
                        },
                      ],
                    },
                  },
                },
              ],
            },
          },
        ],
      },
    });
    const record = {
      timeUnixNano: nowNanos(),
      eventName: 'gen_ai.client.inference.operation.details',
      traceId: a.t,
      spanId: a.s,
      attributes: [
        { key: 'gen_ai.input.messages', value: messages('user', 'Two plus two?') },
        { key: 'gen_ai.output.messages', value: messages('assistant', 'Four.') },
      ],
    };
    assert.equal((await postJson(server, key, jsonLogs([record]))).status, 200);
    await sendSpan(a.t, a.s);
    const s = await spanOf(a.t, a.s);
    assert.deepEqual([s.extracted.source, s.extracted.request, s.extracted.response], ['gen_ai', 'Two plus two?', 'Four.']);
  });

  it("never attaches one organization's log records to another's span", async () => {
    const a = ids();
    await sendSpan(a.t, a.s);
    assert.equal((await postJson(server, otherKey, jsonLogs(exchange(a.t, a.s, 'intruder', 'x')))).status, 200);
    assert.deepEqual((await spanOf(a.t, a.s)).events, []);
    assert.equal(await spanOf(a.t, a.s, otherKey), null);
  });

  it('refuses records beyond TRIBUNAL_TRACE_MAX_LOG_RECORDS with partial_success', async () => {
    const small = await startTestServer({ TRIBUNAL_TRACE_MAX_LOG_RECORDS: '3' });
    try {
      const k = (await small.demoUser()).api_key;
      const a = ids();
      const records = [...exchange(a.t, a.s, 'one', 'two'), ...exchange(a.t, a.s, 'three', 'four')];
      const res = await postLogs(small, k, JSON.stringify(jsonLogs(records)), { 'content-type': 'application/json' });
      assert.equal(res.status, 200);
      const p = JSON.parse(res.buf.toString()).partialSuccess;
      assert.equal(p.rejectedLogRecords, 1);
      assert.match(p.errorMessage, /maximum of 3 GenAI log records \(TRIBUNAL_TRACE_MAX_LOG_RECORDS\)/);
      // In protobuf, the answer is an ExportLogsServiceResponse with partial_success.
      const b = ids();
      const request = logsType('ExportLogsServiceRequest');
      const body = request
        .encode(
          request.fromObject({
            resource_logs: [
              {
                scope_logs: [
                  { log_records: [{ time_unix_nano: nowNanos(), event_name: 'gen_ai.user.message', trace_id: Buffer.from(b.t, 'hex'), span_id: Buffer.from(b.s, 'hex') }] },
                ],
              },
            ],
          }),
        )
        .finish();
      const proto = await postLogs(small, k, Buffer.from(body), { 'content-type': 'application/x-protobuf' });
      assert.equal(proto.status, 200);
      const answer = logsType('ExportLogsServiceResponse').toObject(logsType('ExportLogsServiceResponse').decode(proto.buf), { longs: Number }) as any;
      assert.equal(answer.partial_success.rejected_log_records, 1);
      assert.match(answer.partial_success.error_message, /TRIBUNAL_TRACE_MAX_LOG_RECORDS/);
    } finally {
      await small.close();
    }
  });
});

describe('log event store', () => {
  const ev = (t: string, s: string, at: number, content: string, seq = 0, received = Date.now()): SpanLogEvent => ({
    trace_id: t,
    span_id: s,
    time_unix_nano: String(BigInt(at) * 1_000_000n),
    received_at: new Date(received).toISOString(),
    seq,
    event: { name: 'gen_ai.user.message', time: new Date(at).toISOString(), attributes: { 'event.body': JSON.stringify({ content }) } },
  });

  it('keeps events per organization, skips a retry, holds the cap, prunes and purges', async () => {
    const dir = tempDir();
    const store = await openTestStore(dir);
    try {
      const ts = await traceStoreOf(store);
      const t = 'ef'.repeat(16);
      const s = '12'.repeat(8);
      const now = Date.now();
      const first = await ts.insertLogEvents('org_logs_a', [ev(t, s, now, 'a', 0), ev(t, s, now, 'b', 1), ev(t, s, now - 10 * 86_400_000, 'old')], 4);
      assert.deepEqual(first, { inserted: 3, duplicates: 0, refused: 0 });
      const again = await ts.insertLogEvents('org_logs_a', [ev(t, s, now, 'a'), ev(t, s, now, 'c', 0, now + 5), ev(t, s, now, 'd', 1, now + 5)], 4);
      assert.deepEqual(again, { inserted: 1, duplicates: 1, refused: 1 });
      assert.equal(await ts.countLogEvents('org_logs_a'), 4);
      const start = new Date(now - 1000).toISOString();
      const span = {
        trace_id: t,
        span_id: s,
        parent_span_id: null,
        name: 'chat',
        kind: 'client' as const,
        service_name: 'svc',
        start_time: start,
        end_time: start,
        start_time_unix_nano: String(BigInt(now - 1000) * 1_000_000n),
        end_time_unix_nano: String(BigInt(now - 1000) * 1_000_000n),
        status: { code: 'unset' as const, message: null },
        attributes: { 'gen_ai.operation.name': 'chat' },
        resource_attributes: {},
        events: [],
        scope: { name: null, version: null },
        received_at: new Date().toISOString(),
      };
      await ts.insertSpans('org_logs_a', [span], 10);
      await ts.insertSpans('org_logs_b', [span], 10);
      const read = await ts.getSpan('org_logs_a', t, s);
      assert.deepEqual(
        read?.events.map((e) => JSON.parse(e.attributes['event.body'] as string).content),
        ['old', 'a', 'b', 'c'],
        'in time order; one instant in the order sent',
      );
      assert.deepEqual((await ts.getSpan('org_logs_b', t, s))?.events, [], "another organization's events stay its own");
      assert.equal((await ts.getTrace('org_logs_a', t))[0].events.length, 4);
      assert.equal((await ts.listSpans('org_logs_a', { limit: 10 }))[0].events.length, 4);
      await ts.prune(new Date(now - 86_400_000).toISOString());
      assert.equal(await ts.countLogEvents('org_logs_a'), 3, 'the event from before the retention period is gone');
      await ts.purgeOrganization('org_logs_a');
      assert.equal(await ts.countLogEvents('org_logs_a'), 0);
      assert.equal(await ts.getSpan('org_logs_a', t, s), null);
    } finally {
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
