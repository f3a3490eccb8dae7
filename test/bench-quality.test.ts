// bench:quality's machinery against the fake judge model, which always prefers the position shown
// first: Tribunal's pairwise judging must expose that (positional agreement 0, every pair a tie,
// accuracy exactly 0.5 averaged over both orders, kappa 0), while the naive baseline, asked in one
// order only, cannot tell and scores the share of pairs whose label happens to be output 1.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { accuracy, cohenKappa, positionalAgreement } from '../bench/quality/metrics.ts';
import { loadSuite, suiteNames } from '../bench/quality/run.ts';
import { ROOT } from './helpers/cli.ts';
import { startFakeAnthropic, toolAnswer, type FakeAnthropic } from './helpers/fake-anthropic.ts';
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
