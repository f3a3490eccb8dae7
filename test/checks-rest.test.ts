// Checks and code evaluators (issue 29) through the real server: REST and MCP create them (bad
// ones refused with the field, code with its line), judges mix them with model evaluators (no
// model call, cost 0, logged), batches, pairwise and conversations use them, sandbox failures are
// error results while the server keeps serving, and another organization's code is out of reach.
// TRIBUNAL_TEST_STORE=postgres runs it on PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { connectMcp } from './helpers/mcp-client.ts';
import { evaluatorBody, startScoringRig, type ScoringRig } from './helpers/execute.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

let rig: ScoringRig;
const JSON_CHECK = {
  name: 'Answers in JSON',
  intent: 'The answer must be a JSON object with an answer field.',
  kind: 'check',
  checks: [{ type: 'json_valid' }, { type: 'json_path', path: '$.answer' }],
};
const modelCalls = () => rig.fake.requests.length;

before(async () => {
  rig = await startScoringRig({ TRIBUNAL_CODE_TIMEOUT: '150ms' });
});
after(() => rig.close());

describe('check and code evaluators over REST', () => {
  test('a check evaluator is created, described, and run without a model call', async () => {
    const created = await rig.createEvaluator(JSON_CHECK);
    assert.equal(created.kind, 'check');
    assert.equal(created.combine, 'all');
    assert.match(created.rubric, /json_valid on response; json_path \$\.answer on response/);
    const before = modelCalls();
    const bad = await rig.post(`/v1/evaluators/${created.id}/execute/`, { request: 'Q?', response: 'Paris' });
    assert.equal(bad.status, 200, JSON.stringify(bad.body));
    const [r] = bad.body.evaluator_results;
    assert.equal(r.score, 0);
    assert.match(r.justification, /0 of 2 checks passed.*json_valid on response: not valid JSON/);
    assert.equal(r.model, null);
    assert.equal(r.cost_usd, 0);
    assert.equal(bad.body.cost_usd, 0);
    const good = await rig.post(`/v1/evaluators/${created.id}/execute/`, { request: 'Q?', response: '{"answer": "Paris"}' });
    assert.equal(good.body.score, 1);
    assert.equal(modelCalls(), before, 'no model call');
    const log = await rig.get(`/v1/execution-logs/${good.body.execution_log_id}/`);
    assert.equal(log.status, 200);
    assert.equal(log.body.evaluator_results[0].score, 1);
  });

  test('a judge mixes llm, check and code evaluators; only the llm one calls the model', async () => {
    const llm = await rig.createEvaluator(evaluatorBody());
    const check = await rig.createEvaluator({ name: 'Short answer', intent: 'At most 5 words.', kind: 'check', checks: [{ type: 'length', max: 5, unit: 'words' }] });
    const code = await rig.createEvaluator({
      name: 'Mentions Paris (code)',
      intent: 'The answer names Paris.',
      kind: 'code',
      code: 'return input.response.includes("Paris") ? { score: 1, justification: "names Paris" } : 0',
    });
    const judge = await rig.createJudge({ name: 'Mixed judge', intent: 'mixed kinds', evaluator_ids: [llm.id, check.id, code.id] });
    const before = modelCalls();
    const res = await rig.post(`/v1/judges/${judge.id}/execute/`, { request: 'Capital of France?', response: 'It is Paris, of course, my friend.' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(modelCalls() - before, 1, 'one model call: the llm evaluator');
    const [a, b, c] = res.body.evaluator_results;
    assert.deepEqual([a.evaluator_id, b.evaluator_id, c.evaluator_id], [llm.id, check.id, code.id]);
    assert.equal(b.score, 0);
    assert.match(b.justification, /7 words, more than 5/);
    assert.deepEqual([c.score, c.justification, c.model, c.cost_usd], [1, 'names Paris', null, 0]);
  });

  test('what cannot be saved is a 400 naming the field (and the line of code)', async () => {
    const refused = async (body: Record<string, unknown>, field: string, detail: RegExp) => {
      const res = await rig.post('/v1/evaluators/', { name: `bad ${Math.random()}`, intent: 'x', ...body });
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.ok(
        res.body.errors.some((e: { field: string }) => e.field === field),
        JSON.stringify(res.body),
      );
      assert.match(res.body.detail, detail);
    };
    await refused({ kind: 'check', checks: [{ type: 'regex', pattern: '(a+)+$' }] }, 'checks.0.pattern', /catastrophic backtracking/);
    await refused({ kind: 'check', checks: [{ type: 'json_schema', schema: { type: 12 } }] }, 'checks.0.schema', /not a valid JSON Schema/);
    await refused({ kind: 'check' }, 'checks', /needs `checks`/);
    await refused({ checks: [{ type: 'json_valid' }], rubric: 'r' }, 'checks', /kind check/);
    await refused({ kind: 'code', code: 'const a = 1;\nreturn a +;\n' }, 'code', /does not compile \(line 2\)/);
    await refused({ kind: 'code', code: 'while (true) {}' }, 'code', /time limit/);
    await refused({ kind: 'code' }, 'code', /needs `code`/);
    await refused({}, 'rubric', /needs a rubric/);
    await refused({ kind: 'check', checks: [{ type: 'length', max: 3, unti: 'words' }] }, 'checks.0.unti', /did you mean unit/);
    await refused({ kind: 'check', checks: [{ type: 'nope' }] }, 'checks.0.type', /json_valid/);
    await refused({ kind: 'check', checks: [{ type: 'regex', pattern: 'a', flags: 'g' }] }, 'checks.0.flags', /i, m, s, u/);
  });

  test('an equals check without a value compares with expected_output, which the evaluator then requires', async () => {
    const eq = await rig.createEvaluator({ name: 'Exact answer', intent: 'The answer is the reference, exactly.', kind: 'check', checks: [{ type: 'equals' }] });
    assert.equal(eq.requires_expected_output, true);
    const missing = await rig.post(`/v1/evaluators/${eq.id}/execute/`, { response: 'Paris' });
    assert.equal(missing.status, 400);
    assert.equal(missing.body.code, 'missing_field');
    const same = await rig.post(`/v1/evaluators/${eq.id}/execute/`, { response: ' Paris\n', expected_output: 'Paris' });
    assert.equal(same.body.score, 1);
  });

  test('a code evaluator that throws, loops or blows up is an error result; the server keeps serving', async () => {
    const code = await rig.createEvaluator({
      name: 'Fragile code',
      intent: 'x',
      kind: 'code',
      code: 'if (input.response === "loop") while (true) {}\nif (input.response === "throw") throw new Error("no way");\nif (input.response === "big") { const a = []; while (true) a.push("x".repeat(4096)); }\nreturn 1',
    });
    for (const [response, error] of [
      ['loop', /time limit/],
      ['throw', /threw \(line 2\): Error: no way/],
      ['big', /memory|time limit/],
    ] as const) {
      const res = await rig.post(`/v1/evaluators/${code.id}/execute/`, { response });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.evaluator_results[0].score, null);
      assert.match(res.body.evaluator_results[0].error, error);
      assert.equal(res.body.score, null);
    }
    assert.equal((await rig.server.request('GET', '/healthz')).status, 200);
    const ok = await rig.post(`/v1/evaluators/${code.id}/execute/`, { response: 'fine' });
    assert.equal(ok.body.score, 1);
  });

  test('tool_call checks read the turns (and make the evaluator require them)', async () => {
    const called = await rig.createEvaluator({
      name: 'Looked up the weather',
      intent: 'The agent called get_weather with a city.',
      kind: 'check',
      checks: [{ type: 'tool_call', name: 'get_weather', arguments_schema: { type: 'object', required: ['city'] } }],
    });
    assert.equal(called.requires_turns, true);
    const missing = await rig.post(`/v1/evaluators/${called.id}/execute/`, { response: 'It is sunny.' });
    assert.equal(missing.status, 400);
    assert.equal(missing.body.code, 'missing_field');
    const turns = [
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: '', tool_calls: [{ id: 'c1', name: 'get_weather', arguments: { city: 'Paris' } }] },
      { role: 'tool', content: '18C and sunny', tool_call_id: 'c1' },
      { role: 'assistant', content: 'It is 18C and sunny in Paris.' },
    ];
    const res = await rig.post(`/v1/evaluators/${called.id}/execute/`, { turns });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.score, 1);
    const wrong = await rig.post(`/v1/evaluators/${called.id}/execute/`, { turns: [turns[0], { role: 'assistant', content: 'I think it is sunny.' }] });
    assert.match(wrong.body.evaluator_results[0].justification, /no tool was called/);
  });

  test("pairwise: a check compares each side's score, without a model", async () => {
    const check = await rig.createEvaluator({ ...JSON_CHECK, name: 'JSON for compare' });
    const before = modelCalls();
    const res = await rig.post(`/v1/evaluators/${check.id}/compare/`, { request: 'Q?', response_a: 'Paris', response_b: '{"answer":"Paris"}' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.preference, 'b');
    assert.equal(res.body.evaluator_results[0].consistent, true);
    assert.match(res.body.evaluator_results[0].justification, /response a scored 0 .*response b scored 1/);
    assert.equal(modelCalls(), before);
  });

  test('a batch run of a judge of checks scores every row with no model call', async () => {
    const check = await rig.createEvaluator({ ...JSON_CHECK, name: 'JSON for batch' });
    const judge = await rig.createJudge({ name: 'Batch of checks', intent: 'json', evaluator_ids: [check.id] });
    const before = modelCalls();
    const items = [{ response: '{"answer":1}' }, { response: 'nope' }, { response: '{"other":1}' }];
    const started = await rig.post(`/v1/judges/${judge.id}/batch-execute/`, { items });
    assert.equal(started.status, 202, JSON.stringify(started.body));
    let run: any;
    for (let i = 0; i < 300; i++) {
      run = (await rig.get(`/v1/judges/batch-executions/${started.body.batch_execution_id}/`)).body;
      if (['completed', 'failed', 'cancelled'].includes(run.status)) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(run.status, 'completed', JSON.stringify(run));
    assert.equal(run.done, 3);
    assert.equal(run.summary[0].mean, 0.3333);
    assert.equal(modelCalls(), before);
  });

  test('a calibration run measures a check evaluator against people, with no model call', async () => {
    const check = await rig.createEvaluator({ ...JSON_CHECK, name: 'JSON for calibration' });
    const ds = (await rig.post('/v1/datasets/', { name: 'calib checks' })).body.id;
    const items = [
      { response: '{"answer": 1}', expected_scores: { [check.id]: 1 } },
      { response: 'not json', expected_scores: { [check.id]: 0 } },
      { response: '{"other": 1}', expected_scores: { [check.id]: 1 } },
    ];
    assert.equal((await rig.post(`/v1/datasets/${ds}/items/`, { items })).status, 201);
    const before = modelCalls();
    const started = await rig.post('/v1/calibration-runs/', { evaluator_id: check.id, dataset_id: ds });
    assert.equal(started.status, 202, JSON.stringify(started.body));
    let run: any;
    for (let i = 0; i < 300; i++) {
      run = (await rig.get(`/v1/calibration-runs/${started.body.id}/`)).body;
      if (run.status !== 'queued' && run.status !== 'running') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(run.status, 'completed', JSON.stringify(run));
    const [m] = run.metrics;
    assert.equal(m.n, 3);
    // Scores 1, 0, 0 against people's 1, 0, 1: one item off by 1.
    assert.equal(Math.round(m.mae * 1000) / 1000, 0.333);
    assert.deepEqual(m.confusion, { tp: 1, fp: 0, tn: 1, fn: 1 });
    assert.equal(modelCalls(), before);
  });

  test('an edit makes a new version; a broken edit is refused and changes nothing', async () => {
    const code = await rig.createEvaluator({ name: 'Editable code', intent: 'x', kind: 'code', code: 'return 1' });
    const broken = await rig.server.request('PATCH', `/v1/evaluators/${code.id}/`, { key: rig.key, body: { code: 'return (' } });
    assert.equal(broken.status, 400, JSON.stringify(broken.body));
    const edited = await rig.server.request('PATCH', `/v1/evaluators/${code.id}/`, { key: rig.key, body: { code: 'return 0.5' } });
    assert.equal(edited.status, 200, JSON.stringify(edited.body));
    assert.equal(edited.body.version, 2);
    const res = await rig.post(`/v1/evaluators/${code.id}/execute/`, { response: 'x' });
    assert.equal(res.body.score, 0.5);
    const toCheck = await rig.server.request('PATCH', `/v1/evaluators/${code.id}/`, { key: rig.key, body: { kind: 'check', checks: [{ type: 'contains', value: 'x' }] } });
    assert.equal(toCheck.status, 200, JSON.stringify(toCheck.body));
    assert.equal(toCheck.body.code, null);
    assert.equal((await rig.post(`/v1/evaluators/${code.id}/execute/`, { response: 'x' })).body.score, 1);
  });

  test('try: a draft is scored on one input, nothing saved or logged; a broken draft is a 400', async () => {
    const logsBefore = (await rig.get('/v1/execution-logs/?limit=200')).body.results.length;
    const check = await rig.post('/v1/evaluators/try/', { kind: 'check', checks: [{ type: 'length', max: 3, unit: 'words' }], response: 'one two three four' });
    assert.equal(check.status, 200, JSON.stringify(check.body));
    assert.equal(check.body.score, 0);
    assert.match(check.body.justification, /4 words, more than 3/);
    const code = await rig.post('/v1/evaluators/try/', { kind: 'code', code: 'return input.expected_output === input.response ? 1 : 0', response: 'x', expected_output: 'x' });
    assert.equal(code.body.score, 1);
    const threw = await rig.post('/v1/evaluators/try/', { kind: 'code', code: 'if (input.response === "boom") throw new Error("bad");\nreturn 1', response: 'boom' });
    assert.equal(threw.status, 200);
    assert.equal(threw.body.score, null);
    assert.match(threw.body.error, /line 1.*bad/);
    const broken = await rig.post('/v1/evaluators/try/', { kind: 'code', code: 'return 1;\nreturn (', response: 'x' });
    assert.equal(broken.status, 400);
    assert.match(broken.body.detail, /line 2/);
    assert.equal((await rig.get('/v1/execution-logs/?limit=200')).body.results.length, logsBefore, 'nothing logged');
  });

  test('MCP create_evaluator takes kind and checks', async () => {
    const mcp = await connectMcp(rig.server.url, rig.key);
    try {
      const made = await mcp.call('create_evaluator', { name: 'MCP check', intent: 'No email addresses.', kind: 'check', checks: [{ type: 'regex', pattern: '^[^@]*$' }] });
      assert.equal(made.isError, undefined, made.text);
      assert.equal(made.json.kind, 'check');
      const ran = await mcp.call('run_evaluator', { evaluator_id: made.json.id, response: 'mail me at a@b.c' });
      assert.equal(ran.json.evaluator_results[0].score, 0);
      const bad = await mcp.call('create_evaluator', { name: 'MCP code', intent: 'x', kind: 'code', code: 'return )' });
      assert.equal(bad.isError, true);
      assert.match(bad.text, /line 1/);
    } finally {
      await mcp.close();
    }
  });
});

describe('without a judge model, and across organizations', () => {
  let srv: TestServer;
  const orgKey = async (name: string) => {
    const { createOrganization } = await import('../src/domain/orgs.ts');
    return (await createOrganization(srv.store, { name, isDemo: false })).api_key;
  };
  before(async () => {
    srv = await startTestServer({ TRIBUNAL_RATE_LIMIT: '100000' });
  });
  after(() => srv.close());

  test('a judge of checks runs on a server with no model configured', async () => {
    const key = await orgKey('no-model');
    const ev = await srv.request('POST', '/v1/evaluators/', { key, body: JSON_CHECK });
    assert.equal(ev.status, 201, JSON.stringify(ev.body));
    const judge = await srv.request('POST', '/v1/judges/', { key, body: { name: 'Checks only', intent: 'x', evaluator_ids: [ev.body.id] } });
    const res = await srv.request('POST', `/v1/judges/${judge.body.id}/execute/`, { key, body: { response: '{"answer":true}' } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.score, 1);
    // A batch of it starts too (no model_unavailable refusal at the start).
    const started = await srv.request('POST', `/v1/judges/${judge.body.id}/batch-execute/`, { key, body: { items: [{ response: '{"answer":1}' }, { response: 'x' }] } });
    assert.equal(started.status, 202, JSON.stringify(started.body));
    let run: any;
    for (let i = 0; i < 300; i++) {
      run = (await srv.request('GET', `/v1/judges/batch-executions/${started.body.batch_execution_id}/`, { key })).body;
      if (['completed', 'failed', 'cancelled'].includes(run.status)) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(run.status, 'completed', JSON.stringify(run));
    assert.equal(run.summary[0].mean, 0.5);
  });

  test("another organization's private code evaluator cannot be read or run; a public one keeps no state across organizations", async () => {
    const [a, b] = [await orgKey('owner'), await orgKey('other')];
    const code = 'globalThis.seen = (globalThis.seen || []).concat(input.response); return { score: 1, justification: globalThis.seen.join("|") }';
    const priv = await srv.request('POST', '/v1/evaluators/', { key: a, body: { name: 'Private code', intent: 'x', kind: 'code', code } });
    assert.equal(priv.status, 201, JSON.stringify(priv.body));
    assert.equal((await srv.request('POST', `/v1/evaluators/${priv.body.id}/execute/`, { key: b, body: { response: 'x' } })).status, 404);
    assert.equal((await srv.request('GET', `/v1/evaluators/${priv.body.id}/`, { key: b })).status, 404);
    const pub = await srv.request('POST', '/v1/evaluators/', { key: a, body: { name: 'Public code', intent: 'x', kind: 'code', code, visibility: 'public' } });
    await srv.request('POST', `/v1/evaluators/${pub.body.id}/execute/`, { key: b, body: { response: 'secret of B' } });
    const byA = await srv.request('POST', `/v1/evaluators/${pub.body.id}/execute/`, { key: a, body: { response: 'A' } });
    assert.equal(byA.body.evaluator_results[0].justification, 'A', 'what B passed never reaches A');
  });
});
