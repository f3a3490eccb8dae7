// The result cache (use_cache): an identical earlier result of the same organization is reused
// without a model call (requests counted at the fake), marked cached, costing nothing, and the run is
// still logged; a changed input, evaluator version, model or setting misses; failures are never
// kept; another organization never gets a hit; the bound holds. Runs on the JSON store, and on
// PostgreSQL with TRIBUNAL_TEST_STORE=postgres.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { textAnswer, toolAnswer } from './helpers/fake-anthropic.ts';
import { evaluatorBody, startScoringRig, type ScoringRig } from './helpers/execute.ts';

describe('the result cache', () => {
  let rig: ScoringRig;
  before(async () => {
    rig = await startScoringRig();
  });
  after(() => rig.close());

  const run = (id: string, body: Record<string, unknown>, key = rig.key) => rig.server.request('POST', `/v1/evaluators/${id}/execute/`, { key, body });

  test('a hit makes no model call, is marked cached, costs nothing, and is still logged', async () => {
    const ev = await rig.createEvaluator(evaluatorBody());
    rig.fake.resetStats();
    rig.fake.enqueue(toolAnswer({ justification: 'Quotes "4": correct.', score: 0.9 }, { usage: { input_tokens: 900, output_tokens: 60 } }));
    const first = await run(ev.id, { request: 'What is 2+2?', response: 'It is 4.', use_cache: true });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal(rig.fake.requests.length, 1);
    const miss = first.body.evaluator_results[0];
    assert.equal(miss.cached, undefined);
    assert.ok(miss.cost_usd > 0);

    const second = await run(ev.id, { request: 'What is 2+2?', response: 'It is 4.', use_cache: true, tags: ['again'] });
    assert.equal(second.status, 200, JSON.stringify(second.body));
    assert.equal(rig.fake.requests.length, 1, 'no second model call');
    const hit = second.body.evaluator_results[0];
    assert.equal(hit.cached, true);
    assert.equal(hit.score, 0.9);
    assert.equal(hit.justification, 'Quotes "4": correct.');
    assert.equal(hit.cost_usd, 0);
    assert.equal(hit.input_tokens, 0);
    assert.equal(hit.output_tokens, 0);
    assert.ok(hit.latency_ms < 50, `latency ${hit.latency_ms}`);
    assert.deepEqual(hit.settings, miss.settings);
    assert.equal(second.body.score, 0.9);
    assert.equal(second.body.cost_usd, 0);
    assert.notEqual(second.body.execution_log_id, first.body.execution_log_id);
    const log = await rig.get(`/v1/execution-logs/${second.body.execution_log_id}/`);
    assert.equal(log.status, 200);
    assert.equal(log.body.evaluator_results[0].cached, true);
    assert.deepEqual(log.body.tags, ['again']);

    // Off by default: the same run without use_cache calls the model.
    await run(ev.id, { request: 'What is 2+2?', response: 'It is 4.' });
    assert.equal(rig.fake.requests.length, 2);
  });

  test('misses on a changed input, version or model; inputs the evaluator is not shown do not matter', async () => {
    const ev = await rig.createEvaluator(evaluatorBody());
    const base = { request: 'Q', response: 'R', use_cache: true };
    rig.fake.resetStats();
    await run(ev.id, base);
    assert.equal(rig.fake.requests.length, 1);
    // Not shown to this evaluator (it does not declare contexts), and not inputs at all (tags, ids): still a hit.
    const same = await run(ev.id, { ...base, contexts: ['unrelated'], user_id: 'u1', session_id: 's1', tags: ['x'] });
    assert.equal(same.body.evaluator_results[0].cached, true);
    assert.equal(rig.fake.requests.length, 1);
    // Another response, another request: misses.
    await run(ev.id, { ...base, response: 'R2' });
    await run(ev.id, { ...base, request: 'Q2' });
    assert.equal(rig.fake.requests.length, 3);
    // A conversation instead of request/response: a miss.
    await run(ev.id, {
      turns: [
        { role: 'user', content: 'Q' },
        { role: 'assistant', content: 'R' },
      ],
      use_cache: true,
    });
    assert.equal(rig.fake.requests.length, 4);
    // A new evaluator version: a miss.
    const patched = await rig.server.request('PATCH', `/v1/evaluators/${ev.id}/`, { key: rig.key, body: { rubric: 'A stricter rubric: 1 only when perfect.' } });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    const v2 = await run(ev.id, base);
    assert.equal(v2.body.evaluator_results[0].cached, undefined);
    assert.equal(rig.fake.requests.length, 5);
    assert.equal((await run(ev.id, base)).body.evaluator_results[0].cached, true);
    // Another model (the evaluator's model override): a miss.
    const other = await rig.createEvaluator(evaluatorBody({ model: 'claude-haiku-4-5' }));
    const sameInputs = await rig.createEvaluator(evaluatorBody());
    await run(other.id, base);
    await run(sameInputs.id, base);
    assert.equal(rig.fake.requests.length, 7, 'another evaluator or model is another key');
    assert.equal(rig.fake.requests[5].body.model, 'claude-haiku-4-5');
  });

  test('contexts count for an evaluator that is shown them', async () => {
    const ev = await rig.createEvaluator(evaluatorBody({ requires_contexts: true }));
    rig.fake.resetStats();
    await run(ev.id, { request: 'Q', response: 'R', contexts: ['C1'], use_cache: true });
    await run(ev.id, { request: 'Q', response: 'R', contexts: ['C2'], use_cache: true });
    assert.equal(rig.fake.requests.length, 2);
    await run(ev.id, { request: 'Q', response: 'R', contexts: ['C1'], use_cache: true });
    assert.equal(rig.fake.requests.length, 2);
  });

  test('a failed result is never cached: the next run asks the model again', async () => {
    const ev = await rig.createEvaluator(evaluatorBody());
    rig.fake.resetStats();
    rig.fake.enqueue(textAnswer('no tool'), textAnswer('no tool'), textAnswer('still no tool'));
    const failed = await run(ev.id, { request: 'Q', response: 'fails', use_cache: true });
    assert.equal(failed.status, 502, JSON.stringify(failed.body));
    assert.equal(rig.fake.requests.length, 3);
    const retried = await run(ev.id, { request: 'Q', response: 'fails', use_cache: true });
    assert.equal(retried.status, 200);
    assert.equal(retried.body.evaluator_results[0].cached, undefined);
    assert.equal(rig.fake.requests.length, 4);
  });

  test('a not-applicable answer is cached; a judge run mixes hits and misses per evaluator', async () => {
    const na = await rig.createEvaluator(evaluatorBody({ name: 'Cache NA' }));
    const fresh = await rig.createEvaluator(evaluatorBody({ name: 'Cache fresh' }));
    rig.fake.resetStats();
    rig.fake.enqueue(toolAnswer({ justification: 'Nothing to cite.', not_applicable: true, score: null }));
    await run(na.id, { request: 'Q', response: 'R', use_cache: true });
    const judge = await rig.createJudge({ name: 'Cache mix', intent: 'x', evaluator_ids: [na.id, fresh.id] });
    const res = await rig.post(`/v1/judges/${judge.id}/execute/`, { request: 'Q', response: 'R', use_cache: true });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(rig.fake.requests.length, 2, 'only the second evaluator called the model');
    const [r1, r2] = res.body.evaluator_results;
    assert.equal(r1.cached, true);
    assert.equal(r1.not_applicable, true);
    assert.equal(r1.score, null);
    assert.equal(r2.cached, undefined);
  });

  test('another organization never gets a hit, even for the same (preset) evaluator and inputs', async () => {
    const body = { request: 'Is the sky blue?', response: 'Yes, on a clear day.', use_cache: true };
    rig.fake.resetStats();
    assert.equal((await run('preset_answer_relevance', body)).status, 200);
    assert.equal((await run('preset_answer_relevance', body)).body.evaluator_results[0].cached, true);
    assert.equal(rig.fake.requests.length, 1);
    const otherKey = (await rig.server.demoUser()).api_key;
    const other = await run('preset_answer_relevance', body, otherKey);
    assert.equal(other.status, 200, JSON.stringify(other.body));
    assert.equal(other.body.evaluator_results[0].cached, undefined);
    assert.equal(rig.fake.requests.length, 2);
  });

  test('a store that cannot serve the cache: the run still scores, and each failure is logged for the operator', async (t) => {
    const ev = await rig.createEvaluator(evaluatorBody());
    const store = rig.server.store;
    t.mock.method(store, 'getCachedResult', async () => {
      throw new Error('result_cache table is gone');
    });
    t.mock.method(store, 'putCachedResult', async () => {
      throw new Error('disk full');
    });
    const logged = t.mock.method(console, 'error', () => undefined);
    rig.fake.enqueue(toolAnswer({ justification: 'fine', score: 0.6 }));
    const res = await run(ev.id, { request: 'Q', response: 'cache down', use_cache: true });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.evaluator_results[0].score, 0.6);
    const lines = logged.mock.calls.map((c) => String(c.arguments[0]));
    assert.ok(
      lines.some((l) => /result cache: lookup failed \(result_cache table is gone\)/.test(l)),
      lines.join('\n'),
    );
    assert.ok(
      lines.some((l) => /result cache: write failed \(disk full\)/.test(l)),
      lines.join('\n'),
    );
  });

  test('use_cache must be a boolean: a 400 with a code, never a 500', async () => {
    const ev = await rig.createEvaluator(evaluatorBody());
    const res = await run(ev.id, { request: 'Q', response: 'R', use_cache: 'yes' });
    assert.equal(res.status, 400);
    assert.equal(typeof res.body.code, 'string');
  });
});

describe('the result cache is bounded (TRIBUNAL_RESULT_CACHE_MAX)', () => {
  let rig: ScoringRig;
  before(async () => {
    rig = await startScoringRig({ TRIBUNAL_RESULT_CACHE_MAX: '2' });
  });
  after(() => rig.close());

  test('the least recently used entry is evicted', async () => {
    const ev = await rig.createEvaluator(evaluatorBody());
    const run = (response: string) => rig.post(`/v1/evaluators/${ev.id}/execute/`, { request: 'Q', response, use_cache: true });
    rig.fake.resetStats();
    await run('a');
    await run('b');
    await run('c'); // evicts a
    assert.equal(rig.fake.requests.length, 3);
    assert.equal((await run('c')).body.evaluator_results[0].cached, true);
    assert.equal((await run('b')).body.evaluator_results[0].cached, true);
    assert.equal((await run('a')).body.evaluator_results[0].cached, undefined, 'evicted, scored again');
    assert.equal(rig.fake.requests.length, 4);
  });
});
