// Pairwise comparison latency (issue 16): POST /v1/judges/{id}/compare/ asks every evaluator in
// both orders at once, so a comparison should take about one model call. The fake judge model
// answers every call after a fixed delay (300 ms); the reference, measured in the same run, is
// POST /v1/judges/{id}/execute/ of the same judge (one call per evaluator). Goal: a compare call's
// median within 1.15x one model call. Runs alternate between compare and execute.
//
//   node --import tsx bench/compare.bench.ts      (BENCH_RUNS=30 BENCH_MODEL_MS=300)
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { demoWithJudges, envNumber, median, quantile, request, runBench, serveChild, serveTribunal, startChild, stopChildren, type Child, type Ready } from './harness.ts';

const SELF = fileURLToPath(import.meta.url);
const RUNS = envNumber('BENCH_RUNS', 30);
const MODEL_MS = envNumber('BENCH_MODEL_MS', 300);

interface Servers extends Ready {
  key?: string;
  one?: string;
  four?: string;
}

/** The fake judge model: a fixed delay, then a comparison (always "A") or a score, by the tool asked for. */
async function serveFakeModel(): Promise<Ready> {
  const { startFakeAnthropic, toolAnswer } = await import('../test/helpers/fake-anthropic.ts');
  const fake = await startFakeAnthropic({
    latencyMs: MODEL_MS,
    responder: (req) =>
      req.toolName === 'submit_comparison'
        ? toolAnswer({ justification: 'A answers the question; B does not.', preference: 'A' }, { usage: { input_tokens: 1200, output_tokens: 80 } })
        : toolAnswer({ justification: 'The response answers the question directly.', score: 0.8 }, { usage: { input_tokens: 900, output_tokens: 60 } }),
  });
  // The bench never reads the recorded requests: forget them now and then so the fake's heap stays flat.
  setInterval(() => fake.resetStats(), 2000).unref();
  return { url: fake.url };
}

async function serveJudges(fakeUrl: string): Promise<Servers> {
  const { url } = await serveTribunal(fakeUrl, { TRIBUNAL_MODEL_CONCURRENCY: '64' });
  const { key, judgeIds } = await demoWithJudges(url, {
    'bench compare one': ['Answer Relevance'],
    'bench compare four': ['Answer Relevance', 'Clarity', 'Helpfulness', 'Completeness'],
  });
  return { url, key, one: judgeIds[0], four: judgeIds[1] };
}

if (process.argv[2] === '--serve') {
  const kind = process.argv[3];
  await serveChild(() => (kind === 'fake' ? serveFakeModel() : serveJudges(process.argv[4]!)));
}

const REQUEST = 'How do I reset my password?';
const EXECUTE = JSON.stringify({ request: REQUEST, response: 'Open Settings, choose Security, then Reset password.' });
const COMPARE = JSON.stringify({ request: REQUEST, response_a: 'Open Settings, choose Security, then Reset password.', response_b: 'Passwords keep accounts safe.' });

async function main(): Promise<void> {
  const children: Array<Child | undefined> = [];
  try {
    const fake = await startChild(SELF, 'fake');
    children.push(fake);
    const tribunal = await startChild<Servers>(SELF, 'tribunal', [fake.ready.url]);
    children.push(tribunal);
    const { ready } = tribunal;
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const headers = { 'content-type': 'application/json', authorization: `Api-Key ${ready.key}` };
    const time = async (path: string, body: string, check: (answer: any) => boolean) => {
      const t0 = performance.now();
      const res = await request(agent, new URL(`${ready.url}${path}`), headers, body);
      const ms = performance.now() - t0;
      if (res.status !== 200 || !check(JSON.parse(res.text))) throw new Error(`${path}: ${res.status} ${res.text.slice(0, 300)}`);
      return ms;
    };
    const targets = [
      { label: 'execute, judge of 1 evaluator (1 call)', path: `/v1/judges/${ready.one}/execute/`, body: EXECUTE, check: (a: any) => a.score === 0.8 },
      { label: 'compare, judge of 1 evaluator (2 calls)', path: `/v1/judges/${ready.one}/compare/`, body: COMPARE, check: (a: any) => a.evaluator_results[0].consistent === false },
      { label: 'compare, judge of 4 evaluators (8 calls)', path: `/v1/judges/${ready.four}/compare/`, body: COMPARE, check: (a: any) => a.ties === 4 },
    ];
    const samples = targets.map(() => [] as number[]);
    for (const t of targets) await time(t.path, t.body, t.check); // warm-up
    for (let i = 0; i < RUNS; i++) for (const [j, t] of targets.entries()) samples[j]!.push(await time(t.path, t.body, t.check));
    agent.destroy();
    console.log(`Pairwise compare latency: fake model at ${MODEL_MS} ms per call, ${RUNS} sequential runs each, interleaved`);
    const reference = median(samples[0]!);
    for (const [j, t] of targets.entries()) {
      const m = median(samples[j]!);
      console.log(
        `  ${t.label.padEnd(42)} median ${m.toFixed(1)} ms, p90 ${quantile(samples[j]!, 0.9).toFixed(1)} ms  ratio / ${MODEL_MS} ms: ${(m / MODEL_MS).toFixed(3)}x  / execute: ${(m / reference).toFixed(3)}x`,
      );
    }
    console.log(`  goal: compare median <= 1.15x one model call (run one order after the other, 2 calls would take ${2 * MODEL_MS} ms)`);
  } finally {
    stopChildren(children);
  }
}

runBench(main);
