// bench:quality: how good are Tribunal's judges? Runs Tribunal's own pairwise judging (an
// evaluator, both orders, the engine of src/engine/pairwise.ts) and a naive baseline (one plain
// prompt, one order) with the same model over a human-labelled suite of data/suites/, and prints
// accuracy, positional agreement, Cohen's kappa (each with a seeded 95% bootstrap interval), tokens
// and cost beside published anchors. A best-of-4 suite (RewardBench 2's format, bestof4.ts) is
// judged as ratings and as a ranking instead.
//   npm run bench:quality -- (--suite llmbar-natural | --suite-file F.jsonl) [--subset S] [--model M]
//     [--provider anthropic|openai] [--base-url U] [--api-key-env VAR] [--strategy tool|json_schema|json]
//     [--limit N] [--evaluator "Instruction Following"] [--concurrency 4] [--out report.json] [--no-naive]
//   Reports go to bench/reports/ (git-ignored) unless --out is given; --help lists the suites.
// The key comes from an environment variable (ANTHROPIC_API_KEY, OPENAI_API_KEY or --api-key-env;
// never a flag). docs/QUALITY.md says what the numbers mean.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadConfig } from '../../src/config.ts';
import { loadPresets } from '../../src/domain/presets.ts';
import { costUsd } from '../../src/engine/providers/cost.ts';
import { Engine } from '../../src/engine/engine.ts';
import { preparePair, ruleVerdict } from '../../src/engine/pairwise.ts';
import type { ScoringTarget } from '../../src/engine/target.ts';
import { callStructured } from '../../src/engine/structured-call.ts';
import type { Preference } from '../../src/schemas.ts';
import type { EvaluatorRecord } from '../../src/store/types.ts';
import { judgeItem, summarizeBestOf4 } from './bestof4.ts';
import { bootstrapInterval, type Interval } from './intervals.ts';
import { accuracy, cohenKappa, positionalAgreement, r4, type Verdict } from './metrics.ts';
import { benchTarget, PROVIDERS, STRATEGIES, UsageError, type BenchProvider } from './provider.ts';
import { loadNamedSuite, loadSuiteFile, suiteNames, type Loaded, type SuitePair } from './suites.ts';
import type { AnswerStrategy } from '../../src/engine/providers/json-answer.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Published accuracies (%) to read a result against (LLMBar paper, Zeng et al. 2023, Tables 2-3). */
export const ANCHORS = [
  { suite: 'llmbar-natural', judge: 'GPT-4, LLMBar rules + metrics + reference', accuracy: 93.5 },
  { suite: 'llmbar-adversarial', judge: 'GPT-4, plain prompt (Vanilla)', accuracy: 73.1 },
  { suite: 'llmbar-adversarial', judge: 'GPT-4, LLMBar rules + metrics + reference', accuracy: 82.8 },
  { suite: 'llmbar-adversarial', judge: 'ChatGPT, plain prompt', accuracy: 32 },
];

/** Reports go to bench/reports/, which git ignores, unless --out says otherwise. */
export const REPORTS_DIR = path.join(ROOT, 'bench/reports');

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
  engine: Engine,
  target: ScoringTarget,
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
    const { result } = await engine.compareEvaluatorPair({ config }, evaluator, preparePair(input, [evaluator], config.limits), target);
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
  const name = target.modelName;
  const outcome = await callStructured(target.model, {
    attempts: 3,
    request: () => ({
      model: name,
      system: 'You are a helpful assistant.',
      prompt: naivePrompt(pair),
      tool: NAIVE_TOOL,
      maxTokens: 256,
      strategy: target.strategy,
      temperature: target.temperature,
    }),
    check: (answer: unknown) => {
      const p = (answer as { preference?: unknown } | null)?.preference;
      return p === 'A' || p === 'B' ? { ok: true as const, value: p } : { ok: false as const, problems: ['preference must be "A" or "B"'] };
    },
  });
  const spent = { input_tokens: outcome.usage.input_tokens, output_tokens: outcome.usage.output_tokens, cost_usd: costUsd(name, outcome.usage, target.prices, target.provider) };
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

const pick = <T>(xs: T[], idx: number[]) => idx.map((i) => xs[i]);

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
    // Seeded 95% bootstrap intervals over pairs (intervals.ts): both orders of a pair move together.
    accuracy_interval: bootstrapInterval(outcomes.length, (idx) => (accuracy(pick(first, idx), pick(labels, idx)) + accuracy(pick(second, idx), pick(labels, idx))) / 2),
    kappa_interval: bootstrapInterval(outcomes.length, (idx) => cohenKappa([...pick(first, idx), ...pick(second, idx)], [...pick(labels, idx), ...pick(labels, idx)])),
    failed: outcomes.filter((o) => o.tribunal.error).length,
    ...sum(outcomes.map((o) => o.tribunal)),
  };
  const naiveRuns = outcomes.flatMap((o) => (o.naive ? [o.naive] : []));
  const naiveVerdicts = naiveRuns.map((n) => n.verdict);
  const naive = naiveRuns.length
    ? {
        accuracy_interval: bootstrapInterval(naiveRuns.length, (idx) => accuracy(pick(naiveVerdicts, idx), pick(labels, idx))),
        kappa_interval: bootstrapInterval(naiveRuns.length, (idx) => cohenKappa(pick(naiveVerdicts, idx), pick(labels, idx))),
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

const fmtInterval = (i: Interval) => (i ? `[${(i[0] * 100).toFixed(1)}, ${(i[1] * 100).toFixed(1)}]` : '[-]');
const fmtKappaInterval = (i: Interval) => (i ? `[${i[0].toFixed(2)}, ${i[1].toFixed(2)}]` : '[-]');

async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      suite: { type: 'string' },
      'suite-file': { type: 'string' },
      subset: { type: 'string' },
      model: { type: 'string' },
      provider: { type: 'string', default: 'anthropic' },
      'api-key-env': { type: 'string' },
      strategy: { type: 'string' },
      limit: { type: 'string' },
      'base-url': { type: 'string' },
      evaluator: { type: 'string', default: 'Instruction Following' },
      concurrency: { type: 'string', default: '4' },
      out: { type: 'string' },
      'no-naive': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help || (!values.suite && !values['suite-file'])) {
    console.log(
      `Usage: npm run bench:quality -- (--suite <name> | --suite-file <file.jsonl>) [--subset S] [--model M] [--provider anthropic|openai]\n` +
        `         [--base-url U] [--api-key-env VAR] [--strategy tool|json_schema|json] [--limit N] [--evaluator NAME] [--concurrency N] [--out FILE] [--no-naive]\n` +
        `The key comes from ANTHROPIC_API_KEY (--provider anthropic) or OPENAI_API_KEY (--provider openai; a local server may need none), or the variable --api-key-env names.\n` +
        `--suite-file takes pairs {request, output_1, output_2, label} or best-of-4 items {id, prompt, chosen: [1], rejected: [3], subset} (RewardBench 2's format).\n` +
        `Reports go to bench/reports/ unless --out is given.\n` +
        `Suites (data/suites/README.md says where each comes from):\n${suiteNames()
          .map((n) => `  ${n}`)
          .join('\n')}`,
    );
    return values.help ? 0 : 2;
  }
  if (values.suite && values['suite-file']) throw new UsageError('give --suite or --suite-file, not both');
  const limit = values.limit === undefined ? Infinity : Number(values.limit);
  const concurrency = Number(values.concurrency);
  if (!(limit >= 1) || !Number.isInteger(concurrency) || concurrency < 1) throw new UsageError('--limit and --concurrency take whole numbers of at least 1');
  const provider = values.provider as BenchProvider;
  if (!PROVIDERS.includes(provider)) throw new UsageError(`--provider is one of ${PROVIDERS.join(', ')}`);
  const strategy = values.strategy as AnswerStrategy | undefined;
  if (strategy !== undefined && !STRATEGIES.includes(strategy)) throw new UsageError(`--strategy is one of ${STRATEGIES.join(', ')}`);
  if (provider === 'openai' && !values.model) throw new UsageError('give --model: the name the OpenAI-compatible server serves the judge model under');
  const suiteName = values.suite ?? path.basename(values['suite-file']!, '.jsonl');
  const loaded: Loaded = values.suite ? loadNamedSuite(values.suite) : loadSuiteFile(values['suite-file']!);
  const evaluator = presetEvaluator(values.evaluator!);
  const env: Record<string, string | undefined> = { ...process.env };
  if (values.model) env.TRIBUNAL_MODEL = values.model;
  if (values['base-url'] && provider === 'anthropic') env.ANTHROPIC_BASE_URL = values['base-url'];
  const config = loadConfig(env);
  const { model, target } = benchTarget(config, env, { provider, keyEnv: values['api-key-env'], baseUrl: values['base-url'], strategy });
  const engine = new Engine(model);
  const started = new Date().toISOString();
  const t0 = performance.now();
  const progress = (total: number) => (done: number) => {
    if (process.stderr.isTTY) process.stderr.write(`\r${done}/${total}`);
  };
  const head = { suite: suiteName, provider, model: config.model.name, evaluator: evaluator.name, started_at: started };
  let report: Record<string, unknown>;
  const lines: string[] = [];
  if (loaded.kind === 'bestof4') {
    const items = loaded.items.filter((i) => values.subset === undefined || i.subset === values.subset).slice(0, limit);
    if (!items.length) throw new UsageError(`no best-of-4 items${values.subset ? ` in subset ${JSON.stringify(values.subset)}` : ''} (${loaded.skipped} lines were not best-of-4)`);
    // The shown order of the ranking call: seeded by the item's position, so a rerun shows the same order.
    const outcomes = await pool(items, concurrency, (item, i) => judgeItem(engine, config, target, evaluator, item, 1000 + i), progress(items.length));
    const summary = summarizeBestOf4(outcomes);
    report = { ...head, format: 'best-of-4', items: items.length, skipped: loaded.skipped, seconds: 0, ...summary, outcomes };
    const { rating, ranking } = summary;
    lines.push(
      `bench:quality  suite ${suiteName} (${items.length} best-of-4 items, ${loaded.skipped} skipped)  ${provider} model ${config.model.name}  evaluator ${evaluator.name}`,
      '                             accuracy   95% interval    ties    failed  tokens in/out      cost',
      `  Ratings (4 scored apart)    ${pct(rating.accuracy)}   ${fmtInterval(rating.accuracy_interval).padEnd(14)}  ${pct(rating.tie_rate)}  ${String(rating.failed).padStart(5)}   ${rating.input_tokens}/${rating.output_tokens}   ${money(rating.cost_usd)}`,
      `  Ranking (one call)          ${pct(ranking.accuracy)}   ${fmtInterval(ranking.accuracy_interval).padEnd(14)}      -   ${String(ranking.failed).padStart(5)}   ${ranking.input_tokens}/${ranking.output_tokens}   ${money(ranking.cost_usd)}`,
      `  chance (best of 4)          ${pct(summary.chance)}`,
      ...Object.entries(summary.by_subset).map(([s, v]) => `  subset ${s}: n ${v.n}, ratings ${pct(v.rating_accuracy)}, ranking ${pct(v.ranking_accuracy)}`),
    );
  } else {
    const pairs = loaded.pairs.slice(0, limit);
    const outcomes = await pool(pairs, concurrency, (p) => judgePair(engine, target, config, evaluator, p, !values['no-naive']), progress(pairs.length));
    const { tribunal, naive } = summarize(outcomes);
    const anchors = ANCHORS.filter((a) => suiteName.startsWith(a.suite) || a.suite.startsWith(suiteName));
    report = { ...head, pairs: pairs.length, seconds: 0, tribunal, naive, anchors, outcomes };
    lines.push(
      `bench:quality  suite ${suiteName} (${pairs.length} pairs)  ${provider} model ${config.model.name}  evaluator ${evaluator.name}`,
      '                             accuracy   95% interval   pos.agree   kappa  95% interval   verdict acc.  ties    failed  tokens in/out      cost',
      `  Tribunal (both orders)      ${pct(tribunal.accuracy)}   ${fmtInterval(tribunal.accuracy_interval).padEnd(13)}  ${pct(tribunal.positional_agreement)}   ${String(tribunal.kappa ?? '-').padStart(6)} ${fmtKappaInterval(tribunal.kappa_interval).padEnd(13)}  ${pct(tribunal.verdict_accuracy)}     ${pct(tribunal.tie_rate)}  ${String(tribunal.failed).padStart(5)}   ${tribunal.input_tokens}/${tribunal.output_tokens}   ${money(tribunal.cost_usd)}`,
    );
    if (naive)
      lines.push(
        `  Naive (one prompt, one order) ${pct(naive.accuracy)} ${fmtInterval(naive.accuracy_interval).padEnd(13)}       -     ${String(naive.kappa ?? '-').padStart(6)} ${fmtKappaInterval(naive.kappa_interval).padEnd(13)}       -          -    ${String(naive.failed).padStart(5)}   ${naive.input_tokens}/${naive.output_tokens}   ${money(naive.cost_usd)}`,
      );
    for (const a of anchors) lines.push(`  published: ${a.judge} on ${a.suite}: ${a.accuracy.toFixed(1)}%`);
  }
  if (process.stderr.isTTY) process.stderr.write('\n');
  report.seconds = Math.round(performance.now() - t0) / 1000;
  let out = values.out;
  if (!out) {
    fs.mkdirSync(REPORTS_DIR, { recursive: true });
    out = path.join(REPORTS_DIR, `quality-${suiteName}-${config.model.name.replace(/[^A-Za-z0-9._-]/g, '_')}.json`);
  }
  fs.writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
  for (const line of lines) console.log(line);
  console.log('  intervals: 95%, seeded percentile bootstrap over items (2000 resamples)');
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
