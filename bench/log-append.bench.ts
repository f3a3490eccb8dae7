// Appending an execution log to the JSON store must cost the same with 100,000 logs stored as with
// 1,000. Prints the per-append time at both sizes and their ratio (goal: about 1), next to the
// cost of rewriting the whole history on each append (what a plain lowdb collection would do).
// Run: node --import tsx bench/log-append.bench.ts
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { newId } from '../src/ids.ts';
import { JsonStore } from '../src/store/json-store.ts';
import type { ExecutionLogRecord } from '../src/store/types.ts';

// BENCH_APPENDS and BENCH_LARGE shrink the run (the smoke test uses them).
const APPENDS = Number(process.env.BENCH_APPENDS ?? 1000);
const LARGE = Number(process.env.BENCH_LARGE ?? 100_000);

function makeLog(i: number): ExecutionLogRecord {
  return {
    id: newId('log'),
    org_id: 'org_bench',
    type: 'judge',
    judge_id: 'jdg_bench',
    judge_name: 'Bench judge',
    judge_version: 1,
    evaluator_id: null,
    evaluator_name: null,
    evaluator_version: null,
    project_id: 'prj_bench',
    request: `question ${i}`,
    response: `an answer of moderate length to question ${i}, as an application would produce it`,
    contexts: ['a retrieved snippet', 'another retrieved snippet'],
    expected_output: null,
    user_id: null,
    tags: ['bench', `t${i % 10}`],
    evaluator_results: [
      {
        evaluator_id: 'preset_clarity',
        evaluator_name: 'Clarity',
        evaluator_version: 1,
        score: 0.8,
        justification: 'Clear and direct.',
        model: 'claude-sonnet-4-5',
        input_tokens: 900,
        output_tokens: 80,
        cost_usd: 0.0039,
        latency_ms: 812,
      },
    ],
    score: 0.8,
    cost_usd: 0.0039,
    latency_ms: 820,
    created_at: new Date().toISOString(),
  };
}

async function openEmpty(dir: string): Promise<JsonStore> {
  const store = new JsonStore({ dataDir: dir });
  await store.init();
  return store;
}

async function perAppendMs(stored: number): Promise<number> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tribunal-bench-'));
  // db.json first: a store refuses logs.jsonl without it (a lost database).
  await (await openEmpty(dir)).close();
  // Pre-fill the history file directly: this measures appends, not the fill.
  const fd = fs.openSync(path.join(dir, 'logs.jsonl'), 'w');
  const chunk: string[] = [];
  for (let i = 0; i < stored; i++) {
    chunk.push(JSON.stringify(makeLog(i)));
    if (chunk.length === 5000) fs.writeSync(fd, chunk.join('\n') + '\n'), (chunk.length = 0);
  }
  if (chunk.length) fs.writeSync(fd, chunk.join('\n') + '\n');
  fs.closeSync(fd);
  const store = new JsonStore({ dataDir: dir });
  await store.init();
  for (let i = 0; i < 20; i++) await store.appendExecutionLog(makeLog(i)); // warm up
  const start = process.hrtime.bigint();
  for (let i = 0; i < APPENDS; i++) await store.appendExecutionLog(makeLog(i));
  const ms = Number(process.hrtime.bigint() - start) / 1e6 / APPENDS;
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
  return ms;
}

/** Reference: rewrite the whole history as one JSON document per append (temp file + rename). */
function rewriteWholeFileMs(stored: number): number {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tribunal-bench-'));
  const logs = Array.from({ length: stored }, (_, i) => makeLog(i));
  const rounds = 5;
  const start = process.hrtime.bigint();
  for (let i = 0; i < rounds; i++) {
    logs.push(makeLog(i));
    fs.writeFileSync(path.join(dir, 'db.json.tmp'), JSON.stringify({ logs }));
    fs.renameSync(path.join(dir, 'db.json.tmp'), path.join(dir, 'db.json'));
  }
  const ms = Number(process.hrtime.bigint() - start) / 1e6 / rounds;
  fs.rmSync(dir, { recursive: true, force: true });
  return ms;
}

const small = await perAppendMs(1_000);
const large = await perAppendMs(LARGE);
const rewriteSmall = rewriteWholeFileMs(1_000);
const rewriteLarge = rewriteWholeFileMs(LARGE);
console.log(`JSON store, one durable append (fdatasync), ${APPENDS} appends each:`);
console.log(`  with   1,000 logs stored: ${small.toFixed(3)} ms per append`);
console.log(`  with ${LARGE.toLocaleString('en-US')} logs stored: ${large.toFixed(3)} ms per append`);
console.log(`  ratio ${LARGE.toLocaleString('en-US')} / 1,000: ${(large / small).toFixed(2)}  (goal: about 1)`);
console.log(`reference, rewriting the whole history per append (no fsync):`);
console.log(
  `  with   1,000 logs: ${rewriteSmall.toFixed(2)} ms; with ${LARGE.toLocaleString('en-US')} logs: ${rewriteLarge.toFixed(2)} ms; ratio ${(rewriteLarge / rewriteSmall).toFixed(1)}`,
);
