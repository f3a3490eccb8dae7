// Juries (issue 17): an evaluator with `models` is scored by every juror at once through the real
// SDKs against two fake Chat Completions servers and a fake Anthropic Messages server; the result
// keeps each juror, the spread and the aggregate; a failed juror is left out and noted; all failing
// is model_unavailable. The aggregation rules (src/engine/jury.ts) are checked by hand arithmetic.
// TRIBUNAL_TEST_STORE=postgres runs it on PostgreSQL.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { aggregateScores, scoreJury, spreadOf, type JurorOutcome } from '../src/engine/jury.ts';
import type { EvaluatorResult } from '../src/schemas.ts';
import type { EvaluatorRecord } from '../src/store/types.ts';
import { startFakeAnthropic, type FakeAnthropic } from './helpers/fake-anthropic.ts';
import { startFakeOpenAI, type FakeOpenAI } from './helpers/fake-openai.ts';
import { runCli } from './helpers/cli.ts';
import { evaluatorBody } from './helpers/execute.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

const env = {
  TRIBUNAL_SECRET_KEY: randomBytes(32).toString('base64'),
  TRIBUNAL_MODEL_RETRIES: '0',
  TRIBUNAL_MODEL_TIMEOUT: '5s',
  TRIBUNAL_RATE_LIMIT: '100000',
};
const RUN = { request: 'What is the capital of France?', response: 'Paris.' };

describe('a jury of three registered models', () => {
  let server: TestServer;
  let a: FakeOpenAI;
  let b: FakeOpenAI;
  let c: FakeAnthropic;
  let key: string;
  const call = (method: string, path: string, body?: unknown) => server.request(method, path, { key, body });
  const makeEvaluator = async (body: Record<string, unknown>) => {
    const res = await call('POST', '/v1/evaluators/', evaluatorBody(body));
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body;
  };
  const run = (id: string) => call('POST', `/v1/evaluators/${id}/execute/`, RUN);

  before(async () => {
    [a, b, c] = await Promise.all([startFakeOpenAI(), startFakeOpenAI(), startFakeAnthropic()]);
    server = await startTestServer(env);
    key = (await server.demoUser()).api_key;
    const register = async (body: Record<string, unknown>) => {
      const res = await call('POST', '/v1/models/', body);
      assert.equal(res.status, 201, JSON.stringify(res.body));
    };
    await register({ name: 'juror-a', provider: 'openai', base_url: a.url, model: 'model-a', price: { input: 1, output: 2 } });
    await register({ name: 'juror-b', provider: 'openai', base_url: b.url, model: 'model-b', price: { input: 2, output: 10 } });
    await register({ name: 'juror-c', provider: 'anthropic', base_url: c.url, model: 'model-c', price: { input: 3, output: 15 } });
    a.answer = { justification: 'A: fully correct.', score: 0.9 };
    b.answer = { justification: 'B: correct but bare.', score: 0.6 };
    c.respondWith((req) => ({
      kind: 'tool',
      input: { justification: 'C: too terse to be useful.', score: 0.3 },
      usage: { input_tokens: 500, output_tokens: 50 },
      model: req.body.model,
    }));
  });
  after(async () => {
    await server.close();
    await Promise.all([a.close(), b.close(), c.close()]);
  });

  test('every juror scores; the result keeps each one, the mean, the spread, summed tokens and cost', async () => {
    const ev = await makeEvaluator({ models: ['juror-a', 'juror-b', 'juror-c'], aggregation: 'mean' });
    assert.deepEqual([ev.models, ev.aggregation, ev.model], [['juror-a', 'juror-b', 'juror-c'], 'mean', null]);
    const [ra, rb, rc] = [a.requests.length, b.requests.length, c.requests.length];
    const res = await run(ev.id);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const r = res.body.evaluator_results[0];
    assert.deepEqual([a.requests.length - ra, b.requests.length - rb, c.requests.length - rc], [1, 1, 1], 'one call per juror');
    assert.equal(a.requests.at(-1)!.body.model, 'model-a');
    assert.equal(c.requests.at(-1)!.body.model, 'model-c');
    assert.deepEqual(
      r.jurors.map((j: { model: string; score: number }) => [j.model, j.score]),
      [
        ['juror-a', 0.9],
        ['juror-b', 0.6],
        ['juror-c', 0.3],
      ],
    );
    // mean (0.9 + 0.6 + 0.3) / 3 = 0.6; spread 0.9 - 0.3 = 0.6
    assert.equal(r.score, 0.6);
    assert.equal(r.spread, 0.6);
    assert.equal(res.body.score, 0.6, 'the run score is the jury score');
    // tokens: 1000 + 1000 + 500 in, 100 + 100 + 50 out
    assert.equal(r.input_tokens, 2500);
    assert.equal(r.output_tokens, 250);
    // cost: A 1000*1/1e6 + 100*2/1e6 = 0.0012; B 1000*2/1e6 + 100*10/1e6 = 0.003; C 500*3/1e6 + 50*15/1e6 = 0.00225
    assert.deepEqual(
      r.jurors.map((j: { cost_usd: number }) => j.cost_usd),
      [0.0012, 0.003, 0.00225],
    );
    assert.equal(r.cost_usd, 0.00645);
    assert.equal(res.body.cost_usd, 0.00645);
    // The justification speaks through the juror closest to the verdict (B, 0.6) and names the others' scores.
    assert.match(
      r.justification,
      /^Jury of 3, mean 0\.6 from juror-a 0\.9, juror-b 0\.6, juror-c 0\.3 \(spread 0\.6\)\. Closest to the verdict, juror-b \(0\.6\): B: correct but bare\.$/,
    );
    assert.equal(r.model, 'jury: juror-a, juror-b, juror-c');
    assert.equal(r.error, undefined);
    // The log keeps the jurors and the spread.
    const log = await call('GET', `/v1/execution-logs/${res.body.execution_log_id}/`);
    assert.equal(log.status, 200);
    assert.deepEqual(log.body.evaluator_results[0].jurors, r.jurors);
    assert.equal(log.body.evaluator_results[0].spread, 0.6);
  });

  test('median and majority through the server: 0.6 and 0.75 from 0.9, 0.6, 0.3', async () => {
    const median = await makeEvaluator({ models: ['juror-a', 'juror-b', 'juror-c'], aggregation: 'median' });
    // sorted 0.3, 0.6, 0.9: the middle one
    assert.equal((await run(median.id)).body.evaluator_results[0].score, 0.6);
    const majority = await makeEvaluator({ models: ['juror-c', 'juror-a', 'juror-b'], aggregation: 'majority' });
    // votes at 0.5: pass 0.9, 0.6; fail 0.3 -> pass wins; the score is the mean of the pass side (0.9 + 0.6) / 2 = 0.75
    const r = (await run(majority.id)).body.evaluator_results[0];
    assert.equal(r.score, 0.75);
    assert.deepEqual(
      r.jurors.map((j: { model: string }) => j.model),
      ['juror-c', 'juror-a', 'juror-b'],
      "the evaluator's order",
    );
  });

  test('a failed juror is left out and noted; the jury still scores', async () => {
    const ev = await makeEvaluator({ models: ['juror-a', 'juror-b', 'juror-c'] });
    assert.equal(ev.aggregation, 'mean', 'mean by default');
    b.enqueue({ status: 400, message: 'model-b is not loaded' });
    const res = await run(ev.id);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const r = res.body.evaluator_results[0];
    // A and C only: (0.9 + 0.3) / 2 = 0.6; spread 0.6
    assert.equal(r.score, 0.6);
    assert.equal(r.spread, 0.6);
    const failed = r.jurors[1];
    assert.equal(failed.model, 'juror-b');
    assert.equal(failed.score, null);
    assert.match(failed.error, /model-b is not loaded/);
    assert.equal(r.error, undefined, 'the result itself did not fail');
    assert.match(r.justification, /1 juror failed and left out: juror-b/);
    // The failed juror spent nothing (a 400 carries no usage): 1000 + 500 in.
    assert.equal(r.input_tokens, 1500);
    assert.equal(r.cost_usd, 0.0012 + 0.00225);
    // The CLI's log view lists the jurors under the result, with the spread and the failed one's error.
    const shown = await runCli(['logs', 'get', res.body.execution_log_id], { env: { TRIBUNAL_URL: server.url, TRIBUNAL_API_KEY: key } });
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /jurors \(spread 0\.60\):\n\s+juror-a: 0\.90 .*\n\s+juror-b: failed: .*model-b is not loaded.*\n\s+juror-c: 0\.30 /);
  });

  test('every juror failing is 503 model_unavailable, and the log keeps each juror error', async () => {
    const ev = await makeEvaluator({ models: ['juror-a', 'juror-b', 'juror-c'] });
    a.enqueue({ status: 503, message: 'a is overloaded' });
    b.enqueue({ status: 503, message: 'b is overloaded' });
    c.enqueue({ kind: 'error', status: 529, errorType: 'overloaded_error', message: 'c is overloaded' });
    const res = await run(ev.id);
    assert.equal(res.status, 503, JSON.stringify(res.body));
    assert.equal(res.body.code, 'model_unavailable');
    assert.match(res.body.detail, /Every juror failed: juror-a: .*a is overloaded.* \| juror-b: .*b is overloaded.* \| juror-c: .*c is overloaded/);
    const log = await call('GET', `/v1/execution-logs/${res.body.execution_log_id}/`);
    const r = log.body.evaluator_results[0];
    assert.equal(r.score, null);
    assert.deepEqual(
      r.jurors.map((j: { error?: string }) => typeof j.error),
      ['string', 'string', 'string'],
    );
    assert.equal(r.spread, null);
  });

  test('jurors run concurrently: the jury takes about its slowest juror', async () => {
    const ev = await makeEvaluator({ models: ['juror-a', 'juror-b', 'juror-c'] });
    a.latencyMs = 150;
    b.latencyMs = 250;
    c.setLatency(150);
    try {
      const r = (await run(ev.id)).body.evaluator_results[0];
      const slowest = Math.max(...r.jurors.map((j: { latency_ms: number }) => j.latency_ms));
      assert.ok(slowest >= 250);
      // In sequence they would take 550 ms or more.
      assert.ok(r.latency_ms < slowest * 1.15 + 20, `jury ${r.latency_ms} ms, slowest juror ${slowest} ms`);
    } finally {
      a.latencyMs = 0;
      b.latencyMs = 0;
      c.setLatency(0);
    }
  });

  test('a judge runs a jury evaluator beside a single-model one', async () => {
    const jury = await makeEvaluator({ models: ['juror-a', 'juror-c'] });
    const single = await makeEvaluator({ model: 'juror-b' });
    const judge = await call('POST', '/v1/judges/', { name: `jury judge ${Date.now()}`, intent: 'checks answers', evaluator_ids: [jury.id, single.id] });
    assert.equal(judge.status, 201, JSON.stringify(judge.body));
    const res = await call('POST', `/v1/judges/${judge.body.id}/execute/`, RUN);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const [rj, rs] = res.body.evaluator_results;
    // jury (0.9 + 0.3) / 2 = 0.6; single 0.6; run mean 0.6
    assert.equal(rj.score, 0.6);
    assert.equal(rj.jurors.length, 2);
    assert.equal(rs.score, 0.6);
    assert.equal(rs.jurors, undefined);
    assert.equal(res.body.score, 0.6);
  });

  test('bad juries are 400s that name the field', async () => {
    const bad = async (body: Record<string, unknown>, field: RegExp, detail: RegExp) => {
      const res = await call('POST', '/v1/evaluators/', evaluatorBody(body));
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.match(JSON.stringify(res.body.errors), field);
      assert.match(res.body.detail, detail);
    };
    await bad({ model: 'juror-a', models: ['juror-b', 'juror-c'] }, /"model".*"models"/, /either model .* or models/);
    await bad({ models: ['juror-a'] }, /models/, /at least 2/);
    await bad({ models: ['juror-a', 'juror-b', 'juror-c', 'juror-a', 'juror-b', 'juror-c'] }, /models/, /at most 5/);
    await bad({ models: ['juror-a', 'juror-a'] }, /models/, /"juror-a" twice/);
    await bad({ models: ['juror-a', 'nobody'] }, /models\.1/, /"nobody" is neither/);
    await bad({ aggregation: 'median' }, /aggregation/, /give models/);
    await bad({ models: ['juror-a', 'juror-b'], aggregation: 'vote' }, /aggregation/, /aggregation/);
  });

  test('update: a jury replaces model only when model is cleared; clearing the jury clears its aggregation; versions keep it', async () => {
    const ev = await makeEvaluator({ model: 'juror-a' });
    const both = await call('PATCH', `/v1/evaluators/${ev.id}/`, { models: ['juror-b', 'juror-c'] });
    assert.equal(both.status, 400, JSON.stringify(both.body));
    assert.match(both.body.detail, /set model to null/);
    const made = await call('PATCH', `/v1/evaluators/${ev.id}/`, { model: null, models: ['juror-b', 'juror-c'], aggregation: 'majority' });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    assert.deepEqual([made.body.version, made.body.model, made.body.models, made.body.aggregation], [2, null, ['juror-b', 'juror-c'], 'majority']);
    const shown = await runCli(['evaluators', 'get', ev.id], { env: { TRIBUNAL_URL: server.url, TRIBUNAL_API_KEY: key } });
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /model:\s+jury of juror-b, juror-c \(majority\)/);
    const same = await call('PATCH', `/v1/evaluators/${ev.id}/`, { models: ['juror-b', 'juror-c'] });
    assert.equal(same.body.version, 2, 'no change, no new version');
    const cleared = await call('PATCH', `/v1/evaluators/${ev.id}/`, { models: null, model: 'juror-a' });
    assert.equal(cleared.status, 200, JSON.stringify(cleared.body));
    assert.deepEqual([cleared.body.version, cleared.body.model, cleared.body.models, cleared.body.aggregation], [3, 'juror-a', null, null]);
    const v2 = await call('GET', `/v1/evaluators/${ev.id}/?version=2`);
    assert.equal(v2.status, 200, JSON.stringify(v2.body));
    assert.deepEqual(v2.body.models, ['juror-b', 'juror-c']);
    const noop = await call('PATCH', `/v1/evaluators/${ev.id}/`, { models: null });
    assert.equal(noop.body.version, 3, 'clearing an absent jury changes nothing');
  });
});

describe('jury aggregation, by hand', () => {
  test('mean, median, majority and spread', () => {
    assert.equal(aggregateScores([0.2, 0.4, 0.9], 'mean'), 0.5); // 1.5 / 3
    assert.equal(aggregateScores([0.2, 0.4, 0.9], 'median'), 0.4);
    assert.equal(aggregateScores([0.9, 0.2, 0.4, 1], 'median'), 0.65); // (0.4 + 0.9) / 2
    // fail 0.2, 0.4 vs pass 0.9: fail wins, (0.2 + 0.4) / 2 = 0.3, below 0.5 as the verdict says
    assert.equal(aggregateScores([0.2, 0.4, 0.9], 'majority'), 0.3);
    // 0.5 passes: pass 0.5, 0.7 vs fail 0.1 -> (0.5 + 0.7) / 2 = 0.6
    assert.equal(aggregateScores([0.5, 0.1, 0.7], 'majority'), 0.6);
    // a tie (one each): the mean of all, (0.8 + 0.2) / 2
    assert.equal(aggregateScores([0.8, 0.2], 'majority'), 0.5);
    assert.equal(spreadOf([0.2, 0.4, 0.9]), 0.7);
    assert.equal(spreadOf([0.5, 0.5]), 0);
    assert.equal(spreadOf([]), null);
  });

  const evaluator = { id: 'evl_x', name: 'X', version: 1, models: ['m1', 'm2', 'm3'], aggregation: 'mean' } as unknown as EvaluatorRecord;
  const outcome = (fields: Partial<EvaluatorResult>, failure?: JurorOutcome['failure']): JurorOutcome => ({
    result: {
      evaluator_id: 'evl_x',
      evaluator_name: 'X',
      evaluator_version: 1,
      score: null,
      justification: null,
      model: 'm',
      input_tokens: 10,
      output_tokens: 1,
      cost_usd: null,
      latency_ms: 1,
      ...fields,
    },
    failure,
  });

  test('not applicable when more than half of the jurors that answered say so; else they are left out', async () => {
    const na = (j: string) => outcome({ not_applicable: true, justification: j, cost_usd: 0 });
    const scored = (s: number) => outcome({ score: s, justification: `s${s}`, cost_usd: 0 });
    const failed = outcome({ error: 'down', input_tokens: 0, output_tokens: 0, cost_usd: 0 }, 'connection');
    const two = await scoreJury(evaluator, async (m) => (m === 'm3' ? scored(0.4) : na(`n/a by ${m}`)));
    assert.equal(two.result.not_applicable, true);
    assert.equal(two.result.score, null);
    assert.match(two.result.justification!, /2 of 3 jurors found the evaluator not applicable\. m1: n\/a by m1/);
    // 1 n/a of 2 answering is not more than half: scored from the other one
    const tie = await scoreJury(evaluator, async (m) => (m === 'm1' ? na('n/a') : m === 'm2' ? scored(0.4) : failed));
    assert.equal(tie.result.not_applicable, false);
    assert.equal(tie.result.score, 0.4);
    assert.equal(tie.result.spread, 0);
    assert.equal(tie.failure, undefined);
  });

  test('an unknown juror cost makes the jury cost unknown; all failing keeps the common kind', async () => {
    const priced = await scoreJury(evaluator, async (m) => outcome({ score: 0.5, justification: 'j', cost_usd: m === 'm2' ? null : 0.001 }));
    assert.equal(priced.result.cost_usd, null);
    assert.equal(priced.result.input_tokens, 30);
    const timeouts = await scoreJury(evaluator, async () => outcome({ error: 'slow' }, 'timeout'));
    assert.equal(timeouts.failure, 'timeout');
    assert.equal(timeouts.result.score, null);
    const mixed = await scoreJury(evaluator, async (m) => outcome({ error: 'x' }, m === 'm1' ? 'timeout' : 'auth'));
    assert.equal(mixed.failure, 'server_error');
  });
});
