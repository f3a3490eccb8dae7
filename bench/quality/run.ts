// bench:quality: how good are Tribunal's judges? Runs Tribunal's own pairwise judging (an
// evaluator, both orders, the engine of src/engine/pairwise.ts) and a naive baseline (one plain
// prompt, one order) with the same model over a human-labelled suite of data/suites/, and prints
// accuracy, positional agreement, Cohen's kappa, tokens and cost beside published anchors.
//   npm run bench:quality -- --suite llmbar-natural [--model M] [--limit N] [--base-url U]
//     [--evaluator "Instruction Following"] [--concurrency 4] [--out report.json] [--no-naive]
//   Reports go to bench/reports/ (git-ignored) unless --out is given; --help lists the suites.
// The key comes from ANTHROPIC_API_KEY (never a flag). docs/QUALITY.md says what the numbers mean.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadConfig } from '../../src/config.ts';
import { loadPresets } from '../../src/domain/presets.ts';
import { costUsd } from '../../src/engine/cost.ts';
import { createJudgeModel } from '../../src/engine/index.ts';
import type { JudgeModel } from '../../src/engine/model.ts';
import { ComparingEngine, preparePair, ruleVerdict } from '../../src/engine/pairwise.ts';
import { callStructured } from '../../src/engine/structured-call.ts';
import type { Preference } from '../../src/schemas.ts';
import type { EvaluatorRecord } from '../../src/store/types.ts';
import { accuracy, cohenKappa, positionalAgreement, r4, type Verdict } from './metrics.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SUITES_DIR = path.join(ROOT, 'data/suites');
const GROUPS: Record<string, string[]> = {
  'llmbar-adversarial': ['llmbar-adversarial-neighbor', 'llmbar-adversarial-gptinst', 'llmbar-adversarial-gptout', 'llmbar-adversarial-manual'],
  llmbar: ['llmbar-natural', 'llmbar-adversarial-neighbor', 'llmbar-adversarial-gptinst', 'llmbar-adversarial-gptout', 'llmbar-adversarial-manual'],
};

/** Published accuracies (%) to read a result against (LLMBar paper, Zeng et al. 2023, Tables 2-3). */
export const ANCHORS = [
  { suite: 'llmbar-natural', judge: 'GPT-4, LLMBar rules + metrics + reference', accuracy: 93.5 },
  { suite: 'llmbar-adversarial', judge: 'GPT-4, plain prompt (Vanilla)', accuracy: 73.1 },
  { suite: 'llmbar-adversarial', judge: 'GPT-4, LLMBar rules + metrics + reference', accuracy: 82.8 },
  { suite: 'llmbar-adversarial', judge: 'ChatGPT, plain prompt', accuracy: 32 },
];

export interface SuitePair {
  id: string;
  request: string;
  output_1: string;
  output_2: string;
  label: 1 | 2;
}

export function loadSuite(name: string): SuitePair[] {
  const files = GROUPS[name] ?? [name];
  return files.flatMap((file) => {
    const p = path.join(SUITES_DIR, `${file}.jsonl`);
    if (!/^[a-z0-9-]+$/.test(file) || !fs.existsSync(p)) throw new UsageError(`unknown suite ${JSON.stringify(name)}; known: ${suiteNames().join(', ')}`);
    return fs
      .readFileSync(p, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as SuitePair);
  });
}

/** The shipped suites: the groups and every suite file in data/suites/. */
export function suiteNames(): string[] {
  return [
    ...Object.keys(GROUPS),
    ...fs
      .readdirSync(SUITES_DIR)
      .filter((f) => f.endsWith('.jsonl'))
      .map((f) => f.slice(0, -6)),
  ].sort();
}

/** Reports go to bench/reports/, which git ignores, unless --out says otherwise. */
export const REPORTS_DIR = path.join(ROOT, 'bench/reports');

class UsageError extends Error {}

const NAIVE_TOOL = {
  name: 'choose_output',
  description: 'Say which output is better.',
  input_schema: { type: 'object', properties: { preference: { type: 'string', enum: ['A', 'B'] } }, required: ['preference'], additionalProperties: false },
} as const;

/** The naive baseline: one plain prompt, output_1 always shown first, no rubric, no fencing, one call. */
export const naivePrompt = (p: SuitePair) =>
  `Which output is better for the instruction below?\n\nInstruction:\n${p.request}\n\nOutput (a):\n${p.output_1}\n\nOutput (b):\n${p.output_2}\n\nCall ${NAIVE_TOOL.name} with preference "A" for Output (a) or "B" for Output (b).`;

const toVerdict = (p: Preference | null): Verdict => (p === null ? null : p === 'a' ? 1 : p === 'b' ? 2 : 'tie');

interface Spent {
  input_tokens: number;
  output_tokens: number;
  cost_usd: number | null;
}
const addCost = (a: number | null, b: number | null) => (a === null || b === null ? null : Math.round((a + b) * 1e9) / 1e9);

interface PairOutcome {
  id: string;
  label: 1 | 2;
  tribunal: { first: Verdict; second: Verdict; verdict: Verdict; error?: string } & Spent;
  naive: ({ verdict: Verdict; error?: string } & Spent) | null;
}

function presetEvaluator(name: string): EvaluatorRecord {
  const preset = loadPresets().find((p) => p.name.toLowerCase() === name.toLowerCase());
  if (!preset) throw new UsageError(`no preset named ${JSON.stringify(name)} (see data/presets.json)`);
  const { tags: _tags, ...fields } = preset;
  return {
    ...fields,
    model: null,
    visibility: 'public',
    is_preset: true,
    project_id: null,
    version: 1,
    org_id: null,
    created_at: '',
    updated_at: '',
  } as unknown as EvaluatorRecord;
}

async function judgePair(
  engine: ComparingEngine,
  model: JudgeModel,
  config: ReturnType<typeof loadConfig>,
  evaluator: EvaluatorRecord,
  pair: SuitePair,
  naive: boolean,
): Promise<PairOutcome> {
  const input = { request: pair.request, response_a: pair.output_1, response_b: pair.output_2 };
  const rule = ruleVerdict(pair.output_1, pair.output_2);
  let tribunal: PairOutcome['tribunal'];
  if (rule) {
    const v = toVerdict(rule.preference);
    tribunal = { first: v, second: v, verdict: v, input_tokens: 0, output_tokens: 0, cost_usd: 0 };
  } else {
    const { result } = await engine.compareEvaluatorPair({ config }, evaluator, preparePair(input, [evaluator], config.limits));
    tribunal = {
      first: toVerdict(result.orders[0]?.preference ?? null),
      second: toVerdict(result.orders[1]?.preference ?? null),
      verdict: toVerdict(result.preference),
      input_tokens: result.input_tokens,
      output_tokens: result.output_tokens,
      cost_usd: result.cost_usd,
      ...(result.error ? { error: result.error } : {}),
    };
  }
  if (!naive) return { id: pair.id, label: pair.label, tribunal, naive: null };
  const name = config.model.name;
  const outcome = await callStructured(model, {
    attempts: 3,
    request: () => ({ model: name, system: 'You are a helpful assistant.', prompt: naivePrompt(pair), tool: NAIVE_TOOL, maxTokens: 256 }),
    check: (answer: unknown) => {
      const p = (answer as { preference?: unknown } | null)?.preference;
      return p === 'A' || p === 'B' ? { ok: true as const, value: p } : { ok: false as const, problems: ['preference must be "A" or "B"'] };
    },
  });
  const spent = { input_tokens: outcome.usage.input_tokens, output_tokens: outcome.usage.output_tokens, cost_usd: costUsd(name, outcome.usage, config.model.prices) };
  const verdict: Verdict = outcome.ok ? (outcome.value === 'A' ? 1 : 2) : null;
  return { id: pair.id, label: pair.label, tribunal, naive: { verdict, ...spent, ...(outcome.ok ? {} : { error: outcome.failure.message }) } };
}

async function pool<T, R>(items: T[], concurrency: number, work: (item: T, i: number) => Promise<R>, progress: (done: number) => void): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await work(items[i], i);
      progress(++done);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return out;
}

const sum = (xs: Spent[]) =>
  xs.reduce<Spent>((a, b) => ({ input_tokens: a.input_tokens + b.input_tokens, output_tokens: a.output_tokens + b.output_tokens, cost_usd: addCost(a.cost_usd, b.cost_usd) }), {
    input_tokens: 0,
    output_tokens: 0,
    cost_usd: 0,
  });

/** The report's figures from the per-pair outcomes. */
export function summarize(outcomes: PairOutcome[]) {
  const labels = outcomes.map((o) => o.label);
  const first = outcomes.map((o) => o.tribunal.first);
  const second = outcomes.map((o) => o.tribunal.second);
  const accFirst = accuracy(first, labels);
  const accSecond = accuracy(second, labels);
  const tribunal = {
    accuracy: r4((accFirst + accSecond) / 2),
    accuracy_output_1_first: r4(accFirst),
    accuracy_output_2_first: r4(accSecond),
    verdict_accuracy: r4(
      accuracy(
        outcomes.map((o) => o.tribunal.verdict),
        labels,
      ),
    ),
    tie_rate: r4(outcomes.filter((o) => o.tribunal.verdict === 'tie').length / outcomes.length),
    positional_agreement: r4(positionalAgreement(first, second)),
    kappa: r4(cohenKappa([...first, ...second], [...labels, ...labels])),
    failed: outcomes.filter((o) => o.tribunal.error).length,
    ...sum(outcomes.map((o) => o.tribunal)),
  };
  const naiveRuns = outcomes.flatMap((o) => (o.naive ? [o.naive] : []));
  const naive = naiveRuns.length
    ? {
        accuracy: r4(
          accuracy(
            naiveRuns.map((n) => n.verdict),
            labels,
          ),
        ),
        kappa: r4(
          cohenKappa(
            naiveRuns.map((n) => n.verdict),
            labels,
          ),
        ),
        failed: naiveRuns.filter((n) => n.error).length,
        ...sum(naiveRuns),
      }
    : null;
  return { tribunal, naive };
}

const pct = (x: number | null) => (x === null ? '   -  ' : `${(x * 100).toFixed(1).padStart(5)}%`);
const money = (c: number | null) => (c === null ? 'unknown' : `$${c.toFixed(4)}`);

async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      suite: { type: 'string' },
      model: { type: 'string' },
      limit: { type: 'string' },
      'base-url': { type: 'string' },
      evaluator: { type: 'string', default: 'Instruction Following' },
      concurrency: { type: 'string', default: '4' },
      out: { type: 'string' },
      'no-naive': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help || !values.suite) {
    console.log(
      `Usage: npm run bench:quality -- --suite <name> [--model M] [--limit N] [--base-url U] [--evaluator NAME] [--concurrency N] [--out FILE] [--no-naive]\n` +
        `The key comes from ANTHROPIC_API_KEY. Reports go to bench/reports/ unless --out is given.\n` +
        `Suites (data/suites/README.md says where each comes from):\n${suiteNames()
          .map((n) => `  ${n}`)
          .join('\n')}`,
    );
    return values.help ? 0 : 2;
  }
  const limit = values.limit === undefined ? Infinity : Number(values.limit);
  const concurrency = Number(values.concurrency);
  if (!(limit >= 1) || !Number.isInteger(concurrency) || concurrency < 1) throw new UsageError('--limit and --concurrency take whole numbers of at least 1');
  const pairs = loadSuite(values.suite).slice(0, limit);
  const evaluator = presetEvaluator(values.evaluator!);
  const env: Record<string, string | undefined> = { ...process.env };
  if (values.model) env.TRIBUNAL_MODEL = values.model;
  if (values['base-url']) env.ANTHROPIC_BASE_URL = values['base-url'];
  if (!env.ANTHROPIC_API_KEY) throw new UsageError('set ANTHROPIC_API_KEY (the judge model is called for real; see docs/QUALITY.md)');
  const config = loadConfig(env);
  const model = createJudgeModel(config);
  const engine = new ComparingEngine(model);
  const started = new Date().toISOString();
  const t0 = performance.now();
  const outcomes = await pool(
    pairs,
    concurrency,
    (p) => judgePair(engine, model, config, evaluator, p, !values['no-naive']),
    (done) => {
      if (process.stderr.isTTY) process.stderr.write(`\r${done}/${pairs.length} pairs`);
    },
  );
  if (process.stderr.isTTY) process.stderr.write('\n');
  const { tribunal, naive } = summarize(outcomes);
  const anchors = ANCHORS.filter((a) => values.suite!.startsWith(a.suite) || a.suite.startsWith(values.suite!));
  const report = {
    suite: values.suite,
    pairs: pairs.length,
    model: config.model.name,
    evaluator: evaluator.name,
    started_at: started,
    seconds: Math.round(performance.now() - t0) / 1000,
    tribunal,
    naive,
    anchors,
    outcomes,
  };
  let out = values.out;
  if (!out) {
    fs.mkdirSync(REPORTS_DIR, { recursive: true });
    out = path.join(REPORTS_DIR, `quality-${values.suite}-${config.model.name}.json`);
  }
  fs.writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);

  console.log(`bench:quality  suite ${values.suite} (${pairs.length} pairs)  model ${config.model.name}  evaluator ${evaluator.name}`);
  console.log('                             accuracy  pos.agree   kappa   verdict acc.  ties    failed  tokens in/out      cost');
  console.log(
    `  Tribunal (both orders)      ${pct(tribunal.accuracy)}    ${pct(tribunal.positional_agreement)}   ${String(tribunal.kappa ?? '-').padStart(6)}   ${pct(tribunal.verdict_accuracy)}     ${pct(tribunal.tie_rate)}  ${String(tribunal.failed).padStart(5)}   ${tribunal.input_tokens}/${tribunal.output_tokens}   ${money(tribunal.cost_usd)}`,
  );
  if (naive)
    console.log(
      `  Naive (one prompt, one order) ${pct(naive.accuracy)}        -     ${String(naive.kappa ?? '-').padStart(6)}        -          -    ${String(naive.failed).padStart(5)}   ${naive.input_tokens}/${naive.output_tokens}   ${money(naive.cost_usd)}`,
    );
  for (const a of anchors) console.log(`  published: ${a.judge} on ${a.suite}: ${a.accuracy.toFixed(1)}%`);
  console.log(`report: ${out}`);
  return 0;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err) => {
      console.error(err instanceof UsageError ? `bench:quality: ${err.message}` : err);
      process.exit(err instanceof UsageError ? 2 : 1);
    },
  );
}
