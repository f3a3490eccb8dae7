// The judge proxy's overhead (issue 27), measured against the same fake upstream called directly,
// in one run, paired rounds (direct and proxied alternate, so drift on a shared machine hits both):
//   1. async judging: proxied latency / direct latency, medians (target <= 1.02);
//   2. time to first chunk, streamed: proxied - direct at p95 (target <= 5 ms), also p50 and the
//      p95 of the per-round differences;
//   3. the Tribunal server's CPU per call beyond the judging itself (target <= 0.5 ms): a block of
//      proxied calls minus a block of the same judge run through REST execute on the same
//      conversation (as `turns`), each block settled (its judging and log written) before the CPU is
//      read, repeated in alternating order; the median over repeats with its 95% interval, the goal
//      met when the interval's upper end is. Printed twice: (a) with async judging (the goal's
//      words; favoured, its log writes share flushes with the next call's), (b) with sync judging
//      (like for like: each call waits for its own durable log, as execute does). Why this
//      estimator: docs/BENCHMARKS.md, "Which CPU figure";
//   4. sync judging: proxied latency / (direct upstream + the judge's own run via REST execute)
//      (target <= 1.05).
// The in-run reference for 1: a pass-through proxy of 20 lines (servePassThrough) in the same rounds,
// with the upstream answering at once and at its latency. What it adds to the direct call is the cost
// of one more process hop on this machine (with an idle gap: the wake-up of idle processes and CPUs),
// which no proxy can avoid; Tribunal / pass-through is what Tribunal itself adds.
// Every path is warmed up first (BENCH_WARMUP rounds with the upstream answering at once), so the
// figures are the server's steady state, not V8 compiling it. Each server (fake judge model, fake
// upstream, Tribunal) is a child process of its own.
//   node --import tsx bench/proxy.bench.ts   (BENCH_ROUNDS=60, BENCH_UPSTREAM_MS=80, BENCH_JUDGE_MS=150,
//                                             BENCH_WARMUP=150, BENCH_CPU_ROUNDS=150, BENCH_CPU_REPEATS=31)
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { benchEnv, childCpuMicros, median, quantile, runBench, serveChild, serveFake, serveTribunal, setFakeLatency, startChild, stopChildren, type Child } from './harness.ts';
import { proxyRig } from './harness.ts';

const FILE = fileURLToPath(import.meta.url);
const { ROUNDS, UPSTREAM_MS, JUDGE_MS, WARMUP, CPU_ROUNDS, CPU_REPEATS } = benchEnv({ ROUNDS: 60, UPSTREAM_MS: 80, JUDGE_MS: 150, WARMUP: 150, CPU_ROUNDS: 150, CPU_REPEATS: 31 });
const CPU_KINDS: readonly CpuKind[] = ['execute', 'async', 'sync', 'pass'];
type CpuKind = 'execute' | 'async' | 'sync' | 'pass';
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
      // The parent sets the upstream's latency as it does the judge model's (setFakeLatency).
      process.on('message', (m: { latency?: number }) => {
        if (m.latency === undefined) return;
        fake.latencyMs = m.latency;
        process.send!({ latencySet: m.latency });
      });
      return { url: fake.url };
    }
    if (kind === 'passthrough') return servePassThrough(process.argv[4]!);
    return serveTribunal(process.argv[4]!, { TRIBUNAL_DEMO_MODELS: 'true', TRIBUNAL_SECRET_KEY: SECRET });
  });
}

/**
 * The in-run reference for the latency ratio: the least a proxy can be. It forwards the body to the
 * upstream over the same undici client set-up Tribunal uses (src/proxy/upstream.ts), reads the JSON
 * answer whole and writes it back, with no authentication, lookups, judging or logging. What it adds
 * to the direct call is the cost of one more process hop on this machine.
 */
async function servePassThrough(upstreamUrl: string): Promise<{ url: string }> {
  const { Agent, request } = await import('undici');
  const dispatcher = new Agent({ keepAliveTimeout: 30_000 });
  const server = http.createServer(async (req, res) => {
    const parts: Buffer[] = [];
    for await (const c of req) parts.push(c as Buffer);
    const up = await request(`${upstreamUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: req.headers.authorization ?? '' },
      body: Buffer.concat(parts),
      dispatcher,
    });
    const text = await up.body.text();
    res.writeHead(up.statusCode, { 'content-type': 'application/json' });
    res.end(text);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** Paired JSON rounds: latencies (ms) and the proxies' main-thread CPU per call (ms). */
interface Hops {
  direct: number[];
  pass: number[];
  proxy: number[];
  passCpu: number[];
  proxyCpu: number[];
}
const hops = (): Hops => ({ direct: [], pass: [], proxy: [], passCpu: [], proxyCpu: [] });

/**
 * A process's main-thread CPU time so far (ms), read by the parent from /proc (the child is not
 * woken to answer, as an IPC question would); NaN where there is no /proc.
 */
function mainThreadCpuMs(pid: number): number {
  try {
    return Number(fs.readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return Number.NaN;
  }
}

/**
 * A distribution-free interval for the median of xs (order statistics): the k-th smallest and k-th
 * largest, with k the largest for which P(Binomial(n, 1/2) < k) <= 2.5%, so the interval holds the
 * true median with at least 95% probability whatever the spread's shape. Null below 6 values.
 */
function medianInterval(xs: number[]): { lo: number; hi: number; coverage: number } | null {
  const n = xs.length;
  const sorted = [...xs].sort((a, b) => a - b);
  // P(B <= j) for B ~ Binomial(n, 1/2), accumulated term by term.
  let term = 0.5 ** n;
  let below = 0; // P(B <= k - 1)
  let k = 0;
  for (let j = 0; j < n; j++) {
    if (below + term > 0.025) break;
    below += term;
    k = j + 1;
    term = (term * (n - j)) / (j + 1);
  }
  if (k < 1) return null;
  return { lo: sorted[k - 1]!, hi: sorted[n - k]!, coverage: 1 - 2 * below };
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
    const pass = await startChild(FILE, 'passthrough', [upstream.ready.url]);
    children.push(pass);
    const base = tribunal.ready.url;
    const { headers, judgeId } = await proxyRig(base, upstream.ready.url);
    const j = { id: judgeId };

    const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
    const chat = (stream: boolean) => JSON.stringify({ model: 'gpt-bench', stream, messages: [{ role: 'user', content: 'What is the capital of France?' }] });
    const proxied = (stream: boolean) => JSON.stringify({ model: 'app-model', stream, messages: [{ role: 'user', content: 'What is the capital of France?' }] });
    const directUrl = new URL(`${upstream.ready.url}/chat/completions`);
    const passUrl = new URL(`${pass.ready.url}/chat/completions`);
    const proxyUrl = (q: string) => new URL(`${base}/v1/judges/${j.id}/openai/chat/completions${q}`);
    const upHeaders = { authorization: 'Bearer sk-bench-dummy', 'content-type': 'application/json' };

    const executeUrl = new URL(`${base}/v1/judges/${j.id}/execute/`);
    // The judging alone: the same conversation the proxy judges (the messages, then the answer).
    const executeBody = JSON.stringify({
      turns: [
        { role: 'user', content: 'What is the capital of France?' },
        { role: 'assistant', content: 'Paris is the capital of France. It lies on the Seine.' },
      ],
    });
    const settle = () => new Promise((r) => setTimeout(r, 300));

    // Warm up every path with the upstream answering at once.
    await setFakeLatency(upstream.child, 0);
    for (let i = 0; i < WARMUP; i++) {
      await timed(agent, directUrl, upHeaders, chat(false));
      await timed(agent, passUrl, upHeaders, chat(false));
      await timed(agent, proxyUrl('?async_judge=true'), headers, proxied(false));
      await timed(agent, directUrl, upHeaders, chat(true));
      await timed(agent, proxyUrl('?async_judge=true'), headers, proxied(true));
      await timed(agent, executeUrl, headers, executeBody);
      await timed(agent, proxyUrl(''), headers, proxied(false));
    }
    await settle();

    // 3: the proxy's own CPU per call. Blocks of CPU_ROUNDS calls, each settled (its async judging
    // and log writes done) before the CPU is read, so a block holds all the server did for its calls,
    // GC included: the same judging through REST execute, proxied with async judging (the goal's
    // measure), proxied with sync judging, and the pass-through reference (its own process). Each
    // repeat runs the four kinds back to back, in the opposite order every other repeat, so that a
    // drift in the machine's load hits execute and the proxied calls alike; the figure is the median
    // over repeats of (proxied - execute), with its 95% interval from order statistics (no
    // assumption about the spread's shape; see medianInterval).
    const send: Record<CpuKind, () => Promise<unknown>> = {
      execute: () => timed(agent, executeUrl, headers, executeBody),
      async: () => timed(agent, proxyUrl('?async_judge=true'), headers, proxied(false)),
      sync: () => timed(agent, proxyUrl(''), headers, proxied(false)),
      pass: () => timed(agent, passUrl, upHeaders, chat(false)),
    };
    const cpu: Record<CpuKind, number[]> = { execute: [], async: [], sync: [], pass: [] };
    for (let r = 0; r < CPU_REPEATS; r++) {
      for (const kind of r % 2 ? [...CPU_KINDS].reverse() : CPU_KINDS) {
        const server = kind === 'pass' ? pass.child : tribunal.child;
        const c0 = await childCpuMicros(server);
        for (let i = 0; i < CPU_ROUNDS; i++) await send[kind]();
        await settle(); // the async judging finishes; an idle server uses ~0 CPU meanwhile
        cpu[kind].push(((await childCpuMicros(server)) - c0) / CPU_ROUNDS / 1000);
      }
    }
    const ownAsync = cpu.async.map((x, r) => x - cpu.execute[r]!);
    const ownSync = cpu.sync.map((x, r) => x - cpu.execute[r]!);

    // 1: a JSON round: direct, through the pass-through reference, through Tribunal with async judging.
    const jsonRound = async (h: Hops) => {
      h.direct.push((await timed(agent, directUrl, upHeaders, chat(false))).total);
      const c0 = mainThreadCpuMs(pass.child.pid!);
      h.pass.push((await timed(agent, passUrl, upHeaders, chat(false))).total);
      const c1 = mainThreadCpuMs(pass.child.pid!);
      const t0 = mainThreadCpuMs(tribunal.child.pid!);
      const p = await timed(agent, proxyUrl('?async_judge=true'), headers, proxied(false));
      const t1 = mainThreadCpuMs(tribunal.child.pid!);
      if (p.status !== 200) throw new Error(`proxy answered ${p.status}`);
      h.proxy.push(p.total);
      h.passCpu.push(c1 - c0);
      h.proxyCpu.push(t1 - t0);
    };
    // The same rounds with the upstream answering at once: what a hop costs when no process has idled.
    const atOnce = hops();
    for (let i = 0; i < ROUNDS; i++) await jsonRound(atOnce);
    await settle();

    // 1 and 2: async judging, JSON and streamed, paired with direct calls, at the upstream's latency.
    await setFakeLatency(upstream.child, UPSTREAM_MS);
    const late = hops();
    const { direct, proxy } = late;
    const directFirst: number[] = [];
    const proxyFirst: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      await jsonRound(late);
      directFirst.push((await timed(agent, directUrl, upHeaders, chat(true))).first);
      proxyFirst.push((await timed(agent, proxyUrl('?async_judge=true'), headers, proxied(true))).first);
    }
    await settle();

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
    const firstDiffs = proxyFirst.map((p, i) => p - directFirst[i]!);
    const syncRatio = median(sync) / median(reference);
    console.log(
      `judge proxy bench: ${ROUNDS} paired rounds, upstream latency ${UPSTREAM_MS} ms, judge model latency ${JUDGE_MS} ms (sync part, ${syncRounds} rounds); ${WARMUP} warm-up rounds; CPU over ${CPU_REPEATS} repeats of ${CPU_ROUNDS} calls a kind`,
    );
    console.log(`  async judging, JSON: direct median ${ms(median(direct))}, proxied median ${ms(median(proxy))} -> ratio ${ratio.toFixed(3)} (target <= 1.02)`);
    const range = (xs: number[]) => `${ms(median(xs))} (${Math.min(...xs).toFixed(2)} to ${Math.max(...xs).toFixed(2)})`;
    const interval = (xs: number[]) => {
      const ci = medianInterval(xs);
      return ci
        ? `${ms(median(xs))}, ${(ci.coverage * 100).toFixed(1)}% interval ${ci.lo.toFixed(2)} to ${ci.hi.toFixed(2)} ms`
        : `${ms(median(xs))} (too few repeats for an interval)`;
    };
    const verdict = (xs: number[]) => {
      const ci = medianInterval(xs);
      return ci ? (ci.hi <= 0.5 ? 'met' : 'not shown') : 'not measured';
    };
    console.log(
      `  the proxy's own CPU per call (target <= 0.5 ms, met when the interval's upper end is), paired settled blocks of ${CPU_ROUNDS} calls, median over ${CPU_REPEATS} repeats with its interval:`,
    );
    console.log(
      `    (a) the goal's measure, proxied with async judging - the same judging via REST execute: ${interval(ownAsync)} -> ${verdict(ownAsync)}; range ${range(ownAsync)}. ` +
        'Favoured: async judging runs on while the next call comes in, so its log writes share flushes (group commit), where execute pays one flush a call',
    );
    console.log(
      `    (b) like for like, proxied with sync judging - execute (each call waits for its own durable log in both; the relay, lookups and the proxy's body work): ${interval(ownSync)} -> ${verdict(ownSync)}`,
    );
    console.log(
      `    per call, medians: proxied async ${ms(median(cpu.async))}, proxied sync ${ms(median(cpu.sync))}, execute ${ms(median(cpu.execute))}; the pass-through reference's whole CPU per call ${interval(cpu.pass)}`,
    );
    // Issue 33 (the per-CPU ratios hold for a proxied call): the least a relay costs (the pass-through
    // process, whole) against what Tribunal spends relaying beyond the judging itself, measure (b).
    const relay = median(ownSync);
    const relayCi = medianInterval(ownSync);
    const bound = relayCi && relayCi.hi > 0 ? `, at least ${(median(cpu.pass) / relayCi.hi).toFixed(2)} over the interval's upper end` : '';
    console.log(
      `    per CPU, the pass-through's whole call / Tribunal's relay (b): ${relay > 0 ? (median(cpu.pass) / relay).toFixed(2) : 'over any bound (the relay median is not above 0)'}${bound}; ` +
        `the pass-through / Tribunal's whole proxied call (async judging included): ${(median(cpu.pass) / median(cpu.async)).toFixed(2)}`,
    );
    console.log(
      `  time to first chunk, streamed: direct p50 ${ms(median(directFirst))} p95 ${ms(quantile(directFirst, 0.95))}, proxied p50 ${ms(median(proxyFirst))} p95 ${ms(quantile(proxyFirst, 0.95))} -> overhead at p95 ${ms(ttfc)} (target <= 5 ms); per-round difference p50 ${ms(median(firstDiffs))} p95 ${ms(quantile(firstDiffs, 0.95))}`,
    );
    const added = (h: Hops, xs: number[]) => ms(median(xs.map((x, i) => x - h.direct[i]!)));
    console.log(
      `  in-run reference, one more process hop (a pass-through proxy of 20 lines on the same undici client set-up): upstream ${UPSTREAM_MS} ms: pass-through / direct ${(median(late.pass) / median(direct)).toFixed(3)}, ` +
        `Tribunal / pass-through ${(ratio * (median(direct) / median(late.pass))).toFixed(3)}; added per call (median of paired differences) pass-through ${added(late, late.pass)}, Tribunal ${added(late, proxy)}; ` +
        `upstream 0 ms: pass-through ${added(atOnce, atOnce.pass)}, Tribunal ${added(atOnce, atOnce.proxy)}`,
    );
    console.log(
      `  main-thread CPU per call (/proc schedstat, medians; Tribunal's includes the start of its async judging): pass-through ${ms(median(atOnce.passCpu))} with the upstream at once, ${ms(median(late.passCpu))} at ${UPSTREAM_MS} ms; ` +
        `Tribunal ${ms(median(atOnce.proxyCpu))}, ${ms(median(late.proxyCpu))}`,
    );
    console.log(`  sync judging: proxied median ${ms(median(sync))} vs upstream + judge run median ${ms(median(reference))} -> ratio ${syncRatio.toFixed(3)} (target <= 1.05)`);
  } finally {
    stopChildren(children);
  }
});
