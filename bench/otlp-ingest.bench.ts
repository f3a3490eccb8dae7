// OTLP ingest throughput: Tribunal's POST /otel/v1/traces (auth, limits, protobuf decode, normalize,
// store on the JSON store or PostgreSQL, rule intake) next to a bare receiver that decodes the same
// OTLP protobuf with the same definitions and discards it, measured in the same run with the same
// client. Both servers run in this process, one under load at a time, so the CPU per span printed is
// the whole process's (client included) per span for each target; their difference is what Tribunal
// adds per span. Target of issue 28: throughput >= 0.5x the bare receiver, <= 30 us CPU per span.
//
//   node --import tsx bench/otlp-ingest.bench.ts   BENCH_SECONDS=4 BENCH_SPANS=100 BENCH_CONCURRENCY=4
//   TRIBUNAL_TEST_STORE=postgres node --import tsx bench/otlp-ingest.bench.ts   (needs the test database)
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeExportRequest, encodeExportRequest } from '../src/traces/proto.ts';
import { normalizeRequest } from '../src/traces/normalize.ts';
import { startTestServer } from '../test/helpers/server.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const SPANS = Number(process.env.BENCH_SPANS ?? 100);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);

let traceCounter = 1;
/** One export request of SPANS GenAI chat spans, in traces of 5 spans; new ids every call. */
function body(): Buffer {
  const now = BigInt(Date.now()) * 1_000_000n;
  const spans = [];
  for (let i = 0; i < SPANS; i++) {
    if (i % 5 === 0) traceCounter++;
    const trace = Buffer.alloc(16);
    trace.writeUInt32BE(traceCounter, 12);
    trace.writeUInt32BE(process.pid, 0);
    const span = Buffer.alloc(8);
    span.writeUInt32BE(traceCounter, 0);
    span.writeUInt32BE(i + 1, 4);
    spans.push({
      trace_id: trace,
      span_id: span,
      name: 'chat gpt-4o-mini',
      kind: 3,
      start_time_unix_nano: now.toString(),
      end_time_unix_nano: (now + 1_000_000n).toString(),
      attributes: [
        { key: 'gen_ai.operation.name', value: { string_value: 'chat' } },
        { key: 'gen_ai.request.model', value: { string_value: 'gpt-4o-mini' } },
        { key: 'gen_ai.usage.input_tokens', value: { int_value: 120 } },
        { key: 'gen_ai.input.messages', value: { string_value: JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: `question ${i}` }] }]) } },
        { key: 'gen_ai.output.messages', value: { string_value: JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: `answer ${i}` }] }]) } },
      ],
      status: { code: 1 },
    });
  }
  return Buffer.from(
    encodeExportRequest({
      resource_spans: [{ resource: { attributes: [{ key: 'service.name', value: { string_value: 'bench' } }] }, scope_spans: [{ scope: { name: 'bench' }, spans }] }],
    }),
  );
}

async function drive(url: string, headers: Record<string, string>): Promise<{ spans: number; seconds: number; cpuUs: number }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const post = (payload: Buffer) =>
    new Promise<void>((resolve, reject) => {
      const req = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/x-protobuf', 'content-length': payload.length, ...headers } }, (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`status ${res.statusCode}`))));
      });
      req.on('error', reject);
      req.end(payload);
    });
  // Warm-up, then the measured window.
  for (let i = 0; i < 20; i++) await post(body());
  let sent = 0;
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const end = Date.now() + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (Date.now() < end) {
        // Fresh ids every request (a repeat would be a cheaper duplicate); building the body is client
        // CPU, the same for both targets.
        await post(body());
        sent++;
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const c = process.cpuUsage(cpu0);
  agent.destroy();
  return { spans: sent * SPANS, seconds, cpuUs: c.user + c.system };
}

async function main() {
  const bare = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      normalizeRequest(decodeExportRequest(Buffer.concat(chunks)));
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  bare.listen(0, '127.0.0.1');
  await new Promise<void>((r) => bare.once('listening', () => r()));
  const bareUrl = `http://127.0.0.1:${(bare.address() as AddressInfo).port}/v1/traces`;
  const server = await startTestServer({ TRIBUNAL_TRACE_MAX_SPANS: '100000000', TRIBUNAL_RATE_LIMIT: '100000000' });
  const { api_key } = await server.demoUser();
  const results: Record<string, { spans: number; seconds: number; cpuUs: number }> = {};
  // Bare first and last, Tribunal in between: the reference is the mean of both bare windows.
  const b1 = await drive(bareUrl, {});
  results.tribunal = await drive(`${server.url}/otel/v1/traces`, { authorization: `Bearer ${api_key}` });
  const b2 = await drive(bareUrl, {});
  results.bare = { spans: b1.spans + b2.spans, seconds: b1.seconds + b2.seconds, cpuUs: b1.cpuUs + b2.cpuUs };
  const rate = (r: { spans: number; seconds: number }) => r.spans / r.seconds;
  const cpu = (r: { spans: number; cpuUs: number }) => r.cpuUs / r.spans;
  console.log(`store: ${server.store.kind}, ${SPANS} spans per request, ${CONCURRENCY} clients, ${SECONDS}s windows`);
  console.log(`bare decode-and-discard: ${rate(results.bare).toFixed(0)} spans/s, ${cpu(results.bare).toFixed(1)} us CPU per span (process, client included)`);
  console.log(`tribunal /otel/v1/traces: ${rate(results.tribunal).toFixed(0)} spans/s, ${cpu(results.tribunal).toFixed(1)} us CPU per span (process, client included)`);
  console.log(`ratio: ${(rate(results.tribunal) / rate(results.bare)).toFixed(2)}x the bare receiver's throughput (target >= 0.5x)`);
  console.log(`tribunal's own CPU per span (difference): ${(cpu(results.tribunal) - cpu(results.bare)).toFixed(1)} us (target <= 30 us)`);
  const spansFile = `${server.dataDir}/traces/spans.jsonl`;
  if (fs.existsSync(spansFile)) console.log(`stored: ${(fs.statSync(spansFile).size / 1e6).toFixed(1)} MB of spans.jsonl`);
  await server.close();
  bare.close();
}

await main();
