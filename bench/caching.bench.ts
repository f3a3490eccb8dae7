// Caching benchmarks (issue 17), each against a reference measured in the same run:
//
//  1. Billed input cost of BENCH_CALLS (1,000) scoring calls of one evaluator with demonstrations,
//     before prompt caching (a fresh nonce per call and a plain system prompt: the old prompt) and
//     after (the version nonce and the system block marked cache_control), from the usage the
//     caching fake Anthropic server reports, priced at claude-sonnet-4-5's rates. In-process: the
//     real AnthropicJudgeModel (SDK) against the fake; CPU is not what is measured here.
//  2. Server CPU per run through the `openai` provider (a registered model, the fake OpenAI server)
//     next to the Anthropic path (the server's model, the fake Anthropic server). Goal: within 1.1x.
//  3. A result-cache hit (use_cache): server CPU per request and outbound requests (counted at the
//     fakes), next to GET /v1/evaluators/{id}/ on the same server (auth, rate limit, a store read).
//     Goal: the hit path at most 0.3 ms of server CPU, no outbound request. Also the engine's hit
//     path alone (key, lookup in the JSON store's LRU, the reused result), timed in-process.
//
//   node --import tsx bench/caching.bench.ts   (BENCH_CALLS=1000 BENCH_RUNS=2000 BENCH_ROUNDS=5 BENCH_CONCURRENCY=8)
//
// The Tribunal server and both fakes run in child processes (bench/harness.ts), so the load
// generator and the fakes never take CPU from the server measured.
import http from 'node:http';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { childCpuMicros, envNumber, median, request, runBench, serveChild, serveTribunal, startChild, stopChildren, type Child, type Ready } from './harness.ts';

const SELF = fileURLToPath(import.meta.url);
const CALLS = envNumber('BENCH_CALLS', 1000);
const RUNS = envNumber('BENCH_RUNS', 2000);
const ROUNDS = envNumber('BENCH_ROUNDS', 5);
const CONCURRENCY = envNumber('BENCH_CONCURRENCY', 8);
const SECRET = Buffer.alloc(32, 7).toString('base64'); // a fixed bench secret, not a real one

const DEMONSTRATIONS = Array.from({ length: 4 }, (_, i) => ({
  request: `Customer question ${i}: ${'How do I move my invoices to the new billing account without losing the history? '.repeat(6)}`,
  response: `Support answer ${i}: ${'Open Billing, choose Transfer, pick the new account and confirm; the history moves with it. '.repeat(6)}`,
  score: [0.2, 0.5, 0.8, 1][i]!,
  justification: `Scored ${[0.2, 0.5, 0.8, 1][i]} because ${'the answer covers the steps asked for, in part. '.repeat(5)}`,
}));
const EVALUATOR = {
  name: 'Billing answer quality',
  intent: 'Whether a support answer solves the billing question.',
  rubric: 'HIGH [0.7, 1]: complete and correct. MIDDLING [0.4, 0.7): partly. LOW [0, 0.4): wrong.',
  demonstrations: DEMONSTRATIONS,
};

// ---- children ------------------------------------------------------------------------------------

/** Each fake answers {count: id} with how many requests it has received. */
function answerCounts(count: () => number): void {
  process.on('message', (m: { count?: number }) => {
    if (m.count !== undefined) process.send!({ counted: m.count, requests: count() });
  });
}

async function serveOpenAI(): Promise<Ready> {
  const { startFakeOpenAI } = await import('../test/helpers/fake-openai.ts');
  const fake = await startFakeOpenAI();
  answerCounts(() => fake.requests.length);
  return { url: fake.url };
}

/** The fake Anthropic server answering at once, as bench/harness.ts's serveFake does, counting requests. */
async function serveAnthropic(): Promise<Ready> {
  const { startFakeAnthropic, toolAnswer } = await import('../test/helpers/fake-anthropic.ts');
  let received = 0;
  const fake = await startFakeAnthropic({
    responder: () => (received++, toolAnswer({ justification: 'The response answers the question directly.', score: 0.8 }, { usage: { input_tokens: 900, output_tokens: 60 } })),
  });
  answerCounts(() => received);
  return { url: fake.url };
}

if (process.argv[2] === '--serve') {
  const kind = process.argv[3];
  await serveChild(() =>
    kind === 'anthropic'
      ? serveAnthropic()
      : kind === 'openai'
        ? serveOpenAI()
        : serveTribunal(process.argv[4]!, { TRIBUNAL_DEMO_MODELS: 'true', TRIBUNAL_SECRET_KEY: SECRET, TRIBUNAL_MODEL: 'claude-sonnet-4-5', TRIBUNAL_MODEL_CONCURRENCY: '64' }),
  );
}

// ---- 1. prompt-cache cost -----------------------------------------------------------------------

async function promptCacheCost() {
  const { startFakeAnthropic } = await import('../test/helpers/fake-anthropic.ts');
  const { AnthropicJudgeModel } = await import('../src/engine/providers/anthropic-model.ts');
  const { buildPrompt, SCORE_TOOL } = await import('../src/engine/prompt.ts');
  const { versionNonce } = await import('../src/conversation/fence.ts');
  const { costUsd } = await import('../src/engine/providers/cost.ts');
  const { DEFAULT_PRICES } = await import('../src/prices.ts');
  const fake = await startFakeAnthropic();
  const model = new AnthropicJudgeModel({ apiKey: 'bench-dummy-key', baseUrl: fake.url });
  const evaluator = { id: 'evl_bench', version: 1, ...EVALUATOR };
  const secret = Buffer.from(SECRET, 'base64');
  const out: Record<string, { input: number; read: number; write: number; usd: number }> = {};
  try {
    for (const mode of ['before', 'after'] as const) {
      fake.forgetCache();
      const total = { input: 0, read: 0, write: 0, usd: 0 };
      let next = 0;
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          while (next < CALLS) {
            const i = next++;
            const input = { request: `Question ${i}: can I get a refund for order ${1000 + i}?`, response: `Yes: refunds for order ${1000 + i} take five working days.` };
            const built = mode === 'before' ? buildPrompt(evaluator, input) : buildPrompt(evaluator, input, versionNonce(secret, evaluator.id, evaluator.version));
            const answer = await model.call({
              model: 'claude-sonnet-4-5',
              system: built.system,
              prompt: built.prompt,
              tool: SCORE_TOOL,
              maxTokens: 1024,
              temperature: 0,
              cacheSystem: mode === 'after',
            });
            const u = answer.usage;
            total.input += u.input_tokens;
            total.read += u.cache_read_tokens ?? 0;
            total.write += u.cache_write_tokens ?? 0;
            // Input only: the output tokens are the same either way.
            total.usd += costUsd('claude-sonnet-4-5', { ...u, output_tokens: 0 }, DEFAULT_PRICES)!;
          }
        }),
      );
      out[mode] = total;
    }
  } finally {
    await fake.close();
  }
  console.log(
    `\n1. Billed input cost of ${CALLS} calls of one evaluator with ${DEMONSTRATIONS.length} demonstrations (claude-sonnet-4-5, $3/M input; cache write 1.25x, read 0.1x):`,
  );
  for (const [mode, t] of Object.entries(out)) {
    console.log(
      `  ${mode.padEnd(7)} prompt tokens ${t.input.toLocaleString('en')}  (cache read ${t.read.toLocaleString('en')}, cache write ${t.write.toLocaleString('en')})  billed input $${t.usd.toFixed(4)}`,
    );
  }
  console.log(`  after / before: ${(out.after!.usd / out.before!.usd).toFixed(3)}x`);
}

// ---- 2 and 3. server CPU ----------------------------------------------------------------------------

async function api(base: string, key: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Api-Key ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json()) as any;
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

async function drive(url: string, key: string, body: string | null): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const target = new URL(url);
  const headers = { 'content-type': 'application/json', authorization: `Api-Key ${key}` };
  let next = 0;
  let failed = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < RUNS) {
        next++;
        const res = await request(agent, target, headers, body);
        if (res.status !== 200) failed++;
      }
    }),
  );
  agent.destroy();
  return failed;
}

/** Requests the fake in child `c` has received so far. */
const requestsAt = (c: Child) =>
  new Promise<number>((resolve) => {
    const id = Math.random();
    const on = (m: { counted?: number; requests?: number }) => {
      if (m.counted === id) c.child.off('message', on), resolve(m.requests!);
    };
    c.child.on('message', on);
    c.child.send({ count: id });
  });

async function serverCpu() {
  const children: Child[] = [];
  try {
    const anthropic = await startChild(SELF, 'anthropic');
    const openai = await startChild(SELF, 'openai');
    children.push(anthropic, openai);
    const tribunal = await startChild(SELF, 'tribunal', [anthropic.ready.url], { profile: true });
    children.push(tribunal);
    const base = tribunal.ready.url;
    const demo = (await (await fetch(`${base}/create-demo-user/`, { method: 'POST' })).json()) as { api_key: string };
    const key = demo.api_key;
    await api(base, key, 'POST', '/v1/models/', { name: 'local', provider: 'openai', base_url: openai.ready.url, model: 'judge-8b', price: { input: 1, output: 2 } });
    const viaAnthropic = await api(base, key, 'POST', '/v1/evaluators/', { ...EVALUATOR, name: 'via anthropic' });
    const viaOpenAI = await api(base, key, 'POST', '/v1/evaluators/', { ...EVALUATOR, name: 'via openai', model: 'local' });
    const cached = await api(base, key, 'POST', '/v1/evaluators/', { ...EVALUATOR, name: 'cached' });
    const body = JSON.stringify({ request: 'Can I get a refund for order 1042?', response: 'Yes: refunds take five working days.' });
    const cachedBody = JSON.stringify({ request: 'Can I get a refund for order 1042?', response: 'Yes: refunds take five working days.', use_cache: true });
    // The one model call that fills the cache.
    await api(base, key, 'POST', `/v1/evaluators/${cached.id}/execute/`, JSON.parse(cachedBody));
    const targets = [
      { label: 'execute, Anthropic provider', url: `${base}/v1/evaluators/${viaAnthropic.id}/execute/`, body },
      { label: 'execute, openai provider', url: `${base}/v1/evaluators/${viaOpenAI.id}/execute/`, body },
      { label: 'execute, result-cache hit', url: `${base}/v1/evaluators/${cached.id}/execute/`, body: cachedBody },
      { label: 'GET evaluator (reference)', url: `${base}/v1/evaluators/${cached.id}/`, body: null },
    ];
    const perRun: Record<string, number[]> = {};
    console.log(`\n2-3. Server CPU per request: ${ROUNDS} rounds x ${RUNS} requests per target, ${CONCURRENCY} concurrent keep-alive clients, fakes answering at once`);
    for (const t of targets) await drive(t.url, key, t.body); // warm-up
    let outboundOnHits = 0;
    for (let round = 1; round <= ROUNDS; round++) {
      for (const t of targets) {
        const outboundBefore = (await requestsAt(openai)) + (await requestsAt(anthropic));
        const cpu0 = await childCpuMicros(tribunal.child);
        const failed = await drive(t.url, key, t.body);
        const ms = ((await childCpuMicros(tribunal.child)) - cpu0) / 1000 / RUNS;
        const outbound = (await requestsAt(openai)) + (await requestsAt(anthropic)) - outboundBefore;
        if (t.label.includes('hit')) outboundOnHits += outbound;
        (perRun[t.label] ??= []).push(ms);
        console.log(`  round ${round}  ${t.label.padEnd(30)} ${ms.toFixed(3)} ms CPU/request  outbound ${outbound}${failed ? `  (${failed} failed)` : ''}`);
      }
    }
    const m = Object.fromEntries(Object.entries(perRun).map(([k, v]) => [k, median(v)]));
    const [a, o, hit, ref] = targets.map((t) => m[t.label]!);
    console.log(`  median: Anthropic ${a!.toFixed(3)} ms, openai ${o!.toFixed(3)} ms, hit ${hit!.toFixed(3)} ms, GET reference ${ref!.toFixed(3)} ms`);
    console.log(`  openai / Anthropic: ${(o! / a!).toFixed(2)}x (goal <= 1.10x)`);
    console.log(`  cache hit: ${hit!.toFixed(3)} ms per request, ${(hit! - ref!).toFixed(3)} ms above the GET reference; outbound requests on hits: ${outboundOnHits} (goal 0)`);
  } finally {
    stopChildren(children);
  }
}

// ---- 3b. the engine's hit path alone ----------------------------------------------------------------

async function engineHitPath() {
  const { withResultCache } = await import('../src/engine/result-cache.ts');
  const { ResultCacheLru } = await import('../src/store/result-cache-lru.ts');
  const lru = new ResultCacheLru();
  const store = { getCachedResult: async (o: string, k: string) => lru.get(o, k), putCachedResult: async (o: string, k: string, r: any, n: number) => lru.put(o, k, r, n) } as any;
  const evaluator = { id: 'evl_bench', version: 1, name: 'x', critical: false, requires_contexts: false, requires_expected_output: false } as any;
  const input = { request: 'Can I get a refund for order 1042?', response: 'Yes: refunds take five working days.' };
  const settings = { temperature: 0, max_tokens: 1024, strategy: 'tool' as const };
  let calls = 0;
  const score = async () => (
    calls++,
    {
      result: {
        evaluator_id: 'evl_bench',
        evaluator_name: 'x',
        evaluator_version: 1,
        score: 0.8,
        justification: 'j'.repeat(400),
        model: 'm',
        input_tokens: 1,
        output_tokens: 1,
        cost_usd: 0,
        latency_ms: 1,
      },
    }
  );
  const opts = { store, orgId: 'org_bench', maxEntries: 100_000 };
  for (let i = 0; i < 1000; i++)
    await withResultCache(opts, { evaluator, input: { ...input, response: `${input.response} ${i}` }, models: ['server:m'], settings }, evaluator, score);
  const n = 50_000;
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < n; i++)
    await withResultCache(opts, { evaluator, input: { ...input, response: `${input.response} ${i % 1000}` }, models: ['server:m'], settings }, evaluator, score);
  const cpu = process.cpuUsage(cpu0);
  console.log(
    `\n3b. The engine's hit path alone (key, LRU lookup of 1,000 entries, the reused result): ${((cpu.user + cpu.system) / n).toFixed(1)} us CPU per hit; model calls during the hits: ${calls - 1000}`,
  );
}

runBench(async () => {
  console.log(`Caching bench: Node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? 'unknown'}), load ${os.loadavg()[0]!.toFixed(1)}`);
  await promptCacheCost();
  await engineHitPath();
  await serverCpu();
});
