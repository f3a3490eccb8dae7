// The judge proxy's overhead (issue 27), measured against the same fake upstream called directly,
// in one run, paired rounds (direct and proxied alternate, so drift on a shared machine hits both):
//   1. async judging: proxied latency / direct latency (target <= 1.02), and the Tribunal server's
//      CPU per call, with and without the judging that follows the answer (target <= 0.5 ms proxy);
//   2. time to first chunk, streamed: proxied - direct at p95 (target <= 5 ms);
//   3. sync judging: proxied latency / (direct upstream + the judge's own run via REST execute)
//      (target <= 1.05).
// Each server (fake judge model, fake upstream, Tribunal) is a child process of its own.
//   node --import tsx bench/proxy.bench.ts          (BENCH_ROUNDS=60, BENCH_UPSTREAM_MS=80, BENCH_JUDGE_MS=150)
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import {
  childCpuMicros,
  envNumber,
  median,
  quantile,
  request,
  runBench,
  serveChild,
  serveFake,
  serveTribunal,
  setFakeLatency,
  startChild,
  stopChildren,
  type Child,
} from './harness.ts';

const FILE = fileURLToPath(import.meta.url);
const ROUNDS = envNumber('BENCH_ROUNDS', 60);
const UPSTREAM_MS = envNumber('BENCH_UPSTREAM_MS', 80);
const JUDGE_MS = envNumber('BENCH_JUDGE_MS', 150);
const SECRET = randomBytes(32).toString('base64');

if (process.argv[2] === '--serve') {
  const kind = process.argv[3];
  await serveChild(async () => {
    if (kind === 'judge') return serveFake(0);
    if (kind === 'upstream') {
      const { startFakeOpenAI } = await import('../test/helpers/fake-openai.ts');
      const fake = await startFakeOpenAI();
      fake.latencyMs = Number(process.argv[4]);
      fake.reply = { content: 'Paris is the capital of France. It lies on the Seine.', chunks: 8 };
      setInterval(() => (fake.requests.length = 0), 1000).unref();
      return { url: fake.url };
    }
    return serveTribunal(process.argv[4]!, { TRIBUNAL_DEMO_MODELS: 'true', TRIBUNAL_SECRET_KEY: SECRET });
  });
}

/** Time to the first body byte and to the end of one POST over a keep-alive agent. */
function timed(agent: http.Agent, url: URL, headers: Record<string, string>, body: string): Promise<{ first: number; total: number; status: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let first = 0;
    const req = http.request(url, { method: 'POST', agent, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
      res.on('data', () => {
        if (!first) first = performance.now() - started;
      });
      res.on('end', () => resolve({ first, total: performance.now() - started, status: res.statusCode ?? 0 }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

runBench(async () => {
  const children: Child[] = [];
  try {
    const judge = await startChild(FILE, 'judge');
    children.push(judge);
    const upstream = await startChild(FILE, 'upstream', [String(UPSTREAM_MS)]);
    children.push(upstream);
    const tribunal = await startChild(FILE, 'tribunal', [judge.ready.url]);
    children.push(tribunal);
    const base = tribunal.ready.url;
    const demo = (await (await fetch(`${base}/create-demo-user/`, { method: 'POST' })).json()) as { api_key: string };
    const headers = { authorization: `Bearer ${demo.api_key}`, 'content-type': 'application/json' };
    const post = async (p: string, body: unknown) => {
      const res = await fetch(base + p, { method: 'POST', headers, body: JSON.stringify(body) });
      const json = (await res.json()) as any;
      if (res.status >= 300) throw new Error(`${p}: ${res.status} ${JSON.stringify(json)}`);
      return json;
    };
    await post('/v1/models/', { name: 'app-model', provider: 'openai', base_url: upstream.ready.url, model: 'gpt-bench', api_key: 'sk-bench-dummy' });
    const ev = await post('/v1/evaluators/', { name: 'Bench relevance', intent: 'Is the answer relevant?', rubric: 'High (1): answers the question. Low (0): does not.' });
    const j = await post('/v1/judges/', { name: 'Bench judge', intent: 'Bench.', evaluator_ids: [ev.id] });

    const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
    const chat = (stream: boolean) => JSON.stringify({ model: 'gpt-bench', stream, messages: [{ role: 'user', content: 'What is the capital of France?' }] });
    const proxied = (stream: boolean) => JSON.stringify({ model: 'app-model', stream, messages: [{ role: 'user', content: 'What is the capital of France?' }] });
    const directUrl = new URL(`${upstream.ready.url}/chat/completions`);
    const proxyUrl = (q: string) => new URL(`${base}/v1/judges/${j.id}/openai/chat/completions${q}`);
    const upHeaders = { authorization: 'Bearer sk-bench-dummy', 'content-type': 'application/json' };

    // Warm up every path.
    for (let i = 0; i < 5; i++) {
      await timed(agent, directUrl, upHeaders, chat(false));
      await timed(agent, proxyUrl('?async_judge=true'), headers, proxied(false));
      await timed(agent, proxyUrl('?async_judge=true'), headers, proxied(true));
    }
    await new Promise((r) => setTimeout(r, 500));

    // 1 and 2: async judging, JSON and streamed, paired with direct calls.
    const direct: number[] = [];
    const proxy: number[] = [];
    const directFirst: number[] = [];
    const proxyFirst: number[] = [];
    let proxyCpu = 0;
    const cpu0 = await childCpuMicros(tribunal.child);
    for (let i = 0; i < ROUNDS; i++) {
      direct.push((await timed(agent, directUrl, upHeaders, chat(false))).total);
      const c0 = await childCpuMicros(tribunal.child);
      const p = await timed(agent, proxyUrl('?async_judge=true'), headers, proxied(false));
      proxyCpu += (await childCpuMicros(tribunal.child)) - c0;
      if (p.status !== 200) throw new Error(`proxy answered ${p.status}`);
      proxy.push(p.total);
      directFirst.push((await timed(agent, directUrl, upHeaders, chat(true))).first);
      proxyFirst.push((await timed(agent, proxyUrl('?async_judge=true'), headers, proxied(true))).first);
    }
    await new Promise((r) => setTimeout(r, 1000)); // let the async judging finish
    const allCpu = (await childCpuMicros(tribunal.child)) - cpu0;

    // The proxy's own CPU: proxied calls (their async judging included, once it has finished) minus
    // the same judge run through REST execute (the judging alone), per call.
    const executeUrl = new URL(`${base}/v1/judges/${j.id}/execute/`);
    const executeBody = JSON.stringify({ request: 'What is the capital of France?', response: 'Paris is the capital of France. It lies on the Seine.' });
    const e0 = await childCpuMicros(tribunal.child);
    for (let i = 0; i < ROUNDS; i++) await timed(agent, executeUrl, headers, executeBody);
    await new Promise((r) => setTimeout(r, 300));
    const executeCpu = (await childCpuMicros(tribunal.child)) - e0 - 300; // the settle wait's own idle CPU is ~0
    const p0 = await childCpuMicros(tribunal.child);
    for (let i = 0; i < ROUNDS; i++) await timed(agent, proxyUrl('?async_judge=true'), headers, proxied(false));
    await new Promise((r) => setTimeout(r, 300));
    const proxiedCpu = (await childCpuMicros(tribunal.child)) - p0 - 300;

    // 3: sync judging with a judge model that takes JUDGE_MS, against upstream + the judge's own run.
    await setFakeLatency(judge.child, JUDGE_MS);
    const syncRounds = Math.max(10, Math.round(ROUNDS / 3));
    const reference: number[] = [];
    const sync: number[] = [];
    for (let i = 0; i < syncRounds; i++) {
      const up = (await timed(agent, directUrl, upHeaders, chat(false))).total;
      const run = (await timed(agent, executeUrl, headers, executeBody)).total;
      reference.push(up + run);
      sync.push((await timed(agent, proxyUrl(''), headers, proxied(false))).total);
    }

    const ms = (x: number) => `${x.toFixed(2)} ms`;
    const ratio = median(proxy) / median(direct);
    const ttfc = quantile(proxyFirst, 0.95) - quantile(directFirst, 0.95);
    const syncRatio = median(sync) / median(reference);
    console.log(`judge proxy bench: ${ROUNDS} paired rounds, upstream latency ${UPSTREAM_MS} ms, judge model latency ${JUDGE_MS} ms (sync part, ${syncRounds} rounds)`);
    console.log(`  async judging, JSON: direct median ${ms(median(direct))}, proxied median ${ms(median(proxy))} -> ratio ${ratio.toFixed(3)} (target <= 1.02)`);
    console.log(
      `  server CPU per call: proxied with async judging ${ms(proxiedCpu / ROUNDS / 1000)}, the same judge via REST execute ${ms(executeCpu / ROUNDS / 1000)} -> the proxy's own ${ms((proxiedCpu - executeCpu) / ROUNDS / 1000)} (target <= 0.5 ms); ` +
        `${ms(proxyCpu / ROUNDS / 1000)} measured from request to answer (overlaps the start of the async judging); ${ms(allCpu / (ROUNDS * 2) / 1000)} over the paired rounds (JSON and streamed)`,
    );
    console.log(
      `  time to first chunk, streamed: direct p95 ${ms(quantile(directFirst, 0.95))}, proxied p95 ${ms(quantile(proxyFirst, 0.95))} -> overhead ${ms(ttfc)} (target <= 5 ms)`,
    );
    console.log(`  sync judging: proxied median ${ms(median(sync))} vs upstream + judge run median ${ms(median(reference))} -> ratio ${syncRatio.toFixed(3)} (target <= 1.05)`);
  } finally {
    stopChildren(children);
  }
});
