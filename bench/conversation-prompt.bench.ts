// Micro-benchmark: building the scoring prompt of a 50-turn conversation (issue 19). Goal: well under
// a millisecond per prompt. The reference, measured in the same run, is the prompt of one
// request/response pair holding the same characters, so the ratio is the price of turns.
//
//   node --import tsx bench/conversation-prompt.bench.ts      (BENCH_ITERATIONS=5000 BENCH_ROUNDS=7 BENCH_TURNS=50)
//
// Each round times BENCH_ITERATIONS builds (validation included: prepareRunInput, then buildPrompt)
// after a warm-up; the median round is reported, in microseconds per prompt. The evaluator is the
// Tool Use preset with its three demonstrations, so the examples' conversations are built too.
import { performance } from 'node:perf_hooks';
import { loadConfig } from '../src/config.ts';
import { prepareRunInput } from '../src/conversation/validate.ts';
import { loadPresets } from '../src/domain/presets.ts';
import { buildPrompt } from '../src/engine/prompt.ts';
import type { ExecutionInput, Turn } from '../src/schemas.ts';

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 5000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const TURNS = Number(process.env.BENCH_TURNS ?? 50);

const limits = loadConfig({}).limits;
const preset = loadPresets().find((p) => p.id === 'preset_tool_use')!;
const evaluator = { ...preset, requires_turns: true };

/** A support agent's trace: user asks, assistant calls a tool, the tool answers, assistant replies. */
function conversation(n: number): Turn[] {
  const turns: Turn[] = [];
  for (let i = 0; turns.length < n - 1; i++) {
    turns.push({ role: 'user', content: `Question ${i}: what is the status of order ${48_000 + i}, and can I still change the delivery address to 12 <Rue> & Co?` });
    turns.push({
      role: 'assistant',
      content: '',
      tool_calls: [{ id: `c${i}`, name: 'get_order_status', arguments: { order_id: String(48_000 + i), include: ['eta', 'address'] } }],
    });
    turns.push({
      role: 'tool',
      tool_call_id: `c${i}`,
      name: 'get_order_status',
      content: `{"order_id": "${48_000 + i}", "status": "shipped", "eta": "2026-11-26", "address_change": false}`,
    });
    turns.push({
      role: 'assistant',
      content: `Order ${48_000 + i} has shipped and is due on 26 November; the address can no longer be changed, but the carrier can hold it at a pickup point.`,
    });
  }
  turns.length = n - 1;
  turns.push({ role: 'assistant', content: 'Anything else I can check for you today?' });
  return turns;
}

const turns = conversation(TURNS);
const withTurns: ExecutionInput = { turns, system_prompt: 'You are the support agent of an online shop. Use get_order_status for order questions.' };
const chars = turns.reduce((n, t) => n + t.content.length + JSON.stringify(t.tool_calls ?? '').length, 0);
const single: ExecutionInput = { request: 'x'.repeat(Math.floor(chars / 2)), response: 'y'.repeat(Math.ceil(chars / 2)) };

function round(input: ExecutionInput): number {
  let sink = 0;
  const started = performance.now();
  for (let i = 0; i < ITERATIONS; i++) {
    const run = prepareRunInput(input, [evaluator], limits);
    sink += buildPrompt(evaluator, run).prompt.length;
  }
  const perCallUs = ((performance.now() - started) * 1000) / ITERATIONS;
  if (sink === 0) throw new Error('nothing built');
  return perCallUs;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// Warm-up: let the JIT settle on both paths.
for (let i = 0; i < 3; i++) round(withTurns), round(single);
const conv: number[] = [];
const ref: number[] = [];
for (let r = 0; r < ROUNDS; r++) {
  conv.push(round(withTurns));
  ref.push(round(single));
}
const c = median(conv);
const s = median(ref);
const promptChars = buildPrompt(evaluator, prepareRunInput(withTurns, [evaluator], limits)).prompt.length;
console.log(`conversation prompt, ${TURNS} turns (${chars} characters of turns, prompt ${promptChars} characters, Tool Use preset with 3 demonstrations)`);
console.log(`  ${TURNS}-turn conversation: ${c.toFixed(1)} µs per prompt (median of ${ROUNDS} rounds of ${ITERATIONS}; goal: well under 1000 µs)`);
console.log(`  reference, one request/response of the same characters: ${s.toFixed(1)} µs per prompt`);
console.log(`  ratio: ${(c / s).toFixed(2)}x the reference; ${c < 1000 ? 'PASS' : 'FAIL'} (goal < 1 ms)`);
