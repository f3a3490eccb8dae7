// Confidence on results (SPEC section 16, partly): the rule by hand (confidence.ts), and end to end a
// jury's confidence is its agreement, a single model's is null, on the stored log too.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { confidenceOf } from '../src/engine/confidence.ts';
import type { EvaluatorResult } from '../src/schemas.ts';
import { evaluatorBody, startServerWithFakeModel } from './helpers/execute.ts';
import type { FakeAnthropic } from './helpers/fake-anthropic.ts';
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

  test("a jury's result carries its agreement, a single model's carries null, and the log keeps them", async () => {
    const key = (await server.demoUser()).api_key;
    for (const [name, f] of [
      ['juror-a', a],
      ['juror-b', b],
    ] as const) {
      const res = await server.request('POST', '/v1/models/', { key, body: { name, provider: 'openai', base_url: f.url, model: name } });
      assert.equal(res.status, 201, JSON.stringify(res.body));
    }
    a.answer = { justification: 'strict', score: 0.3 };
    b.answer = { justification: 'kind', score: 0.9 };
    const jury = await server.request('POST', '/v1/evaluators/', { key, body: evaluatorBody({ name: 'Jury', models: ['juror-a', 'juror-b'] }) });
    const single = await server.request('POST', '/v1/evaluators/', { key, body: evaluatorBody({ name: 'Single' }) });
    const judge = await server.request('POST', '/v1/judges/', { key, body: { name: 'Both', intent: 'x', evaluator_ids: [jury.body.id, single.body.id] } });
    const run = await server.request('POST', `/v1/judges/${judge.body.id}/execute/`, { key, body: { request: 'q', response: 'a' } });
    assert.equal(run.status, 200, JSON.stringify(run.body));
    const [j, s] = run.body.evaluator_results;
    assert.equal(j.spread, 0.6);
    assert.equal(j.confidence, 0.4);
    assert.equal(s.confidence, null);
    const log = await server.request('GET', `/v1/execution-logs/${run.body.execution_log_id}/`, { key });
    assert.deepEqual(
      log.body.evaluator_results.map((r: { confidence: number | null }) => r.confidence),
      [0.4, null],
    );
  });
});
