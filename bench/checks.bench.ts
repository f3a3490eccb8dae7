// Checks and code evaluators (issue 29), in process (no HTTP), each next to plain JavaScript doing
// the same work in the same run.
//
//   node --import tsx bench/checks.bench.ts      (CHECK_RUNS=50000 CODE_RUNS=10000 CODE_CONCURRENCY=32)
//
// 1. A judge of 5 check evaluators (json_valid, json_schema, regex, length, contains), each scored
//    as the engine scores it (scoreWithoutModel: the compiled checks from the per-version cache,
//    the justification, the result shape) on a JSON answer. Goal: >= 20,000 judge runs per CPU-second.
//    Reference: one plain function doing the same five tests by hand.
// 2. A code evaluator (score(input) in the QuickJS sandbox on its worker thread), after warm-up.
//    Goal: <= 0.3 ms of CPU per run, measured with process.cpuUsage (every thread of the process:
//    the worker's QuickJS time, the messages both ways, this thread's waiting). Reference: the same
//    function body as plain JavaScript in this thread.
import { performance } from 'node:perf_hooks';
import { loadConfig } from '../src/config.ts';
import { scoreWithoutModel } from '../src/checks/score.ts';
import { sandboxFor } from '../src/checks/sandbox.ts';
import type { RunInput } from '../src/conversation/validate.ts';
import type { EvaluatorRecord } from '../src/store/types.ts';

const CHECK_RUNS = Number(process.env.CHECK_RUNS ?? 50_000);
const CODE_RUNS = Number(process.env.CODE_RUNS ?? 10_000);
const CODE_CONCURRENCY = Number(process.env.CODE_CONCURRENCY ?? 32);
const config = loadConfig({ TRIBUNAL_DATA_DIR: '/tmp/tribunal-bench-checks' });

const cpuMicros = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
async function measure(runs: number, fn: (i: number) => unknown | Promise<unknown>, concurrency = 1): Promise<{ cpuSPerRun: number; wallMs: number }> {
  const c0 = cpuMicros();
  const t0 = performance.now();
  if (concurrency === 1) for (let i = 0; i < runs; i++) await fn(i);
  else {
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < runs) await fn(next++);
      }),
    );
  }
  return { cpuSPerRun: (cpuMicros() - c0) / 1e6 / runs, wallMs: performance.now() - t0 };
}

const evaluator = (id: string, checks: EvaluatorRecord['checks']): EvaluatorRecord => ({
  id,
  org_id: 'org_bench',
  name: id,
  intent: 'bench',
  rubric: 'bench',
  requires_contexts: false,
  requires_expected_output: false,
  demonstrations: [],
  model: null,
  visibility: 'private',
  is_preset: false,
  project_id: null,
  version: 1,
  created_at: '',
  updated_at: '',
  kind: 'check',
  checks,
  combine: 'all',
});
const schema = { type: 'object', required: ['answer', 'confidence'], properties: { answer: { type: 'string' }, confidence: { type: 'number', minimum: 0, maximum: 1 } } };
const JUDGE = [
  evaluator('evl_json', [{ type: 'json_valid' }]),
  evaluator('evl_schema', [{ type: 'json_schema', schema }]),
  evaluator('evl_regex', [{ type: 'regex', pattern: '"answer":\\s*"[A-Z]' }]),
  evaluator('evl_length', [{ type: 'length', max: 60, unit: 'words' }]),
  evaluator('evl_contains', [{ type: 'not_contains', value: 'as an ai' }]),
];
// Inputs vary a little per run so nothing is answered from a one-entry cache of the same text.
const inputs: RunInput[] = Array.from({ length: 64 }, (_, i) => ({ request: 'Capital of France?', response: JSON.stringify({ answer: `Paris (${i})`, confidence: 0.9 }) }));

function plainJudge(input: RunInput): number {
  const scores: number[] = [];
  let doc: unknown = null;
  try {
    doc = JSON.parse(input.response);
    scores.push(1);
  } catch {
    scores.push(0);
  }
  const o = doc as Record<string, unknown> | null;
  scores.push(o && typeof o === 'object' && typeof o.answer === 'string' && typeof o.confidence === 'number' && o.confidence >= 0 && o.confidence <= 1 ? 1 : 0);
  scores.push(/"answer":\s*"[A-Z]/.test(input.response) ? 1 : 0);
  scores.push(input.response.trim().split(/\s+/).length <= 60 ? 1 : 0);
  scores.push(input.response.toLowerCase().includes('as an ai') ? 0 : 1);
  return scores.reduce((a, b) => a + b, 0) / scores.length;
}

const CODE =
  'const words = input.response.split(/\\s+/).filter(Boolean).length;\nconst cites = (input.contexts || []).some((c) => input.response.includes(c.slice(0, 12)));\nreturn { score: words <= 60 && cites ? 1 : 0.5, justification: words + " words" };';
const plainCode = new Function('input', CODE) as (input: unknown) => { score: number };
const codeInput = (i: number) => ({
  request: 'Capital of France?',
  response: `Paris is the capital of France (${i}).`,
  contexts: ['Paris is the capital of France.'],
  expected_output: null,
  turns: null,
  metadata: {},
});

async function main() {
  // 1. checks
  for (let i = 0; i < 2000; i++) await Promise.all(JUDGE.map((e) => scoreWithoutModel(config, 'org_bench', e, inputs[i % inputs.length])));
  const judged = await measure(CHECK_RUNS, (i) => Promise.all(JUDGE.map((e) => scoreWithoutModel(config, 'org_bench', e, inputs[i % inputs.length]))));
  for (let i = 0; i < 2000; i++) plainJudge(inputs[i % inputs.length]);
  const plain = await measure(CHECK_RUNS, (i) => plainJudge(inputs[i % inputs.length]));
  const perSecond = 1 / judged.cpuSPerRun;
  console.log(`checks: a judge of 5 check evaluators, ${CHECK_RUNS} runs`);
  console.log(`  Tribunal  ${Math.round(perSecond).toLocaleString('en')} judge runs per CPU-second (${(judged.cpuSPerRun * 1e6).toFixed(1)} µs CPU per run)`);
  console.log(`  plain JS  ${Math.round(1 / plain.cpuSPerRun).toLocaleString('en')} runs per CPU-second (${(plain.cpuSPerRun * 1e6).toFixed(2)} µs CPU per run)`);
  console.log(`  ratio     ${(judged.cpuSPerRun / plain.cpuSPerRun).toFixed(1)}x the plain function's CPU; goal >= 20,000 runs/CPU-s: ${perSecond >= 20_000 ? 'met' : 'NOT met'}`);

  // 2. code
  const sandbox = sandboxFor(config.code);
  const run = (i: number) =>
    sandbox.run('org_bench:evl_code@1', CODE, codeInput(i)).then((o) => {
      if (!o.ok) throw new Error(o.error.message);
    });
  await measure(2000, run, CODE_CONCURRENCY);
  const sandboxed = await measure(CODE_RUNS, run, CODE_CONCURRENCY);
  const sequential = await measure(Math.min(CODE_RUNS, 3000), run, 1);
  for (let i = 0; i < 2000; i++) plainCode(codeInput(i));
  const plainRun = await measure(CODE_RUNS, (i) => plainCode(codeInput(i)));
  console.log(`code: score(input) in the QuickJS sandbox (worker thread), ${CODE_RUNS} runs after warm-up`);
  console.log(
    `  Tribunal  ${(sandboxed.cpuSPerRun * 1e3).toFixed(3)} ms CPU per run with ${CODE_CONCURRENCY} in flight (${(sandboxed.wallMs / CODE_RUNS).toFixed(3)} ms wall per run); one at a time: ${(sequential.cpuSPerRun * 1e3).toFixed(3)} ms CPU per run`,
  );
  console.log(`  plain JS  ${(plainRun.cpuSPerRun * 1e3).toFixed(4)} ms CPU per run`);
  console.log(
    `  ratio     ${(sandboxed.cpuSPerRun / plainRun.cpuSPerRun).toFixed(0)}x the plain function's CPU; goal <= 0.3 ms CPU per run: ${sandboxed.cpuSPerRun <= 0.0003 ? 'met' : 'NOT met'}`,
  );
  await sandbox.close();
}

await main();
