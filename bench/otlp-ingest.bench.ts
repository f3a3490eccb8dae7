// OTLP ingest throughput: Tribunal's POST /otel/v1/traces (auth, limits, protobuf decode, normalize,
// store on the JSON store or PostgreSQL, rule intake) next to a bare receiver that decodes the same
// OTLP protobuf with the same definitions and discards it, measured in the same run with the same
// client, in alternating rounds. Both servers run in this process, one under load at a time, so the CPU per span printed is
// the whole process's (client included) per span for each target; their difference is what Tribunal
// adds per span. Target of issue 28: throughput >= 0.5x the bare receiver, <= 30 us CPU per span.
//
//   node --import tsx bench/otlp-ingest.bench.ts   BENCH_SECONDS=4 BENCH_ROUNDS=3 BENCH_SPANS=100 BENCH_CONCURRENCY=4
//   BENCH_PROMPT_BYTES=6000: each span's prompt that long (default a few words); a record past about
//   2 KB is compressed by PostgreSQL as it is stored (lz4 since migration 031 where the server has it).
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
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PROMPT_BYTES = Number(process.env.BENCH_PROMPT_BYTES ?? 0);
const WORDS = 'the user asks the assistant about retrieval augmented generation and the model answers with sources'.split(' ');
/** Prompt text of about PROMPT_BYTES bytes after the question, words in a shifting order (compressible about as much as prose). */
const PROMPT =
  ' '.repeat(Math.min(1, PROMPT_BYTES)) +
  Array.from({ length: Math.ceil(PROMPT_BYTES / 6) }, (_, k) => WORDS[(k * 7 + (k >> 3)) % WORDS.length])
    .join(' ')
    .slice(0, PROMPT_BYTES);

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
        { key: 'gen_ai.input.messages', value: { string_value: JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: `question ${i}${PROMPT}` }] }]) } },
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

/** CPU (us) the PostgreSQL backends of `pool` have used so far, read from /proc (PostgreSQL on this machine). */
function backendCpuUs(pids: Set<number>): number {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      ticks += Number(f[11]) + Number(f[12]);
    } catch {
      // The backend ended (the pool closed an idle connection): its CPU is no longer readable.
    }
  }
  return (ticks * 1e6) / CLOCK_TICKS;
}
const CLOCK_TICKS = 100;

/** Backend process ids of a node-pg pool's open connections (its internal client list). */
function poolPids(store: unknown): number[] {
  const pool = (store as { pool?: { _clients?: Array<{ processID?: number }> } }).pool;
  return (pool?._clients ?? []).map((c) => c.processID ?? 0).filter((p) => p > 0);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

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
  const pg = server.store.kind === 'postgres';
  const pids = new Set<number>();
  // Rounds alternate which target goes first (B T, T B, ...), so a change in the machine's load
  // between windows falls on both; each round's ratio compares two neighbouring windows.
  const ratios: number[] = [];
  const sum = { bare: { spans: 0, seconds: 0, cpuUs: 0 }, tribunal: { spans: 0, seconds: 0, cpuUs: 0 } };
  let pgCpuUs = 0;
  const rate = (r: { spans: number; seconds: number }) => r.spans / r.seconds;
  for (let round = 0; round < ROUNDS; round++) {
    const runTribunal = async () => {
      for (const p of poolPids(server.store)) pids.add(p);
      const before = backendCpuUs(pids);
      const r = await drive(`${server.url}/otel/v1/traces`, { authorization: `Bearer ${api_key}` });
      for (const p of poolPids(server.store)) if (!pids.has(p)) pids.add(p);
      pgCpuUs += backendCpuUs(pids) - before;
      return r;
    };
    const first = round % 2 === 0 ? await drive(bareUrl, {}) : await runTribunal();
    const second = round % 2 === 0 ? await runTribunal() : await drive(bareUrl, {});
    const [b, t] = round % 2 === 0 ? [first, second] : [second, first];
    ratios.push(rate(t) / rate(b));
    for (const [k, r] of [
      ['bare', b],
      ['tribunal', t],
    ] as const) {
      sum[k].spans += r.spans;
      sum[k].seconds += r.seconds;
      sum[k].cpuUs += r.cpuUs;
    }
  }
  const cpu = (r: { spans: number; cpuUs: number }) => r.cpuUs / r.spans;
  console.log(`store: ${server.store.kind}, ${SPANS} spans per request, ${CONCURRENCY} clients, ${ROUNDS} rounds of ${SECONDS}s windows`);
  console.log(`bare decode-and-discard: ${rate(sum.bare).toFixed(0)} spans/s, ${cpu(sum.bare).toFixed(1)} us CPU per span (process, client included)`);
  console.log(`tribunal /otel/v1/traces: ${rate(sum.tribunal).toFixed(0)} spans/s, ${cpu(sum.tribunal).toFixed(1)} us CPU per span (process, client included)`);
  console.log(`ratio: ${median(ratios).toFixed(2)}x the bare receiver's throughput, median of rounds [${ratios.map((r) => r.toFixed(2)).join(', ')}] (target >= 0.5x)`);
  console.log(`tribunal's own CPU per span (difference): ${(cpu(sum.tribunal) - cpu(sum.bare)).toFixed(1)} us (target <= 30 us)`);
  if (pg) console.log(`PostgreSQL backends' CPU per span (the pool's, from /proc; not in the figures above): ${(pgCpuUs / sum.tribunal.spans).toFixed(1)} us`);
  const spansFile = `${server.dataDir}/traces/spans.jsonl`;
  if (fs.existsSync(spansFile)) console.log(`stored: ${(fs.statSync(spansFile).size / 1e6).toFixed(1)} MB of spans.jsonl`);
  await server.close();
  bare.close();
}

await main();
