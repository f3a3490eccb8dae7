// One judge-model call, two ways, in the same process against the same fake model (issue 33): the
// SDK client (@anthropic-ai/sdk's messages.create over Tribunal's undici fetch, as scoring called
// it before) and the direct Messages API call scoring makes now (src/engine/providers/messages-request.ts).
// The parameters are a scoring call's: a cached ~2.5k-character system prompt, the forced tool, a
// user prompt. The fake runs in a child process, so this process's CPU is the caller's alone.
// Rounds alternate between the two, BENCH_CONCURRENCY calls in flight, BENCH_CALLS calls a round;
// the figure is CPU (process.cpuUsage) per call, median of BENCH_ROUNDS rounds, and the ratio.
//
//   node --import tsx bench/model-call.bench.ts   (BENCH_CALLS=2000 BENCH_ROUNDS=7 BENCH_CONCURRENCY=16)
import Anthropic from '@anthropic-ai/sdk';
import { DEFAULT_MODEL } from '../src/config.ts';
import { createHttpFetch } from '../src/engine/providers/http-fetch.ts';
import { MessagesEndpoint } from '../src/engine/providers/messages-request.ts';
import { envNumber, median, runBench, serveChild, serveFake, startChild, stopChildren } from './harness.ts';

if (process.argv[2] === '--serve') await serveChild(() => serveFake(0));

const CALLS = envNumber('BENCH_CALLS', 2000);
const ROUNDS = envNumber('BENCH_ROUNDS', 7);
const CONCURRENCY = envNumber('BENCH_CONCURRENCY', 16);

const params: Anthropic.MessageCreateParamsNonStreaming = {
  // The server's default model: a deprecated one would have the SDK print a notice on every call.
  model: DEFAULT_MODEL,
  max_tokens: 1024,
  system: [{ type: 'text', text: 'You are an impartial evaluator for Tribunal. '.repeat(55), cache_control: { type: 'ephemeral' } }],
  messages: [{ role: 'user', content: `<response>${'Go to Settings > Security and click Reset password. '.repeat(4)}</response>` }],
  tools: [
    {
      name: 'submit_evaluation',
      description: 'Record your evaluation.',
      input_schema: { type: 'object', properties: { justification: { type: 'string' }, score: { type: 'number', minimum: 0, maximum: 1 } }, required: ['justification', 'score'] },
    },
  ],
  tool_choice: { type: 'tool', name: 'submit_evaluation', disable_parallel_tool_use: true },
};

async function cpuPerCall(call: () => Promise<unknown>, calls: number): Promise<number> {
  let left = calls;
  const before = process.cpuUsage();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (left-- > 0) await call();
    }),
  );
  const used = process.cpuUsage(before);
  return (used.user + used.system) / calls;
}

runBench(async () => {
  const fake = await startChild(import.meta.filename, 'fake');
  try {
    const sdk = new Anthropic({ apiKey: 'sk-ant-bench', baseURL: fake.ready.url, maxRetries: 0, timeout: 60_000, fetch: createHttpFetch(), openTelemetry: false });
    const direct = new MessagesEndpoint({ apiKey: 'sk-ant-bench', baseUrl: fake.ready.url, timeoutMs: 60_000 });
    const ways = [
      { name: 'SDK client (messages.create, undici fetch)', call: () => sdk.messages.create(params, { timeout: 60_000 }) },
      { name: 'direct Messages call (messages-request.ts)', call: () => direct.create(params, { timeoutMs: 60_000 }) },
    ];
    for (const w of ways) await cpuPerCall(w.call, Math.min(CALLS, 500)); // warm-up, each alike
    const rounds = ways.map(() => [] as number[]);
    for (let r = 0; r < ROUNDS; r++) for (const [i, w] of ways.entries()) rounds[i]!.push(await cpuPerCall(w.call, CALLS));
    const [sdkUs, directUs] = rounds.map(median) as [number, number];
    console.log(`${ROUNDS} rounds of ${CALLS} calls at concurrency ${CONCURRENCY}; caller CPU per call (median):`);
    for (const [i, w] of ways.entries()) console.log(`  ${w.name.padEnd(46)} ${median(rounds[i]!).toFixed(1)} us`);
    console.log(`direct / SDK: ${(directUs / sdkUs).toFixed(2)} (in-run reference: the SDK client)`);
  } finally {
    stopChildren([fake]);
  }
});
