// Faults on the judge model: retried rate limits, overload, server errors, dropped connections,
// malformed answers and timeouts; partial failure; every evaluator failing. All over real HTTP.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { drop, errorAnswer, hang, overloaded, rateLimited, serverError, textAnswer, toolAnswer, type FakeRequest } from './helpers/fake-anthropic.ts';
import { evaluatorBody, startScoringRig, type ScoringRig } from './helpers/execute.ts';

const ok = (score = 0.75) => toolAnswer({ justification: 'Meets most of the rubric.', score });

describe('retries', () => {
  let rig: ScoringRig;
  before(async () => {
    rig = await startScoringRig();
  });
  after(() => rig.close());

  const runClarity = () => rig.post('/v1/evaluators/preset_clarity/execute/', { request: 'q', response: 'a' });

  test('429 is retried after the retry-after the API asked for', async () => {
    rig.fake.resetStats();
    rig.fake.enqueue(rateLimited(undefined, 150), ok(0.5));
    const res = await runClarity();
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.score, 0.5);
    assert.equal(rig.fake.requests.length, 2);
    const gap = rig.fake.requests[1].receivedAt - rig.fake.requests[0].receivedAt;
    assert.ok(gap >= 140, `waited ${gap} ms; retry-after-ms asked for 150`);

    rig.fake.resetStats();
    rig.fake.enqueue(rateLimited(0), rateLimited(0), ok(0.25));
    const again = await runClarity();
    assert.equal(again.body.score, 0.25);
    assert.equal(rig.fake.requests.length, 3);
  });

  test('529 overloaded, 500 and 502 server errors and a dropped connection are retried', async () => {
    rig.fake.resetStats();
    rig.fake.enqueue(overloaded(), serverError(500), serverError(502), drop(), ok(1));
    const res = await runClarity();
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.score, 1);
    assert.equal(rig.fake.requests.length, 5);
  });

  test('a 200 that is not a Messages API answer (HTML, broken JSON) is a provider fault and is retried', async () => {
    rig.fake.resetStats();
    rig.fake.enqueue(
      { kind: 'raw', status: 200, body: '<html>gateway</html>', headers: { 'content-type': 'text/html' } },
      { kind: 'raw', status: 200, body: '{"type":"message",', headers: { 'content-type': 'application/json' } },
      { kind: 'message', message: { type: 'message', content: 'not a list' } },
      ok(0.4),
    );
    const res = await runClarity();
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.score, 0.4);
    assert.equal(rig.fake.requests.length, 4);
  });

  test('a persistent 529 gives up after TRIBUNAL_MODEL_RETRIES retries: score null, error, model_unavailable 503, logged', async () => {
    rig.fake.resetStats();
    rig.fake.respondWith(() => overloaded());
    try {
      const res = await runClarity();
      assert.equal(res.status, 503);
      assert.equal(res.body.code, 'model_unavailable');
      assert.equal(rig.fake.requests.length, rig.config.model.retries + 1);
      assert.match(res.body.detail, /overloaded/);
      const log = await rig.get(`/v1/execution-logs/${res.body.execution_log_id}/`);
      assert.equal(log.status, 200);
      assert.equal(log.body.score, null);
      assert.equal(log.body.evaluator_results[0].score, null);
      assert.match(log.body.evaluator_results[0].error, /overloaded \(529 overloaded_error: Overloaded\)\. Gave up after 5 attempts/);
    } finally {
      rig.fake.respondWith(null);
    }
  });

  test('a retry-after beyond 60 s is not waited for', async () => {
    rig.fake.resetStats();
    rig.fake.enqueue(rateLimited(3600));
    const res = await runClarity();
    assert.equal(res.status, 503);
    assert.equal(rig.fake.requests.length, 1);
    assert.match(res.body.detail, /rate limiting/);
  });

  test('401 and 404 from the model are not retried and say what to check', async () => {
    rig.fake.resetStats();
    rig.fake.enqueue(errorAnswer(401, { message: 'invalid x-api-key' }));
    const auth = await runClarity();
    assert.equal(auth.status, 502);
    assert.match(auth.body.detail, /refused the API key \(401 authentication_error: invalid x-api-key\); check ANTHROPIC_API_KEY/);
    assert.equal(rig.fake.requests.length, 1);

    rig.fake.enqueue(errorAnswer(404, { message: 'model: claude-nonexistent' }));
    const missing = await runClarity();
    assert.equal(missing.status, 502);
    assert.match(missing.body.detail, /check the model name/);
    assert.equal(rig.fake.requests.length, 2);
  });

  test('a malformed answer (no tool call, wrong fields, out-of-range score) is asked again, at most twice', async () => {
    rig.fake.resetStats();
    rig.fake.enqueue(
      textAnswer('I would give it 0.9', { usage: { input_tokens: 100, output_tokens: 10 } }),
      toolAnswer({ score: 1.5, justification: 'x' }, { usage: { input_tokens: 100, output_tokens: 10 } }),
      toolAnswer({ justification: 'Good.', score: 0.9 }, { usage: { input_tokens: 100, output_tokens: 10 } }),
    );
    const res = await runClarity();
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.score, 0.9);
    assert.equal(rig.fake.requests.length, 3);
    // Every attempt's tokens are counted and priced.
    assert.equal(res.body.evaluator_results[0].input_tokens, 300);
    assert.equal(res.body.evaluator_results[0].output_tokens, 30);

    rig.fake.resetStats();
    rig.fake.enqueue(toolAnswer({ verdict: 'good' }), toolAnswer({ justification: '', score: 0.5 }), toolAnswer({ justification: 'Fine.', score: '0.8' }));
    const bad = await runClarity();
    assert.equal(rig.fake.requests.length, 3, 'three attempts: the first and two retries');
    assert.equal(bad.status, 502);
    assert.equal(bad.body.code, 'model_unavailable');
    const result = bad.body.evaluator_results[0];
    assert.equal(result.score, null);
    assert.match(result.error, /No valid answer from the judge model in 3 attempts/);
    assert.match(result.error, /score: /);
    const log = await rig.get(`/v1/execution-logs/${bad.body.execution_log_id}/`);
    assert.equal(log.body.evaluator_results[0].score, null);
    assert.ok(log.body.evaluator_results[0].error);
  });

  test('one evaluator failing leaves the others their scores; the mean and cost cover what ran', async () => {
    const failing = await rig.createEvaluator(evaluatorBody({ name: 'Always failing' }));
    const judge = await rig.createJudge({ name: 'Partial judge', intent: 'x', evaluator_ids: ['preset_clarity', failing.id, 'preset_politeness'] });
    rig.fake.resetStats();
    rig.fake.respondWith((req: FakeRequest) =>
      req.system.includes('Name: Always failing\n')
        ? serverError(500)
        : toolAnswer({ justification: 'ok', score: req.system.includes('Name: Clarity\n') ? 0.8 : 0.4 }, { usage: { input_tokens: 1000, output_tokens: 0 } }),
    );
    try {
      const res = await rig.post(`/v1/judges/${judge.id}/execute/`, { response: 'Hello there.', tags: ['partial'] });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const [clarity, failed, polite] = res.body.evaluator_results;
      assert.equal(clarity.score, 0.8);
      assert.equal(polite.score, 0.4);
      assert.equal(failed.evaluator_name, 'Always failing');
      assert.equal(failed.score, null);
      assert.equal(failed.justification, null);
      assert.match(failed.error, /The judge model failed \(500 api_error: Internal server error\)\. Gave up after 5 attempts\./);
      assert.equal(failed.cost_usd, 0);
      assert.equal(res.body.score, 0.6);
      assert.equal(res.body.cost_usd, 0.006);
      const log = await rig.get(`/v1/execution-logs/${res.body.execution_log_id}/`);
      assert.equal(log.body.score, 0.6);
      assert.equal(log.body.evaluator_results[1].error, failed.error);
    } finally {
      rig.fake.respondWith(null);
    }
  });
});

describe('timeouts', () => {
  let rig: ScoringRig;
  before(async () => {
    rig = await startScoringRig({ TRIBUNAL_MODEL_TIMEOUT: '150ms', TRIBUNAL_MODEL_RETRIES: '1' });
  });
  after(() => rig.close());

  test('a call that hangs times out and is retried', async () => {
    rig.fake.resetStats();
    rig.fake.enqueue(hang(), ok(0.6));
    const res = await rig.post('/v1/evaluators/preset_clarity/execute/', { response: 'a' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.score, 0.6);
    assert.equal(rig.fake.requests.length, 2);
  });

  test('every evaluator timing out answers model_unavailable 504, and the run is logged', async () => {
    const judge = await rig.createJudge({ name: 'Slow judge', intent: 'x', evaluator_ids: ['preset_clarity', 'preset_politeness'] });
    rig.fake.resetStats();
    rig.fake.respondWith(() => hang());
    try {
      const res = await rig.post(`/v1/judges/${judge.id}/execute/`, { response: 'a', tags: ['slow'] });
      assert.equal(res.status, 504);
      assert.equal(res.body.code, 'model_unavailable');
      assert.match(res.body.detail, /did not answer within 150 ms \(TRIBUNAL_MODEL_TIMEOUT\)\. Gave up after 2 attempts/);
      assert.equal(rig.fake.requests.length, 4, 'two evaluators, two attempts each');
      const logs = await rig.get(`/v1/execution-logs/?judge_id=${judge.id}`);
      assert.equal(logs.body.results.length, 1);
      assert.equal(logs.body.results[0].id, res.body.execution_log_id);
      assert.equal(logs.body.results[0].score, null);
      assert.deepEqual(
        logs.body.results[0].evaluator_results.map((r: any) => r.score),
        [null, null],
      );
    } finally {
      rig.fake.respondWith(null);
    }
  });
});
