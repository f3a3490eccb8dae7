// Confidence on results (SPEC section 16): the rule by hand (confidence.ts), and end to end: a
// jury's confidence is its agreement, a single model's is the one it stated in the same structured
// answer (the exact bytes asked of Anthropic and of an OpenAI-compatible server), on the stored log
// and through MCP run_judge too.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { confidenceOf } from '../src/engine/confidence.ts';
import type { EvaluatorResult } from '../src/schemas.ts';
import { evaluatorBody, startServerWithFakeModel } from './helpers/execute.ts';
import { toolAnswer, type FakeAnthropic } from './helpers/fake-anthropic.ts';
import { connectMcp } from './helpers/mcp-client.ts';
import { startFakeOpenAI, type FakeOpenAI } from './helpers/fake-openai.ts';
import type { TestServer } from './helpers/server.ts';

const base: EvaluatorResult = {
  evaluator_id: 'evl_1',
  evaluator_name: 'E',
  evaluator_version: 1,
  score: 0.8,
  justification: 'ok',
  model: 'm',
  input_tokens: 1,
  output_tokens: 1,
  cost_usd: 0,
  latency_ms: 1,
} as EvaluatorResult;
const juror = (score: number | null) => ({ model: 'm', score, justification: null, input_tokens: 1, output_tokens: 1, cost_usd: 0, latency_ms: 1 });

describe('confidenceOf', () => {
  test('logprobs: the probability of the most likely grade; a jury: 1 - spread; else null', () => {
    assert.equal(confidenceOf({ ...base, grade_probabilities: { '1': 0.05, '2': 0.05, '3': 0.1, '4': 0.7, '5': 0.1 } }), 0.7);
    assert.equal(confidenceOf({ ...base, jurors: [juror(0.2), juror(0.8)], spread: 0.6 }), 0.4);
    assert.equal(confidenceOf({ ...base, jurors: [juror(0.8), juror(null)], spread: 0 }), null, 'one juror scoring measures no agreement');
    assert.equal(confidenceOf(base), null);
    // A stated confidence counts only when nothing better measures it.
    assert.equal(confidenceOf(base, 0.35), 0.35);
    assert.equal(confidenceOf({ ...base, grade_probabilities: { '4': 0.6, '5': 0.4 } }, 0.99), 0.6);
    assert.equal(confidenceOf({ ...base, jurors: [juror(0.2), juror(0.8)], spread: 0.6 }, 0.99), 0.4);
    assert.equal(confidenceOf({ ...base, jurors: [juror(0.8), juror(null)], spread: 0 }, 0.99), null);
    assert.equal(confidenceOf({ ...base, score: null, not_applicable: true }, 0.9), null);
    assert.equal(confidenceOf({ ...base, score: null, error: 'failed', grade_probabilities: { '5': 1 } }), null);
    assert.equal(confidenceOf({ ...base, score: null, not_applicable: true }), null);
  });
});

describe('confidence on runs', () => {
  let server: TestServer;
  let fake: FakeAnthropic;
  let a: FakeOpenAI;
  let b: FakeOpenAI;
  before(async () => {
    ({ server, fake } = await startServerWithFakeModel({ TRIBUNAL_SECRET_KEY: randomBytes(32).toString('base64'), TRIBUNAL_MODEL_RETRIES: '0' }));
    [a, b] = await Promise.all([startFakeOpenAI(), startFakeOpenAI()]);
  });
  after(async () => {
    await server.close();
    await Promise.all([fake.close(), a.close(), b.close()]);
  });

  test("a jury's result carries its agreement, a single model's its stated confidence, and the log keeps them", async () => {
    const key = (await server.demoUser()).api_key;
    for (const [name, f] of [
      ['juror-a', a],
      ['juror-b', b],
    ] as const) {
      const res = await server.request('POST', '/v1/models/', { key, body: { name, provider: 'openai', base_url: f.url, model: name } });
      assert.equal(res.status, 201, JSON.stringify(res.body));
    }
    // The jurors state a confidence too; the jury's agreement comes first.
    a.answer = { justification: 'strict', score: 0.3, confidence: 0.99 };
    b.answer = { justification: 'kind', score: 0.9, confidence: 0.99 };
    fake.respondWith(() => toolAnswer({ justification: 'fine', score: 0.6, confidence: 0.35 }));
    const jury = await server.request('POST', '/v1/evaluators/', { key, body: evaluatorBody({ name: 'Jury', models: ['juror-a', 'juror-b'] }) });
    const single = await server.request('POST', '/v1/evaluators/', { key, body: evaluatorBody({ name: 'Single' }) });
    const judge = await server.request('POST', '/v1/judges/', { key, body: { name: 'Both', intent: 'x', evaluator_ids: [jury.body.id, single.body.id] } });
    const run = await server.request('POST', `/v1/judges/${judge.body.id}/execute/`, { key, body: { request: 'q', response: 'a' } });
    assert.equal(run.status, 200, JSON.stringify(run.body));
    const [j, s] = run.body.evaluator_results;
    assert.equal(j.spread, 0.6);
    assert.equal(j.confidence, 0.4);
    assert.equal(s.confidence, 0.35);
    const log = await server.request('GET', `/v1/execution-logs/${run.body.execution_log_id}/`, { key });
    assert.deepEqual(
      log.body.evaluator_results.map((r: { confidence: number | null }) => r.confidence),
      [0.4, 0.35],
    );
    fake.respondWith(null);
  });

  test('Anthropic: the confidence is asked in the same forced tool call, and parsed strictly', async () => {
    const key = (await server.demoUser()).api_key;
    const evaluator = await server.request('POST', '/v1/evaluators/', { key, body: evaluatorBody({ name: 'Stated' }) });
    const run = async (answer: Record<string, unknown>) => {
      fake.resetStats();
      fake.respondWith(() => toolAnswer(answer));
      const res = await server.request('POST', `/v1/evaluators/${evaluator.body.id}/execute/`, { key, body: { request: 'q', response: 'a' } });
      fake.respondWith(null);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(fake.requests.length, 1, 'one call: no extra call for the confidence, and no retry for a bad one');
      return { result: res.body.evaluator_results[0], sent: fake.requests[0].body };
    };
    const { result, sent } = await run({ justification: 'Polite and complete.', score: 0.8, confidence: 0.62 });
    assert.equal(result.score, 0.8);
    assert.equal(result.confidence, 0.62);
    // The exact schema sent: confidence after the score, optional (the required list is unchanged).
    const schema = sent.tools[0].input_schema;
    assert.deepEqual(Object.keys(schema.properties), ['justification', 'not_applicable', 'score', 'confidence']);
    assert.deepEqual(schema.required, ['justification', 'score']);
    assert.deepEqual(schema.properties.confidence, {
      type: ['number', 'null'],
      minimum: 0,
      maximum: 1,
      description:
        'Optional, after the score: the probability, from 0 to 1, that a careful expert applying this rubric to the same material would give a score within 0.2 of yours. Low when the rubric is ambiguous here or the evidence is thin; null when not_applicable is true.',
    });
    assert.deepEqual(sent.tool_choice, { type: 'tool', name: 'submit_evaluation', disable_parallel_tool_use: true });
    const system: string = sent.system[0].text;
    assert.ok(
      system.endsWith("then not_applicable when it applies, then the score from 0 to 1, then your confidence in it (see the tool's description of confidence)."),
      system.slice(-300),
    );
    // Out of range, a string, or missing: null, and the score stands.
    for (const confidence of [1.7, '0.9', undefined]) {
      const bad = await run({ justification: 'Fine.', score: 0.5, ...(confidence === undefined ? {} : { confidence }) });
      assert.equal(bad.result.score, 0.5);
      assert.equal(bad.result.confidence, null, `confidence ${JSON.stringify(confidence)}`);
      assert.equal(bad.result.error, undefined);
      // The system prompt is the same bytes on every call (the prompt cache's prefix).
      assert.equal(bad.sent.system[0].text, system);
    }
  });

  test('OpenAI-compatible: the same field in the function parameters; MCP run_judge carries the confidence', async () => {
    const key = (await server.demoUser()).api_key;
    const reg = await server.request('POST', '/v1/models/', { key, body: { name: 'local-judge', provider: 'openai', base_url: a.url, model: 'local-judge' } });
    assert.equal(reg.status, 201, JSON.stringify(reg.body));
    a.answer = { justification: 'Mostly right.', score: 0.7, confidence: 0.81 };
    const evaluator = await server.request('POST', '/v1/evaluators/', { key, body: evaluatorBody({ name: 'Local', model: 'local-judge' }) });
    const judge = await server.request('POST', '/v1/judges/', { key, body: { name: 'Local judge', intent: 'x', evaluator_ids: [evaluator.body.id] } });
    const before = a.requests.length;
    const res = await server.request('POST', `/v1/judges/${judge.body.id}/execute/`, { key, body: { request: 'q', response: 'a' } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.evaluator_results[0].confidence, 0.81);
    const calls = a.requests.slice(before).filter((r) => r.path.endsWith('/chat/completions'));
    assert.equal(calls.length, 1);
    const fn = calls[0].body.tools[0].function;
    assert.equal(fn.name, 'submit_evaluation');
    assert.deepEqual(Object.keys(fn.parameters.properties), ['justification', 'not_applicable', 'score', 'confidence']);
    assert.deepEqual(fn.parameters.properties.confidence.type, ['number', 'null']);

    a.answer = { justification: 'Mostly right.', score: 0.7, confidence: 0.27 };
    const mcp = await connectMcp(server.url, key);
    try {
      const out = await mcp.call('run_judge', { judge_id: judge.body.id, request: 'q', response: 'a' });
      assert.equal(out.isError, undefined, out.text);
      assert.equal(out.json.evaluator_results[0].confidence, 0.27);
    } finally {
      await mcp.close();
    }
  });
});
