// Log-probability scoring (G-Eval, issue 17): the grade distribution computed by hand from the
// fake's token log-probabilities, the exact request sent (JSON-schema answer whose last field is the
// grade, logprobs and top_logprobs asked for, no tool), refusal at evaluator writes for models known
// to lack log-probabilities, and a clear error result (never direct scoring) when a server sends none.
// TRIBUNAL_TEST_STORE=postgres runs it on PostgreSQL.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { gradeDistribution, GRADE_INSTRUCTION, TOP_LOGPROBS } from '../src/engine/logprobs.ts';
import type { TokenLogprob } from '../src/engine/providers/model.ts';
import { startFakeAnthropic, type FakeAnthropic } from './helpers/fake-anthropic.ts';
import { startFakeOpenAI, type FakeOpenAI } from './helpers/fake-openai.ts';
import { evaluatorBody } from './helpers/execute.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

const ln = Math.log;
const tok = (token: string, top: Array<[string, number]> = []): TokenLogprob => ({
  token,
  logprob: top.find(([t]) => t === token)?.[1] ?? -0.01,
  top: top.map(([t, logprob]) => ({ token: t, logprob })),
});

describe('the grade distribution, by hand', () => {
  test('the grade token on its own: p normalised over grades, E[g] mapped to 0..1', () => {
    const grade = tok('4', [
      ['4', ln(0.6)],
      ['3', ln(0.3)],
      ['5', ln(0.05)],
      ['x', ln(0.05)],
    ]);
    const tokens = ['{"', 'justification', '":"', 'ok', '","', 'not_applicable', '":', 'false', ',"', 'grade', '":'].map((t) => tok(t));
    const d = gradeDistribution([...tokens, grade, tok('}')]);
    assert.ok(!('problem' in d));
    // grade mass 0.6 + 0.3 + 0.05 = 0.95 ('x' is no grade); p4 = 0.6/0.95, p3 = 0.3/0.95, p5 = 0.05/0.95
    // E[g] = (4*0.6 + 3*0.3 + 5*0.05) / 0.95 = 3.55 / 0.95 = 3.736842...; score (3.736842 - 1) / 4 = 0.684210... -> 0.6842
    assert.equal(d.score, 0.6842);
    assert.deepEqual(d.probabilities, { 1: 0, 2: 0, 3: 0.3158, 4: 0.6316, 5: 0.0526 });
  });

  test('a token that carries more than the digit (":4") matches alternatives with the same surroundings', () => {
    const head = tok('{"justification":"ok","not_applicable":false,"grade"');
    const grade = tok(':4', [
      [':4', ln(0.5)],
      [':2', ln(0.25)],
      [' 4', ln(0.1)],
      [':5', ln(0.15)],
    ]);
    const d = gradeDistribution([head, grade, tok('}')]);
    assert.ok(!('problem' in d));
    // ' 4' lacks the colon: not the same token shape, left out. mass 0.5 + 0.25 + 0.15 = 0.9
    // E[g] = (4*0.5 + 2*0.25 + 5*0.15) / 0.9 = 3.25 / 0.9 = 3.6111...; score 2.6111 / 4 = 0.65277... -> 0.6528
    assert.equal(d.score, 0.6528);
    // whitespace aside: ' 3' stands for the grade token '3' after '": '
    const spaced = gradeDistribution([
      tok('{"justification":"ok","not_applicable":false,"grade": '),
      tok('3', [
        ['3', ln(0.8)],
        [' 1', ln(0.2)],
      ]),
      tok('}'),
    ]);
    // E[g] = 3*0.8 + 1*0.2 = 2.6; score 1.6 / 4 = 0.4
    assert.ok(!('problem' in spaced));
    assert.equal(spaced.score, 0.4);
    // the digit and the closing brace in one token ("4}"): '2}' and '5}' count, a bare '3' does not
    const braced = gradeDistribution([
      tok('{"justification":"ok","not_applicable":false,"grade":'),
      tok('4}', [
        ['4}', ln(0.6)],
        ['2}', ln(0.2)],
        ['3', ln(0.1)],
        ['5}', ln(0.1)],
      ]),
    ]);
    assert.ok(!('problem' in braced));
    // mass 0.6 + 0.2 + 0.1 = 0.9; E[g] = (4*0.6 + 2*0.2 + 5*0.1) / 0.9 = 3.3 / 0.9 = 3.6667; score 2.6667 / 4 = 0.66667 -> 0.6667
    assert.equal(braced.score, 0.6667);
  });

  test('a certain grade scores exactly its step; an answer not ending in the grade is a problem', () => {
    const only = gradeDistribution([tok('{"justification":"x","not_applicable":false,"grade":'), tok('5', [['5', 0]]), tok('}')]);
    assert.ok(!('problem' in only));
    assert.equal(only.score, 1);
    const notLast = gradeDistribution([tok('{"grade":4,"justification":"x"}')]);
    assert.ok('problem' in notLast);
    assert.match(notLast.problem, /does not end with the grade/);
  });
});

describe('scoring "logprobs" through the server', () => {
  const env = { TRIBUNAL_SECRET_KEY: randomBytes(32).toString('base64'), TRIBUNAL_MODEL_RETRIES: '0', TRIBUNAL_RATE_LIMIT: '100000' };
  let server: TestServer;
  let withLp: FakeOpenAI;
  let without: FakeOpenAI;
  let anthropic: FakeAnthropic;
  let key: string;
  const call = (method: string, path: string, body?: unknown) => server.request(method, path, { key, body });
  const run = (id: string) => call('POST', `/v1/evaluators/${id}/execute/`, { request: 'What is 2+2?', response: 'It is 4.' });

  before(async () => {
    [withLp, without, anthropic] = await Promise.all([startFakeOpenAI(), startFakeOpenAI({ honours: { logprobs: false } }), startFakeAnthropic()]);
    server = await startTestServer(env);
    key = (await server.demoUser()).api_key;
    const register = async (body: Record<string, unknown>, verify: boolean) => {
      const res = await call('POST', '/v1/models/', body);
      assert.equal(res.status, 201, JSON.stringify(res.body));
      if (verify) assert.equal((await call('POST', `/v1/models/${res.body.id}/verify/`)).status, 200);
    };
    await register({ name: 'lp', provider: 'openai', base_url: withLp.url, model: 'judge-lp', price: { input: 1, output: 2 } }, true);
    await register({ name: 'no-lp', provider: 'openai', base_url: without.url, model: 'judge-plain' }, true);
    await register({ name: 'no-lp-unverified', provider: 'openai', base_url: without.url, model: 'judge-plain' }, false);
    await register({ name: 'messages', provider: 'anthropic', base_url: anthropic.url, model: 'claude-x' }, false);
    assert.equal((await call('GET', '/v1/models/lp/')).body.capabilities.logprobs, true);
    assert.equal((await call('GET', '/v1/models/no-lp/')).body.capabilities.logprobs, false);
  });
  after(async () => {
    await server.close();
    await Promise.all([withLp.close(), without.close(), anthropic.close()]);
  });

  test('the score is the probability-weighted mean grade from the log-probabilities the server returned', async () => {
    const ev = await call('POST', '/v1/evaluators/', evaluatorBody({ model: 'lp', scoring: 'logprobs' }));
    assert.equal(ev.status, 201, JSON.stringify(ev.body));
    assert.equal(ev.body.scoring, 'logprobs');
    withLp.answers.submit_grade = { justification: 'Correct, and says so plainly.', not_applicable: false, grade: 4 };
    // The fake model was unsure between 4 (0.5), 5 (0.3) and 3 (0.15); '"' (0.05) is no grade.
    withLp.alternatives['4'] = [
      { token: '4', logprob: ln(0.5) },
      { token: '5', logprob: ln(0.3) },
      { token: '3', logprob: ln(0.15) },
      { token: '"', logprob: ln(0.05) },
    ];
    try {
      const before = withLp.requests.length;
      const res = await run(ev.body.id);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const r = res.body.evaluator_results[0];
      // mass 0.5 + 0.3 + 0.15 = 0.95; E[g] = (4*0.5 + 5*0.3 + 3*0.15) / 0.95 = 3.95 / 0.95 = 4.157894...
      // score (4.157894 - 1) / 4 = 0.789473... -> 0.7895 (the grade alone would say 0.75)
      assert.equal(r.score, 0.7895);
      assert.deepEqual(r.grade_probabilities, { 1: 0, 2: 0, 3: 0.1579, 4: 0.5263, 5: 0.3158 });
      assert.equal(r.justification, 'Correct, and says so plainly.');
      assert.equal(r.model, 'judge-lp');
      assert.equal(r.cost_usd, 0.0012);
      assert.equal(withLp.requests.length - before, 1, 'one call');
      const sent = withLp.requests[before].body;
      assert.equal(sent.logprobs, true);
      assert.equal(sent.top_logprobs, TOP_LOGPROBS);
      assert.equal(sent.tools, undefined, 'tool arguments carry no log-probabilities');
      assert.equal(sent.response_format.type, 'json_schema');
      assert.equal(sent.response_format.json_schema.name, 'submit_grade');
      assert.deepEqual(Object.keys(sent.response_format.json_schema.schema.properties), ['justification', 'not_applicable', 'grade'], 'the grade last');
      assert.ok(sent.messages[1].content.endsWith(GRADE_INSTRUCTION), 'the grade scale is asked for at the end of the user turn');
      assert.equal(sent.temperature, 0);
    } finally {
      delete withLp.alternatives['4'];
    }
  });

  test('not applicable on the grade scale is a null score, as with direct scoring', async () => {
    const ev = await call('POST', '/v1/evaluators/', evaluatorBody({ model: 'lp', scoring: 'logprobs' }));
    withLp.answers.submit_grade = { justification: 'Nothing to cite here.', not_applicable: true, grade: null };
    const r = (await run(ev.body.id)).body.evaluator_results[0];
    assert.equal(r.score, null);
    assert.equal(r.not_applicable, true);
  });

  test('a server that sends no log-probabilities fails the result with a clear error, once, never scored directly', async () => {
    const ev = await call('POST', '/v1/evaluators/', evaluatorBody({ model: 'no-lp-unverified', scoring: 'logprobs' }));
    assert.equal(ev.status, 201, 'not verified yet: accepted, the run decides');
    without.answers.submit_grade = { justification: 'fine', not_applicable: false, grade: 5 };
    const before = without.requests.length;
    const res = await run(ev.body.id);
    assert.equal(res.status, 502, JSON.stringify(res.body));
    assert.equal(res.body.code, 'model_unavailable');
    assert.match(res.body.detail, /judge-plain returned no token log-probabilities, which scoring "logprobs" needs/);
    assert.equal(without.requests.length - before, 1, 'not retried');
    assert.equal(without.requests[before].body.logprobs, true);
  });

  test('evaluator writes refuse models known to lack log-probabilities, with a 400 naming the field', async () => {
    const refused = async (body: Record<string, unknown>, detail: RegExp) => {
      const res = await call('POST', '/v1/evaluators/', evaluatorBody(body));
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.equal(res.body.code, 'validation_error');
      assert.match(JSON.stringify(res.body.errors), /"scoring"/);
      assert.match(res.body.detail, detail);
    };
    await refused({ model: 'no-lp', scoring: 'logprobs' }, /"no-lp" was verified .* returns no token log-probabilities/);
    await refused({ model: 'messages', scoring: 'logprobs' }, /"messages" uses the anthropic provider/);
    await refused({ scoring: 'logprobs' }, /the server's default model is the server's own Anthropic model/);
    await refused({ models: ['lp', 'no-lp'], scoring: 'logprobs' }, /"no-lp"/);
    // update: turning logprobs on for a model without them
    const ev = await call('POST', '/v1/evaluators/', evaluatorBody({ model: 'no-lp' }));
    const patched = await call('PATCH', `/v1/evaluators/${ev.body.id}/`, { scoring: 'logprobs' });
    assert.equal(patched.status, 400, JSON.stringify(patched.body));
    // and moving a logprobs evaluator onto such a model
    const lp = await call('POST', '/v1/evaluators/', evaluatorBody({ model: 'lp', scoring: 'logprobs' }));
    const moved = await call('PATCH', `/v1/evaluators/${lp.body.id}/`, { model: 'messages' });
    assert.equal(moved.status, 400, JSON.stringify(moved.body));
    assert.equal((await call('PATCH', `/v1/evaluators/${lp.body.id}/`, { scoring: 'direct' })).body.scoring, 'direct');
  });

  test('a jury scores with log-probabilities juror by juror', async () => {
    const ev = await call('POST', '/v1/evaluators/', evaluatorBody({ models: ['lp', 'no-lp-unverified'], scoring: 'logprobs' }));
    assert.equal(ev.status, 201, JSON.stringify(ev.body));
    withLp.answers.submit_grade = { justification: 'Good.', not_applicable: false, grade: 3 };
    withLp.alternatives['3'] = [
      { token: '3', logprob: ln(0.5) },
      { token: '2', logprob: ln(0.5) },
    ];
    try {
      const r = (await run(ev.body.id)).body.evaluator_results[0];
      // lp: E[g] = 3*0.5 + 2*0.5 = 2.5 -> (2.5 - 1) / 4 = 0.375; the other juror sends no log-probabilities and is left out
      assert.equal(r.score, 0.375);
      assert.match(r.jurors[1].error, /no token log-probabilities/);
    } finally {
      delete withLp.alternatives['3'];
    }
  });
});
