// The JSON store holding many execution logs: RSS, start-up time and the latency of the first page
// of each log filter, with 0 (the reference, measured in the same run), 20,000 and 100,000 logs of a
// 3-evaluator judge stored. Each size runs in a fresh child process (node --expose-gc), which opens
// the store, collects garbage and reports process.memoryUsage().rss, then times each filter's first
// page (median of 7). Goals (issue 14): at 100,000 logs RSS within +150 MB of the empty store,
// start-up under 5 s, every first page under 50 ms.
// Run: node --import tsx bench/log-store.bench.ts   (BENCH_LOGS=0,20000,100000 to change the sizes)
import { fork } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { JsonStore } from '../src/store/json-store.ts';
import type { ExecutionLogRecord, LogFilter } from '../src/store/types.ts';
import { median } from './harness.ts';

const ORG = 'org_bench';
const JUDGES = ['jdg_support', 'jdg_sales', 'jdg_docs'];
const PROJECTS = ['prj_web', 'prj_app'];
const EVALUATORS = ['preset_answer_relevance', 'preset_clarity', 'preset_helpfulness'];
const BASE_MS = Date.parse('2026-01-01T00:00:00.000Z');
const JUSTIFICATION =
  'The response addresses the question directly and stays on topic; it names the steps the user has to take, in order, and does not add unrelated material. One step could be clearer about where the setting lives.';

/** A log as a 3-evaluator judge run writes it (about 2.3 KB of JSON). */
export function benchLog(i: number): ExecutionLogRecord {
  const score = (i % 101) / 100;
  return {
    id: `log_${String(i).padStart(10, '0')}bench`,
    org_id: ORG,
    type: 'judge',
    judge_id: JUDGES[i % JUDGES.length]!,
    judge_name: 'Support answers',
    judge_version: 1,
    evaluator_id: null,
    evaluator_name: null,
    evaluator_version: null,
    project_id: PROJECTS[i % PROJECTS.length]!,
    request: `How do I reset my password on the mobile app? (ticket ${i})`,
    response: `Open Settings, choose Account, then Security, and tap "Reset password". You will get an e-mail with a link that stays valid for 24 hours. Ticket ${i}.`,
    contexts: ['Password resets are under Settings > Account > Security.', 'Reset links expire after 24 hours.'],
    expected_output: null,
    user_id: `user_${i % 500}`,
    tags: i % 10_000 === 7 ? ['rare', 'prod'] : ['prod', `shard-${i % 10}`],
    evaluator_results: EVALUATORS.map((id, k) => ({
      evaluator_id: id,
      evaluator_name: id.replace('preset_', ''),
      evaluator_version: 1,
      score,
      justification: JUSTIFICATION,
      model: 'claude-sonnet-4-5',
      input_tokens: 900 + k,
      output_tokens: 80,
      cost_usd: i % 50 === 0 ? null : 0.0039,
      latency_ms: 800 + k,
    })) as ExecutionLogRecord['evaluator_results'],
    score,
    cost_usd: i % 50 === 0 ? null : 0.0117,
    latency_ms: 820,
    created_at: new Date(BASE_MS + i * 1000).toISOString(),
  };
}

const FILTERS: Array<[string, Omit<LogFilter, 'org_id'>]> = [
  ['no filter', {}],
  ['judge_id', { judge_id: JUDGES[1] }],
  ['evaluator_id', { evaluator_id: EVALUATORS[2] }],
  ['project_id', { project_id: PROJECTS[1] }],
  ['min_score 0.9', { min_score: 0.9 }],
  ['max_cost 0.01 (matches none: full scan)', { max_cost: 0.01 }],
  ['tags [rare] (1 in 10,000)', { tags: ['rare'] }],
  ['tags [prod, shard-3]', { tags: ['prod', 'shard-3'] }],
  ['date_from..date_to (the second hour: oldest logs)', { date_from: new Date(BASE_MS + 3_600_000).toISOString(), date_to: new Date(BASE_MS + 7_200_000).toISOString() }],
  ['judge + project + min_score + tags', { judge_id: JUDGES[0], project_id: PROJECTS[0], min_score: 0.5, tags: ['prod'] }],
];

interface ChildReport {
  startupMs: number;
  rssMb: number;
  /** The most the process held at any point, start-up included. */
  peakRssMb: number;
  heapMb: number;
  pages: Array<{ name: string; ms: number; items: number }>;
  getMs: number;
}

async function child(dir: string, logs: number): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc!;
  const t0 = performance.now();
  const store = new JsonStore({ dataDir: dir });
  await store.init();
  const startupMs = performance.now() - t0;
  gc();
  gc();
  const mem = process.memoryUsage();
  const pages: ChildReport['pages'] = [];
  for (const [name, f] of FILTERS) {
    const times: number[] = [];
    let items = 0;
    for (let r = 0; r < 7; r++) {
      const s = performance.now();
      const page = await store.listExecutionLogs({ org_id: ORG, ...f }, { limit: 50 });
      times.push(performance.now() - s);
      items = page.items.length;
    }
    pages.push({ name, ms: median(times), items });
  }
  const getTimes: number[] = [];
  for (let r = 0; r < 101; r++) {
    const id = benchLog(Math.floor((r / 101) * logs)).id;
    const s = performance.now();
    await store.getExecutionLog(id);
    getTimes.push(performance.now() - s);
  }
  await store.close();
  const send = process.send ? (m: ChildReport) => process.send!(m) : (m: ChildReport) => console.log(JSON.stringify(m));
  send({ startupMs, rssMb: mem.rss / 2 ** 20, peakRssMb: process.resourceUsage().maxRSS / 2 ** 10, heapMb: mem.heapUsed / 2 ** 20, pages, getMs: median(getTimes) });
}

async function fill(logs: number): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tribunal-bench-'));
  const empty = new JsonStore({ dataDir: dir });
  await empty.init(); // writes db.json
  await empty.close();
  const fd = fs.openSync(path.join(dir, 'logs.jsonl'), 'w');
  const chunk: string[] = [];
  for (let i = 0; i < logs; i++) {
    chunk.push(`${JSON.stringify(benchLog(i))}\n`);
    if (chunk.length === 5000) fs.writeSync(fd, chunk.join('')), (chunk.length = 0);
  }
  if (chunk.length) fs.writeSync(fd, chunk.join(''));
  fs.closeSync(fd);
  return dir;
}

function runChild(dir: string, logs: number): Promise<ChildReport> {
  const me = fileURLToPath(import.meta.url);
  const c = fork(me, ['--child', dir, String(logs)], { execArgv: ['--import', 'tsx', '--expose-gc'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    c.once('message', (m: ChildReport) => resolve(m));
    c.once('exit', (code) => (code ? reject(new Error(`child exited with ${code}`)) : undefined));
  });
}

if (process.argv[2] === '--child') {
  // Also runs alone, to profile one size: --fill N prints a data directory, then
  // node --import tsx --expose-gc --cpu-prof bench/log-store.bench.ts --child DIR N
  await child(process.argv[3]!, Number(process.argv[4]));
} else if (process.argv[2] === '--fill') {
  console.log(await fill(Number(process.argv[3])));
} else {
  const sizes = (process.env.BENCH_LOGS ?? '0,20000,100000').split(',').map(Number);
  const reports: Array<[number, ChildReport, number]> = [];
  for (const n of sizes) {
    const dir = await fill(n);
    const fileMb = fs.statSync(path.join(dir, 'logs.jsonl')).size / 2 ** 20;
    reports.push([n, await runChild(dir, n), fileMb]);
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const ref = reports.find(([n]) => n === 0)?.[1];
  console.log('JSON store with N execution logs of a 3-evaluator judge (fresh process per size):');
  for (const [n, r, fileMb] of reports) {
    const delta = ref ? ` (+${(r.rssMb - ref.rssMb).toFixed(0)} MB vs empty; goal at 100,000: +150 MB)` : '';
    console.log(`\n  N = ${n.toLocaleString('en')}: logs.jsonl ${fileMb.toFixed(0)} MB`);
    console.log(`    start-up (init): ${r.startupMs.toFixed(0)} ms (goal < 5000)`);
    console.log(`    RSS after GC: ${r.rssMb.toFixed(0)} MB${delta}; heap used ${r.heapMb.toFixed(0)} MB; peak RSS ${r.peakRssMb.toFixed(0)} MB`);
    console.log(`    getExecutionLog: ${r.getMs.toFixed(3)} ms (median of 101)`);
    for (const p of r.pages) console.log(`    first page, ${p.name}: ${p.ms.toFixed(2)} ms, ${p.items} items (goal < 50)`);
  }
}
