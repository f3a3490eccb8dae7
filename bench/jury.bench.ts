// Jury latency (issue 17): a jury of three registered models whose fake servers answer after 100,
// 200 and 300 ms, against its slowest juror alone (a one-model evaluator on the 300 ms model),
// measured in the same run. The jurors run concurrently, so a jury run should take about as long
// as its slowest juror. Goal: median jury latency at most 1.15 x the slowest juror's.
//
//   node --import tsx bench/jury.bench.ts      (BENCH_RUNS=40 BENCH_CONCURRENCY=1 JURY_DELAYS=100,200,300)
//
// Three processes: the Tribunal server as `npm start` runs it (JSON store), the three fake Chat
// Completions servers (test/helpers/fake-openai.ts, one process), and this load generator. Runs of
// the jury and of the reference alternate, BENCH_CONCURRENCY at a time, after a warm-up of each.
// Reported: client wall time per run (median, p90) and, from the results, the server's own jury
// latency against the slowest juror's latency in the same result.
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { envNumber, median, quantile, request, runBench, serveChild, serveTribunal, startChild, stopChildren, type Child, type Ready } from './harness.ts';

const SELF = fileURLToPath(import.meta.url);
const RUNS = envNumber('BENCH_RUNS', 40);
const CONCURRENCY = envNumber('BENCH_CONCURRENCY', 1);
const DELAYS = (process.env.JURY_DELAYS ?? '100,200,300').split(',').map(Number);
const GOAL = 1.15;

// ---- children -----------------------------------------------------------------------------------

async function serveFakes(): Promise<Ready> {
  const { startFakeOpenAI } = await import('../test/helpers/fake-openai.ts');
  const urls: string[] = [];
  for (const [i, delay] of DELAYS.entries()) {
    const fake = await startFakeOpenAI();
    fake.latencyMs = delay;
    fake.answer = { justification: `Juror ${i + 1}: the response answers the question.`, score: 0.5 + i / 10 };
    // The fake keeps every request; clear them now and then so its memory stays flat.
    setInterval(() => void fake.requests.splice(0), 1000).unref();
    urls.push(fake.url);
  }
  return { url: urls[0], urls };
}

if (process.argv[2] === '--serve') {
  const kind = process.argv[3];
  await serveChild(() =>
    kind === 'fakes'
      ? serveFakes()
      : serveTribunal('http://127.0.0.1:9/', { TRIBUNAL_DEMO_MODELS: 'true', TRIBUNAL_SECRET_KEY: process.argv[4]!, TRIBUNAL_MODEL_CONCURRENCY: '64' }),
  );
}

// ---- parent -------------------------------------------------------------------------------------

interface Result {
  latency_ms: number;
  evaluator_results: Array<{ score: number | null; latency_ms: number; jurors?: Array<{ latency_ms: number; error?: string }> }>;
}

runBench(async () => {
  let fakes: Child | undefined;
  let tribunal: Child | undefined;
  try {
    fakes = await startChild(SELF, 'fakes');
    tribunal = await startChild(SELF, 'tribunal', [randomBytes(32).toString('base64')]);
    const base = tribunal.ready.url;
    const demo = (await (await fetch(`${base}/create-demo-user/`, { method: 'POST' })).json()) as { api_key: string };
    const headers = { authorization: `Api-Key ${demo.api_key}`, 'content-type': 'application/json' };
    const post = async (path: string, body: unknown) => {
      const res = await fetch(`${base}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
      const json = (await res.json()) as { id: string };
      if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(json)}`);
      return json;
    };
    const urls = fakes.ready.urls as string[];
    const names = urls.map((_, i) => `juror-${DELAYS[i]}ms`);
    for (const [i, url] of urls.entries()) await post('/v1/models/', { name: names[i], provider: 'openai', base_url: url, model: `bench-${i}`, max_concurrency: 64 });
    const rubric = 'High (1): answers the question. Low (0): does not.';
    const jury = await post('/v1/evaluators/', { name: 'Bench jury', intent: 'Answers the question.', rubric, models: names, aggregation: 'mean' });
    const slowest = names[DELAYS.indexOf(Math.max(...DELAYS))];
    const single = await post('/v1/evaluators/', { name: 'Bench slowest juror alone', intent: 'Answers the question.', rubric, model: slowest });

    const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY * 2 });
    const body = JSON.stringify({ request: 'How do I reset my password?', response: 'Open Settings, then Security, then Reset password.' });
    const runOnce = async (evaluatorId: string) => {
      const started = performance.now();
      const res = await request(agent, new URL(`${base}/v1/evaluators/${evaluatorId}/execute/`), headers, body);
      const wall = performance.now() - started;
      if (res.status !== 200) throw new Error(`run: ${res.status} ${res.text}`);
      return { wall, result: JSON.parse(res.text) as Result };
    };
    // Warm-up: a few runs of each.
    for (let i = 0; i < 5; i++) await Promise.all([runOnce(jury.id), runOnce(single.id)]);

    const juryWall: number[] = [];
    const singleWall: number[] = [];
    const serverRatio: number[] = [];
    for (let done = 0; done < RUNS; done += CONCURRENCY) {
      const batch = Math.min(CONCURRENCY, RUNS - done);
      const juries = await Promise.all(Array.from({ length: batch }, () => runOnce(jury.id)));
      const singles = await Promise.all(Array.from({ length: batch }, () => runOnce(single.id)));
      for (const j of juries) {
        juryWall.push(j.wall);
        const r = j.result.evaluator_results[0];
        if (r.jurors?.some((x) => x.error)) throw new Error(`a juror failed: ${JSON.stringify(r.jurors)}`);
        serverRatio.push(r.latency_ms / Math.max(...r.jurors!.map((x) => x.latency_ms)));
      }
      for (const s of singles) singleWall.push(s.wall);
    }
    const ratio = median(juryWall) / median(singleWall);
    const fmt = (xs: number[]) => `median ${median(xs).toFixed(1)} ms, p90 ${quantile(xs, 0.9).toFixed(1)} ms`;
    console.log(`Jury of ${names.length} (juror delays ${DELAYS.join('/')} ms), ${RUNS} runs each, concurrency ${CONCURRENCY}:`);
    console.log(`  jury run                 ${fmt(juryWall)}`);
    console.log(`  slowest juror alone      ${fmt(singleWall)}`);
    console.log(`  ratio (medians)          ${ratio.toFixed(3)}  goal <= ${GOAL}: ${ratio <= GOAL ? 'met' : 'MISSED'}`);
    console.log(`  server-side: jury latency / slowest juror latency in the same result: median ${median(serverRatio).toFixed(3)}, max ${Math.max(...serverRatio).toFixed(3)}`);
    agent.destroy();
  } finally {
    stopChildren([tribunal, fakes]);
  }
});
