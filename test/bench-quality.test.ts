// bench:quality's machinery against the fake judge model, which always prefers the position shown
// first: Tribunal's pairwise judging must expose that (positional agreement 0, every pair a tie,
// accuracy exactly 0.5 averaged over both orders, kappa 0), while the naive baseline, asked in one
// order only, cannot tell and scores the share of pairs whose label happens to be output 1.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { checkRanking, parseBestOf4, ratingVerdict, shownOrder } from '../bench/quality/bestof4.ts';
import { bootstrapInterval, shareInterval } from '../bench/quality/intervals.ts';
import { accuracy, cohenKappa, positionalAgreement } from '../bench/quality/metrics.ts';
import { loadNamedSuite, loadSuite, SUITES_DIR, suiteNames } from '../bench/quality/suites.ts';
import { ROOT } from './helpers/cli.ts';
import { startFakeAnthropic, toolAnswer, type FakeAnthropic } from './helpers/fake-anthropic.ts';
import { startFakeOpenAI } from './helpers/fake-openai.ts';
import { cleanEnv, tempDir } from './helpers/server.ts';

let fake: FakeAnthropic;
before(async () => {
  fake = await startFakeAnthropic();
  fake.respondWith((req) => toolAnswer({ justification: 'The first one shown is better.', preference: 'A' }, { usage: { input_tokens: 100, output_tokens: 10 } }));
});
after(() => fake.close());

function runBench(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bench/quality/run.ts', ...args], { cwd: ROOT, env: { ...cleanEnv(), ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

test('the suites hold what their README says: 419 LLMBar pairs and 200 MT-Bench pairs, labels 1 or 2', () => {
  assert.equal(loadSuite('llmbar').length, 419);
  assert.equal(loadSuite('llmbar-natural').length, 100);
  assert.equal(loadSuite('llmbar-adversarial').length, 319);
  const mt = loadSuite('mtbench-human');
  assert.equal(mt.length, 200);
  for (const p of [...loadSuite('llmbar'), ...mt]) {
    assert.ok(p.label === 1 || p.label === 2, p.id);
    assert.ok(p.request && p.output_1 && p.output_2, p.id);
  }
});

test('metrics: accuracy, positional agreement and kappa on hand-checked cases', () => {
  assert.equal(accuracy([1, 2, 'tie', null], [1, 1, 1, 1]), 0.25);
  assert.equal(positionalAgreement([1, 2, null, 'tie'], [1, 1, null, 'tie']), 0.5);
  assert.equal(cohenKappa([1, 2, 1, 2], [1, 2, 1, 2]), 1);
  // Always the same answer: agreement only by chance.
  assert.equal(cohenKappa([1, 1, 1, 1], [1, 2, 1, 2]), 0);
  // 3 of 4 agree, marginals 0.5/0.5 both: (0.75 - 0.5) / 0.5.
  assert.equal(cohenKappa([1, 2, 1, 1], [1, 2, 1, 2]), 0.5);
});

test('against a judge that always prefers the first position: agreement 0, every pair a tie, kappa 0', async () => {
  const out = path.join(tempDir(), 'report.json');
  fake.resetStats();
  const r = await runBench(['--suite', 'llmbar-natural', '--limit', '6', '--model', 'claude-sonnet-4-5', '--base-url', fake.url, '--out', out], {
    ANTHROPIC_API_KEY: 'sk-ant-test-dummy',
  });
  assert.equal(r.code, 0, r.stderr);
  const report = JSON.parse(fs.readFileSync(out, 'utf8'));
  const labels = loadSuite('llmbar-natural')
    .slice(0, 6)
    .map((p) => p.label);
  assert.equal(report.pairs, 6);
  assert.equal(report.evaluator, 'Instruction Following');
  assert.equal(report.tribunal.positional_agreement, 0);
  assert.equal(report.tribunal.accuracy, 0.5);
  assert.equal(report.tribunal.kappa, 0);
  assert.equal(report.tribunal.tie_rate, 1);
  assert.equal(report.tribunal.verdict_accuracy, 0);
  for (const o of report.outcomes) assert.deepEqual([o.tribunal.first, o.tribunal.second, o.tribunal.verdict], [1, 2, 'tie']);
  // Two orders per pair of 100 in / 10 out at $3/$15 per million; the naive baseline one call each.
  assert.deepEqual([report.tribunal.input_tokens, report.tribunal.output_tokens], [1200, 120]);
  assert.equal(report.tribunal.cost_usd, 0.0054);
  const ones = labels.filter((l) => l === 1).length / labels.length;
  assert.equal(report.naive.accuracy, Math.round(ones * 10_000) / 10_000);
  assert.deepEqual([report.naive.input_tokens, report.naive.failed], [600, 0]);
  // 6 pairs x (2 Tribunal orders + 1 naive call); the Tribunal prompts hold the preset's rubric and fences.
  assert.equal(fake.requests.length, 18);
  const tribunalCalls = fake.requests.filter((q) => q.toolName === 'submit_comparison');
  assert.equal(tribunalCalls.length, 12);
  assert.ok(tribunalCalls.every((q) => q.system.includes('Name: Instruction Following')));
  const naiveCalls = fake.requests.filter((q) => q.toolName === 'choose_output');
  assert.equal(naiveCalls.length, 6);
  assert.ok(naiveCalls.every((q) => q.prompt.includes('Output (a):') && !q.prompt.includes('<response_')));
  assert.match(r.stdout, /Tribunal \(both orders\)\s+50\.0%\s+\[50\.0, 50\.0\]\s+0\.0%/);
  assert.match(r.stdout, /published: GPT-4, LLMBar rules \+ metrics \+ reference on llmbar-natural: 93\.5%/);
});

test('usage errors: an unknown suite, no key', async () => {
  const unknown = await runBench(['--suite', 'nope', '--base-url', fake.url], { ANTHROPIC_API_KEY: 'sk-ant-test-dummy' });
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /unknown suite "nope"; known: .*llmbar-natural/);
  const nokey = await runBench(['--suite', 'llmbar-natural', '--limit', '1']);
  assert.equal(nokey.code, 2);
  assert.match(nokey.stderr, /ANTHROPIC_API_KEY/);
});

test('--help lists every shipped suite and says where reports go', async () => {
  const help = await runBench(['--help']);
  assert.equal(help.code, 0);
  for (const name of suiteNames()) assert.match(help.stdout, new RegExp(`^  ${name}$`, 'm'));
  assert.ok(suiteNames().includes('mtbench-human') && suiteNames().includes('llmbar'));
  assert.match(help.stdout, /bench\/reports\//);
});

// ---- issue 31 item 6: intervals, the OpenAI-compatible protocol, best-of-4 suites -----------------
// test/fixtures/bestof4-format-fixture.jsonl is a FORMAT FIXTURE written for these tests (RewardBench
// 2's fields, made-up items marked as such in their prompts), not RewardBench 2 data. Each response
// carries the score the fake judge gives it ("quality-0.9").

const FIXTURE = 'test/fixtures/bestof4-format-fixture.jsonl';
const quality = (text: string) => Number(/quality-(\d\.\d)/.exec(text)?.[1]);

test('intervals: seeded (the same outcomes give the same interval), around the estimate, null when undefined', () => {
  const hits = Array.from({ length: 200 }, (_, i) => i % 4 !== 0); // 75%
  const a = shareInterval(hits);
  assert.deepEqual(a, shareInterval(hits), 'seeded');
  assert.ok(a && a[0] < 0.75 && 0.75 < a[1] && a[1] - a[0] < 0.15, JSON.stringify(a));
  // A normal-approximation check: 1.96 * sqrt(.75 * .25 / 200) = 0.06; the percentile interval is close.
  assert.ok(Math.abs(a![1] - a![0] - 0.12) < 0.03, JSON.stringify(a));
  const other = shareInterval(hits, { seed: 7 });
  assert.ok(other && other[0] < 0.75 && 0.75 < other[1], 'another seed: another draw, still around the estimate');
  assert.deepEqual(shareInterval([true, true, true]), [1, 1]);
  assert.equal(shareInterval([true]), null, 'one item: no interval');
  assert.equal(
    bootstrapInterval(10, () => Number.NaN),
    null,
    'a statistic undefined in every resample',
  );
});

test('best-of-4 pieces: the rating verdict, a ranking check, a seeded shown order, the loader', () => {
  assert.equal(ratingVerdict([0.9, 0.2, 0.5, 0.4]), 'correct');
  assert.equal(ratingVerdict([0.7, 0.7, 0.1, 0.3]), 'tie');
  assert.equal(ratingVerdict([0.3, 0.8, 0.1, 0.2]), 'wrong');
  assert.equal(ratingVerdict([0.9, null, 0.1, 0.2]), 'failed');
  assert.deepEqual(checkRanking({ ranking: ['C', 'A', 'D', 'B'] }), { ok: true, value: ['C', 'A', 'D', 'B'] });
  for (const bad of [['A', 'A', 'B', 'C'], ['A', 'B', 'C'], ['A', 'B', 'C', 'E'], 'ABCD']) assert.equal(checkRanking({ ranking: bad }).ok, false, JSON.stringify(bad));
  assert.deepEqual(shownOrder(1001), shownOrder(1001));
  assert.deepEqual([...shownOrder(1001)].sort(), [0, 1, 2, 3]);
  const { items, skipped } = parseBestOf4(fs.readFileSync(path.join(ROOT, FIXTURE), 'utf8'), FIXTURE);
  assert.equal(items.length, 3);
  assert.equal(skipped, 1, 'the Ties-style item (two correct answers) is not best-of-4');
  assert.throws(
    () => parseBestOf4('{"id": 9, "prompt": "", "chosen": ["a"], "rejected": ["b", "c", "d"]}', 'x.jsonl'),
    /x\.jsonl line 1 \(id 9\): "prompt" must be a non-empty string/,
  );
  assert.throws(() => parseBestOf4('{"prompt": "p", "chosen": "a", "rejected": []}\n', 'x.jsonl'), /line 1: "chosen" and "rejected" must be lists of strings/);
});

test('a best-of-4 suite file: each answer rated apart and the four ranked in one call, with intervals', async () => {
  // The fake rates a response by its quality marker, and ranks the four shown by their markers (best first, ties in label order).
  fake.resetStats();
  fake.respondWith((req) => {
    if (req.toolName === 'submit_evaluation') return toolAnswer({ justification: 'By its marker.', score: quality(req.prompt.split('<response_')[1] ?? '') });
    const shown = [...req.prompt.matchAll(/<response_[0-9a-f]+ label="([A-D])">\n([^\n]*)/g)].map((m) => ({ label: m[1], q: quality(m[2]) }));
    const ranking = [...shown].sort((a, b) => b.q - a.q).map((s) => s.label);
    return toolAnswer({ justification: 'By the markers.', ranking });
  });
  const out = path.join(tempDir(), 'bestof4.json');
  const r = await runBench(['--suite-file', FIXTURE, '--base-url', fake.url, '--model', 'claude-sonnet-4-5', '--out', out], { ANTHROPIC_API_KEY: 'sk-ant-test-dummy' });
  fake.respondWith(() => toolAnswer({ justification: 'The first one shown is better.', preference: 'A' }, { usage: { input_tokens: 100, output_tokens: 10 } }));
  assert.equal(r.code, 0, r.stderr);
  const report = JSON.parse(fs.readFileSync(out, 'utf8'));
  assert.equal(report.format, 'best-of-4');
  assert.deepEqual([report.items, report.skipped], [3, 1]);
  assert.deepEqual(
    report.outcomes.map((o: any) => o.rating.verdict),
    ['correct', 'tie', 'wrong'],
  );
  assert.equal(report.rating.accuracy, 0.3333);
  assert.equal(report.rating.tie_rate, 0.3333);
  // Ranking: item 1 chosen best outright (first); item 3 chosen second (0.8 above it); item 2 ties with a
  // rejected one at 0.7, so first only when it is shown before that one (label order breaks the tie).
  const order2 = shownOrder(1001);
  const chosenFirst2 = order2.indexOf(0) < order2.indexOf(1);
  assert.deepEqual(
    report.outcomes.map((o: any) => o.ranking.chosen_place),
    [1, chosenFirst2 ? 1 : 2, 2],
  );
  assert.equal(report.ranking.accuracy, chosenFirst2 ? 0.6667 : 0.3333);
  for (const m of [report.rating, report.ranking]) {
    assert.equal(m.accuracy_interval.length, 2);
    assert.ok(m.accuracy_interval[0] <= m.accuracy && m.accuracy <= m.accuracy_interval[1], JSON.stringify(m));
  }
  assert.deepEqual(Object.keys(report.by_subset), ['Fixture', 'Other fixture']);
  // 3 items x (4 ratings + 1 ranking); every ranking shows the four fenced, and no item twice in one order.
  assert.equal(fake.requests.filter((q) => q.toolName === 'submit_evaluation').length, 12);
  const rankings = fake.requests.filter((q) => q.toolName === 'submit_ranking');
  assert.equal(rankings.length, 3);
  assert.ok(rankings.every((q) => (q.prompt.match(/<response_[0-9a-f]+ label="[A-D]">/g) ?? []).length === 4 && q.system.includes('Name: Instruction Following')));
  assert.match(r.stdout, /Ratings \(4 scored apart\)\s+33\.3%\s+\[/);
  assert.match(r.stdout, /chance \(best of 4\)\s+25\.0%/);
  const subset = await runBench(['--suite-file', FIXTURE, '--subset', 'Nope', '--base-url', fake.url], { ANTHROPIC_API_KEY: 'sk-ant-test-dummy' });
  assert.equal(subset.code, 2);
  assert.match(subset.stderr, /no best-of-4 items in subset "Nope" \(1 lines were not best-of-4\)/);
});

test('--provider openai: pairs and best-of-4 against an OpenAI-compatible server, the key from the named variable', async () => {
  const oa = await startFakeOpenAI();
  try {
    oa.answer = { justification: 'The first one shown is better.', preference: 'A' };
    const out = path.join(tempDir(), 'openai.json');
    const r = await runBench(
      ['--suite', 'llmbar-natural', '--limit', '4', '--provider', 'openai', '--base-url', oa.url, '--model', 'local-judge', '--api-key-env', 'MY_JUDGE_KEY', '--out', out],
      {
        MY_JUDGE_KEY: 'sk-local-test',
      },
    );
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(fs.readFileSync(out, 'utf8'));
    assert.deepEqual([report.provider, report.model, report.pairs], ['openai', 'local-judge', 4]);
    assert.equal(report.tribunal.positional_agreement, 0, 'the same always-first judge, exposed the same way');
    assert.equal(report.tribunal.cost_usd, null, 'no price known for a local model: unknown, not 0');
    const calls = oa.requests.filter((q) => q.path.endsWith('/chat/completions'));
    assert.equal(calls.length, 12); // 4 pairs x (2 orders + 1 naive)
    assert.ok(calls.every((q) => q.headers.authorization === 'Bearer sk-local-test' && q.body.model === 'local-judge'));
    assert.deepEqual([...new Set(calls.map((q) => q.body.tool_choice.function.name))].sort(), ['choose_output', 'submit_comparison']);

    // Best-of-4 on the same server: every rating 0.5 (all tie), the ranking always A, B, C, D.
    oa.answers.submit_evaluation = { justification: 'Middling.', score: 0.5 };
    oa.answers.submit_ranking = { justification: 'In order.', ranking: ['A', 'B', 'C', 'D'] };
    const out4 = path.join(tempDir(), 'openai-bestof4.json');
    const b4 = await runBench(['--suite-file', FIXTURE, '--provider', 'openai', '--base-url', oa.url, '--model', 'local-judge', '--out', out4], {});
    assert.equal(b4.code, 0, b4.stderr);
    const r4 = JSON.parse(fs.readFileSync(out4, 'utf8'));
    assert.equal(r4.rating.tie_rate, 1);
    assert.equal(r4.rating.accuracy, 0);
    const firstShown = [1000, 1001, 1002].map((seed) => shownOrder(seed)[0] === 0);
    assert.deepEqual(
      r4.outcomes.map((o: any) => o.ranking.chosen_place === 1),
      firstShown,
    );
    assert.ok(
      oa.requests.slice(12).every((q) => q.headers.authorization === 'Bearer no-key'),
      "no key set: the SDK's placeholder, as for a registered model without a key (a local server)",
    );

    const nomodel = await runBench(['--suite', 'llmbar-natural', '--provider', 'openai', '--base-url', oa.url]);
    assert.equal(nomodel.code, 2);
    assert.match(nomodel.stderr, /give --model/);
    const badProvider = await runBench(['--suite', 'llmbar-natural', '--provider', 'gemini']);
    assert.match(badProvider.stderr, /--provider is one of anthropic, openai/);
  } finally {
    await oa.close();
  }
});

// ---- the shipped RewardBench 2 subset (data/suites/rewardbench2-subset.jsonl, LICENSE-RewardBench2) ----
// Real items, copied verbatim: contiguous id runs of five subsets, as the licence file beside it lists.
const RB2_IDS: Record<string, [number, number]> = { Factuality: [0, 12], 'Precise IF': [537, 549], Math: [720, 736], Safety: [1023, 1035], Focus: [1402, 1413] };

test('the shipped RewardBench 2 subset: 68 best-of-4 items, the ids and fields its licence file names', () => {
  const loaded = loadNamedSuite('rewardbench2-subset');
  assert.equal(loaded.kind, 'bestof4');
  if (loaded.kind !== 'bestof4') return;
  assert.deepEqual([loaded.items.length, loaded.skipped], [68, 0]);
  const expected = Object.entries(RB2_IDS).flatMap(([subset, [from, to]]) => Array.from({ length: to - from + 1 }, (_, i) => `${subset}:${from + i}`));
  assert.deepEqual(
    loaded.items.map((i) => `${i.subset}:${i.id}`),
    expected,
  );
  const lines = fs.readFileSync(path.join(SUITES_DIR, 'rewardbench2-subset.jsonl'), 'utf8').split('\n').filter(Boolean);
  for (const line of lines) {
    const row = JSON.parse(line);
    assert.deepEqual([row.num_correct, row.num_incorrect, row.total_completions, row.models.length], [1, 3, 4, 4], row.id);
    assert.ok(
      [row.prompt, ...row.chosen, ...row.rejected].every((t: unknown) => typeof t === 'string' && t.trim().length > 0),
      row.id,
    );
    assert.ok(!line.includes('FORMAT FIXTURE'), 'real data, not the test fixture');
  }
  assert.ok(suiteNames().includes('rewardbench2-subset'));
  assert.throws(() => loadSuite('rewardbench2-subset'), /best-of-4, not pairs/);
  const licence = fs.readFileSync(path.join(SUITES_DIR, 'LICENSE-RewardBench2'), 'utf8');
  assert.match(licence, /ODC-By\) v1\.0/);
  assert.match(licence, /tlxxzj\/reward_bench2_dataset[\s\S]*260c0416bffa37c31af2f652efe65323acf98b60/);
  for (const [subset, [from, to]] of Object.entries(RB2_IDS)) assert.match(licence, new RegExp(`${subset}\\s+${to - from + 1}\\s+${from}-${to}`));
});

test('--suite rewardbench2-subset runs by name against the fake model, over both protocols', async () => {
  // Every rating 0.5 (all tie) and every ranking A, B, C, D: ratings never correct, the ranking right when the chosen one is shown first.
  fake.resetStats();
  fake.respondWith((req) =>
    req.toolName === 'submit_evaluation' ? toolAnswer({ justification: 'Middling.', score: 0.5 }) : toolAnswer({ justification: 'In order.', ranking: ['A', 'B', 'C', 'D'] }),
  );
  const out = path.join(tempDir(), 'rb2.json');
  const r = await runBench(['--suite', 'rewardbench2-subset', '--subset', 'Math', '--limit', '2', '--base-url', fake.url, '--out', out], {
    ANTHROPIC_API_KEY: 'sk-ant-test-dummy',
  });
  fake.respondWith(() => toolAnswer({ justification: 'The first one shown is better.', preference: 'A' }, { usage: { input_tokens: 100, output_tokens: 10 } }));
  assert.equal(r.code, 0, r.stderr);
  const report = JSON.parse(fs.readFileSync(out, 'utf8'));
  assert.deepEqual([report.suite, report.format, report.items, report.skipped], ['rewardbench2-subset', 'best-of-4', 2, 0]);
  assert.deepEqual(
    report.outcomes.map((o: any) => [o.id, o.subset]),
    [
      ['720', 'Math'],
      ['721', 'Math'],
    ],
  );
  assert.deepEqual([report.rating.tie_rate, report.rating.accuracy], [1, 0]);
  assert.deepEqual(
    report.outcomes.map((o: any) => o.ranking.chosen_place === 1),
    [1000, 1001].map((seed) => shownOrder(seed)[0] === 0),
  );
  const rankings = fake.requests.filter((q) => q.toolName === 'submit_ranking');
  assert.deepEqual([fake.requests.length, rankings.length], [10, 2]);
  assert.ok(
    rankings.some((q) => q.prompt.includes('Simplify:\n10r4/6n3 times 42n4/34r5')),
    'the real item (id 720) is what the judge is shown',
  );

  const oa = await startFakeOpenAI();
  try {
    oa.answers.submit_evaluation = { justification: 'Middling.', score: 0.5 };
    oa.answers.submit_ranking = { justification: 'In order.', ranking: ['A', 'B', 'C', 'D'] };
    const outOa = path.join(tempDir(), 'rb2-openai.json');
    const o = await runBench([
      '--suite',
      'rewardbench2-subset',
      '--subset',
      'Focus',
      '--limit',
      '1',
      '--provider',
      'openai',
      '--base-url',
      oa.url,
      '--model',
      'local-judge',
      '--out',
      outOa,
    ]);
    assert.equal(o.code, 0, o.stderr);
    const rep = JSON.parse(fs.readFileSync(outOa, 'utf8'));
    assert.deepEqual([rep.provider, rep.items, rep.outcomes[0].id, rep.outcomes[0].subset], ['openai', 1, '1402', 'Focus']);
    assert.equal(oa.requests.filter((q) => q.path.endsWith('/chat/completions')).length, 5);
  } finally {
    await oa.close();
  }
});
