// Judge models (issue 13 item 1): the default is a current model the SDK does not call deprecated;
// each model generation gets the thinking/tool_choice form it accepts; a model without a price
// records cost_usd null; the server warns at start-up about deprecated or unpriced models and
// refuses an invalid TRIBUNAL_PRICES.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { DEFAULT_MODEL, loadConfig } from '../src/config.ts';
import { AnthropicJudgeModel } from '../src/engine/providers/anthropic-model.ts';
import { priceFor } from '../src/engine/providers/cost.ts';
import { modelWarnings, sdkDeprecationNotice } from '../src/engine/providers/model-check.ts';
import { SCORE_TOOL } from '../src/engine/prompt.ts';
import { startFakeAnthropic, toolAnswer } from './helpers/fake-anthropic.ts';
import { startCliRig } from './helpers/cli.ts';
import { evaluatorBody, startScoringRig } from './helpers/execute.ts';
import { cleanEnv, tempDir } from './helpers/server.ts';

const ROOT = path.resolve(import.meta.dirname, '..');

describe('the default judge model', () => {
  test('is current: priced, and not on the installed SDK deprecation list (which does list claude-sonnet-4-5)', () => {
    const config = loadConfig({});
    assert.equal(config.model.name, DEFAULT_MODEL);
    assert.equal(sdkDeprecationNotice(DEFAULT_MODEL), null);
    assert.match(sdkDeprecationNotice('claude-sonnet-4-5') ?? '', /deprecated.*end-of-life/, 'the probe reads the SDK list');
    assert.ok(priceFor(DEFAULT_MODEL, config.model.prices));
    assert.deepEqual(modelWarnings(config.model), [], 'a default start-up prints no model warning');
  });

  test('scores through the fake with tool_choice auto, adaptive thinking at low effort, and its price', async () => {
    const rig = await startScoringRig({ TRIBUNAL_MODEL: DEFAULT_MODEL });
    try {
      const evaluator = await rig.createEvaluator(evaluatorBody());
      rig.fake.enqueue(toolAnswer({ justification: 'Fine.', score: 0.8 }, { usage: { input_tokens: 1000, output_tokens: 100 } }));
      const res = await rig.post(`/v1/evaluators/${evaluator.id}/execute/`, { response: 'an answer' });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.evaluator_results[0].score, 0.8);
      // $2 in / $10 out per million: 1000*2e-6 + 100*10e-6 = 0.003
      assert.equal(res.body.cost_usd, 0.003);
      const sent = rig.fake.requests.at(-1)!.body;
      assert.equal(sent.model, DEFAULT_MODEL);
      assert.deepEqual(sent.tool_choice, { type: 'auto', disable_parallel_tool_use: true }, 'Sonnet 5.5 refuses a forced tool_choice');
      assert.deepEqual(sent.thinking, { type: 'adaptive' });
      assert.deepEqual(sent.output_config, { effort: 'low' });
      assert.ok(sent.max_tokens > rig.config.model.maxTokens, 'room for thinking on top of the answer');
    } finally {
      await rig.close();
    }
  });
});

test('an unpriced model: cost_usd null in the answer and the log, "unknown" in the CLI, matched by no cost filter', async () => {
  const rig = await startCliRig({ TRIBUNAL_ALLOWED_MODELS: 'claude-sonnet-5-5,my-model' });
  try {
    const created = await rig.server.request('POST', '/v1/evaluators/', { key: rig.key, body: evaluatorBody({ model: 'my-model' }) });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    rig.fake.enqueue(toolAnswer({ justification: 'Fine.', score: 0.9 }, { usage: { input_tokens: 500, output_tokens: 50 } }));
    const run = await rig.server.request('POST', `/v1/evaluators/${created.body.id}/execute/`, { key: rig.key, body: { response: 'x' } });
    assert.equal(run.status, 200, JSON.stringify(run.body));
    assert.equal(run.body.cost_usd, null);
    const shown = await rig.cli(['logs', 'get', run.body.execution_log_id]);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /cost:\s+unknown/);
    assert.match(shown.stdout, /my-model, unknown,/);
    const filtered = await rig.server.request('GET', '/v1/execution-logs/?min_cost=0', { key: rig.key });
    assert.equal(filtered.status, 200);
    assert.deepEqual(filtered.body.results, [], 'an unknown cost matches no cost filter');
    assert.equal((await rig.server.request('GET', '/v1/execution-logs/', { key: rig.key })).body.results.length, 1);
  } finally {
    await rig.close();
  }
});

describe('thinking and tool_choice per model generation, through the SDK against the fake', () => {
  const call = { system: 'sys', prompt: 'p', tool: SCORE_TOOL, maxTokens: 300 };
  const forced = { type: 'tool', name: 'submit_evaluation', disable_parallel_tool_use: true };
  const cases: Array<{ model: string; budget: number; tool_choice: unknown; thinking: unknown; effort?: string; max_tokens: number }> = [
    { model: 'claude-haiku-4-5', budget: 0, tool_choice: forced, thinking: undefined, max_tokens: 300 },
    { model: 'claude-haiku-4-5-20251001', budget: 2048, tool_choice: { type: 'auto' }, thinking: { type: 'enabled', budget_tokens: 2048 }, max_tokens: 2348 },
    { model: 'my-local-model', budget: 2048, tool_choice: { type: 'auto' }, thinking: { type: 'enabled', budget_tokens: 2048 }, max_tokens: 2348 },
    { model: 'claude-sonnet-4-6', budget: 0, tool_choice: forced, thinking: undefined, max_tokens: 300 },
    { model: 'claude-opus-4-6', budget: 16384, tool_choice: { type: 'auto', disable_parallel_tool_use: true }, thinking: { type: 'adaptive' }, effort: 'high', max_tokens: 16684 },
    { model: 'claude-sonnet-5', budget: 0, tool_choice: forced, thinking: { type: 'disabled' }, max_tokens: 300 },
    { model: 'claude-sonnet-5', budget: 4096, tool_choice: { type: 'auto', disable_parallel_tool_use: true }, thinking: { type: 'adaptive' }, effort: 'medium', max_tokens: 4396 },
    { model: 'claude-sonnet-5-5', budget: 1024, tool_choice: { type: 'auto', disable_parallel_tool_use: true }, thinking: { type: 'adaptive' }, effort: 'low', max_tokens: 1324 },
    { model: 'claude-opus-4-7', budget: 0, tool_choice: { type: 'auto', disable_parallel_tool_use: true }, thinking: { type: 'adaptive' }, effort: 'low', max_tokens: 2348 },
    { model: 'claude-fable-5-1', budget: 0, tool_choice: { type: 'auto', disable_parallel_tool_use: true }, thinking: { type: 'adaptive' }, effort: 'low', max_tokens: 2348 },
  ];

  test('each model gets the form its generation accepts, and the answer is read the same way', async () => {
    const fake = await startFakeAnthropic();
    try {
      const model = new AnthropicJudgeModel({ apiKey: 'dummy', baseUrl: fake.url });
      for (const [i, c] of cases.entries()) {
        fake.enqueue(toolAnswer({ justification: 'j', score: 0.5 }));
        const answer = await model.call({ ...call, model: c.model, thinkingBudget: c.budget });
        assert.deepEqual(answer.input, { justification: 'j', score: 0.5 }, c.model);
        const sent = fake.requests[i].body;
        const label = `${c.model} with budget ${c.budget}`;
        assert.deepEqual(sent.tool_choice, c.tool_choice, label);
        assert.deepEqual(sent.thinking, c.thinking, label);
        assert.deepEqual(sent.output_config, c.effort ? { effort: c.effort } : undefined, label);
        assert.equal(sent.max_tokens, c.max_tokens, label);
      }
    } finally {
      await fake.close();
    }
  });
});

describe('start-up checks of the server process', () => {
  const running: Array<ReturnType<typeof spawn>> = [];
  after(() => {
    for (const c of running) c.kill('SIGKILL');
  });

  /** Starts `src/main.ts`, waits for the listening banner or the exit, stops it; answers its output and exit code. */
  async function startUp(env: Record<string, string>): Promise<{ out: string; code: number | null }> {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: ROOT,
      env: cleanEnv({ TRIBUNAL_DATA_DIR: tempDir(), PORT: '0', ...env }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    running.push(child);
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (out += d));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no banner and no exit:\n${out}`)), 30_000);
      child.stdout!.on('data', () => {
        if (out.includes('get a key:')) {
          clearTimeout(timer);
          child.once('exit', () => resolve({ out, code: null }));
          child.kill('SIGTERM');
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        resolve({ out, code });
      });
    });
  }

  test('a deprecated TRIBUNAL_MODEL and an unpriced allowed model each get one warning line; a default start-up none', async () => {
    const warned = await startUp({ TRIBUNAL_MODEL: 'claude-sonnet-4-5', TRIBUNAL_ALLOWED_MODELS: 'claude-sonnet-4-5,claude-haiku-4-5,my-model' });
    const lines = warned.out.split('\n').filter((l) => l.startsWith('warning:'));
    assert.equal(lines.length, 2, warned.out);
    assert.match(lines[0], /TRIBUNAL_MODEL names claude-sonnet-4-5, which @anthropic-ai\/sdk lists as deprecated \(it will reach end-of-life on November 30th, 2026\)/);
    assert.match(lines[1], /TRIBUNAL_ALLOWED_MODELS names my-model, which has no price: its runs record cost_usd null \("unknown"\); add it to TRIBUNAL_PRICES/);

    const priced = await startUp({ TRIBUNAL_ALLOWED_MODELS: 'claude-sonnet-5-5,my-model', TRIBUNAL_PRICES: '{"my-model":{"input":1,"output":5}}' });
    assert.doesNotMatch(priced.out, /warning:/, 'TRIBUNAL_PRICES extends the table');
    assert.match(priced.out, /judge model: not configured/);
  });

  test('an invalid TRIBUNAL_PRICES refuses to start with one clear line', async () => {
    const bad = await startUp({ TRIBUNAL_PRICES: '{"my-model": {"input": 1, "output": 5}' });
    assert.equal(bad.code, 2);
    assert.match(bad.out, /TRIBUNAL_PRICES: is not valid JSON .*use e\.g\. \{"my-model": \{"input": 1, "output": 5\}\}/);
    const wrong = await startUp({ TRIBUNAL_PRICES: '{"my-model": {"input": "cheap", "output": 5}}' });
    assert.equal(wrong.code, 2);
    assert.match(wrong.out, /TRIBUNAL_PRICES: my-model\.input: must be/);
  });
});
