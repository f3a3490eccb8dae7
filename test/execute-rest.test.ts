// Running judges and evaluators over REST (and the tool handler by name), on the fake judge model.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { invokeTool } from '../src/tool.ts';
import { tools } from '../tools/index.ts';
import { toolAnswer } from './helpers/fake-anthropic.ts';
import { DUMMY_KEY, evaluatorBody, startScoringRig, type ScoringRig } from './helpers/execute.ts';
import { startTestServer } from './helpers/server.ts';

describe('execute over REST', () => {
  let rig: ScoringRig;
  before(async () => {
    // An operator may allow a model missing from the price table; its calls then cost 0.
    rig = await startScoringRig({ TRIBUNAL_ALLOWED_MODELS: 'claude-sonnet-4-5,claude-haiku-4-5,some-unpriced-model' });
  });
  after(() => rig.close());

  test('a judge of presets and a custom evaluator runs; results in judge order; the log has every field', async () => {
    const custom = await rig.createEvaluator(evaluatorBody({ demonstrations: [{ request: 'Q?', response: 'A.', score: 0.9, justification: 'good' }] }));
    const judge = await rig.createJudge({ name: 'Support reply judge', intent: 'Judges support replies.', evaluator_ids: ['preset_answer_relevance', custom.id, 'Clarity'] });
    const scores: Record<string, number> = { 'Answer Relevance': 0.9, [custom.name]: 0.6, Clarity: 0.3 };
    rig.fake.resetStats();
    rig.fake.respondWith((req) => {
      const name = Object.keys(scores).find((n) => req.system.includes(`Name: ${n}\n`))!;
      return toolAnswer({ justification: `Justified for ${name}.`, score: scores[name] }, { usage: { input_tokens: 1000, output_tokens: 200 } });
    });
    try {
      const res = await rig.post(`/v1/judges/${judge.id}/execute/`, {
        request: 'How do I reset my password?',
        response: 'Click "Forgot password" on the sign-in page.',
        user_id: 'user-42',
        tags: ['support', 'v2'],
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(
        res.body.evaluator_results.map((r: any) => [r.evaluator_name, r.score, r.justification]),
        [
          ['Answer Relevance', 0.9, 'Justified for Answer Relevance.'],
          [custom.name, 0.6, `Justified for ${custom.name}.`],
          ['Clarity', 0.3, 'Justified for Clarity.'],
        ],
      );
      assert.equal(res.body.score, 0.6);
      // claude-sonnet-4-5 is $3 in / $15 out per million: 1000*3e-6 + 200*15e-6 = 0.006 per evaluator.
      for (const r of res.body.evaluator_results) {
        assert.equal(r.cost_usd, 0.006);
        assert.equal(r.input_tokens, 1000);
        assert.equal(r.output_tokens, 200);
        assert.equal(r.model, 'claude-sonnet-4-5');
        assert.equal(r.evaluator_version, 1);
        assert.ok(r.latency_ms >= 0);
        assert.equal(r.error, undefined);
      }
      assert.equal(res.body.cost_usd, 0.018);
      assert.equal(rig.fake.requests.length, 3);
      for (const req of rig.fake.requests) {
        assert.equal(req.headers.authorization, `Bearer ${DUMMY_KEY}`);
        assert.equal(req.body.model, 'claude-sonnet-4-5');
        assert.deepEqual(req.body.tool_choice, { type: 'tool', name: 'submit_evaluation', disable_parallel_tool_use: true });
        assert.deepEqual(Object.keys(req.body.tools[0].input_schema.properties), ['justification', 'not_applicable', 'score', 'confidence']);
      }
      // The custom evaluator's demonstration is in its (static) system prompt as a scored example.
      const customReq = rig.fake.requests.find((r) => r.system.includes(`Name: ${custom.name}\n`))!;
      assert.match(customReq.system, /# Scored examples/);
      assert.match(customReq.system, /<score_[0-9a-f]{24}>0\.9<\/score_[0-9a-f]{24}>/);
      assert.doesNotMatch(customReq.prompt, /# Scored examples/);

      const log = await rig.get(`/v1/execution-logs/${res.body.execution_log_id}/`);
      assert.equal(log.status, 200);
      assert.equal(log.body.type, 'judge');
      assert.equal(log.body.judge_id, judge.id);
      assert.equal(log.body.judge_name, 'Support reply judge');
      assert.equal(log.body.judge_version, 1);
      assert.equal(log.body.evaluator_id, null);
      assert.equal(log.body.project_id, rig.projectId);
      assert.equal(log.body.request, 'How do I reset my password?');
      assert.equal(log.body.response, 'Click "Forgot password" on the sign-in page.');
      assert.equal(log.body.contexts, null);
      assert.equal(log.body.expected_output, null);
      assert.equal(log.body.user_id, 'user-42');
      assert.deepEqual(log.body.tags, ['support', 'v2']);
      assert.deepEqual(log.body.evaluator_results, res.body.evaluator_results);
      assert.equal(log.body.score, 0.6);
      assert.equal(log.body.cost_usd, 0.018);
      assert.ok(log.body.latency_ms >= 0);
      assert.ok(!Number.isNaN(Date.parse(log.body.created_at)));
    } finally {
      rig.fake.respondWith(null);
    }
  });

  test('an evaluator runs by id over REST, with project_id; contexts reach the prompt', async () => {
    const project = await rig.post('/v1/projects/', { name: 'RAG bot' });
    assert.equal(project.status, 201);
    rig.fake.enqueue(toolAnswer({ justification: 'Every claim is in the snippets.', score: 1 }));
    const res = await rig.post('/v1/evaluators/preset_faithfulness/execute/', {
      request: 'When was the bridge built?',
      response: 'In 1932.',
      contexts: ['The bridge opened in 1932.', 'It is 503 m long.'],
      project_id: project.body.id,
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.score, 1);
    assert.equal(res.body.evaluator_results.length, 1);
    assert.equal(res.body.evaluator_results[0].evaluator_id, 'preset_faithfulness');
    const prompt = rig.fake.requests.at(-1)!.prompt;
    assert.match(prompt, /<context_([0-9a-f]{24}) number="2">\nIt is 503 m long\.\n<\/context_\1>/);
    const log = await rig.get(`/v1/execution-logs/${res.body.execution_log_id}/`);
    assert.equal(log.body.type, 'evaluator');
    assert.equal(log.body.evaluator_id, 'preset_faithfulness');
    assert.equal(log.body.evaluator_name, 'Faithfulness');
    assert.equal(log.body.evaluator_version, 1);
    assert.equal(log.body.judge_id, null);
    assert.equal(log.body.project_id, project.body.id);
    assert.deepEqual(log.body.contexts, ['The bridge opened in 1932.', 'It is 503 m long.']);
  });

  test('run_evaluator by exact name and run_judge by exact name (the tool handlers REST and MCP share)', async () => {
    const ctx = { ...rig.server.services, caller: await callerOf(rig) };
    rig.fake.enqueue(toolAnswer({ justification: 'Plain and short.', score: 0.8 }));
    const byName = await invokeTool(tools.runEvaluator, { evaluator_name: 'Conciseness', response: 'Yes.' }, ctx);
    assert.equal(byName.evaluator_results[0].evaluator_id, 'preset_conciseness');
    assert.equal(byName.score, 0.8);
    const log = await rig.get(`/v1/execution-logs/${byName.execution_log_id}/`);
    assert.equal(log.body.project_id, rig.projectId, 'default project when no project_id');

    const judge = await rig.createJudge({ name: 'Named judge', intent: 'x', evaluator_ids: ['preset_politeness'] });
    rig.fake.enqueue(toolAnswer({ justification: 'Courteous.', score: 0.7 }));
    const judged = await invokeTool(tools.runJudge, { judge_name: 'Named judge', response: 'Thank you for asking!' }, ctx);
    assert.equal(judged.score, 0.7);
    assert.equal((await rig.get(`/v1/execution-logs/${judged.execution_log_id}/`)).body.judge_id, judge.id);

    await assert.rejects(invokeTool(tools.runEvaluator, { evaluator_name: 'No Such Evaluator', response: 'x' }, ctx), (err: any) => err.code === 'not_found');
  });

  test('an exact name in the id position of the REST path runs that evaluator or judge', async () => {
    rig.fake.enqueue(toolAnswer({ justification: 'Clear.', score: 0.9 }));
    const byName = await rig.post('/v1/evaluators/Clarity/execute/', { response: 'Plain words.' });
    assert.equal(byName.status, 200, JSON.stringify(byName.body));
    assert.equal(byName.body.evaluator_results[0].evaluator_id, 'preset_clarity');
    const judge = await rig.createJudge({ name: 'Path named judge', intent: 'x', evaluator_ids: ['preset_clarity'] });
    rig.fake.enqueue(toolAnswer({ justification: 'Clear.', score: 0.9 }));
    const judged = await rig.post(`/v1/judges/${encodeURIComponent('Path named judge')}/execute/`, { response: 'Plain words.' });
    assert.equal(judged.status, 200, JSON.stringify(judged.body));
    assert.equal((await rig.get(`/v1/execution-logs/${judged.body.execution_log_id}/`)).body.judge_id, judge.id);
    const unknown = await rig.post('/v1/evaluators/No%20Such%20Thing/execute/', { response: 'x' });
    assert.equal(unknown.status, 404);
    assert.match(unknown.body.detail, /No evaluator named "No Such Thing"/);
  });

  test('missing inputs are refused for the whole judge at once, before any model call', async () => {
    const judge = await rig.createJudge({
      name: 'RAG judge',
      intent: 'x',
      evaluator_ids: ['preset_faithfulness', 'preset_answer_correctness', 'preset_clarity', 'preset_context_recall'],
    });
    const before = rig.fake.requests.length;
    const res = await rig.post(`/v1/judges/${judge.id}/execute/`, { request: 'q', response: 'a' });
    assert.equal(res.status, 400);
    assert.equal(res.headers.get('content-type'), 'application/problem+json; charset=utf-8');
    assert.equal(res.body.code, 'missing_field');
    assert.match(res.body.detail, /evaluator Faithfulness needs `contexts`/);
    assert.match(res.body.detail, /evaluator Answer Correctness needs `expected_output`/);
    assert.match(res.body.detail, /evaluator Context Recall needs `contexts`/);
    assert.match(res.body.detail, /evaluator Context Recall needs `expected_output`/);
    assert.deepEqual(
      res.body.errors.map((e: any) => e.field),
      ['contexts', 'expected_output', 'contexts', 'expected_output'],
    );
    // An empty list is not contexts either; a single evaluator is checked the same way.
    const single = await rig.post('/v1/evaluators/preset_faithfulness/execute/', { response: 'a', contexts: [] });
    assert.equal(single.status, 400);
    assert.equal(single.body.code, 'missing_field');
    assert.match(single.body.detail, /Faithfulness needs `contexts`/);
    assert.equal(rig.fake.requests.length, before, 'no model call was made');
    const logs = await rig.get(`/v1/execution-logs/?judge_id=${judge.id}`);
    assert.deepEqual(logs.body.results, [], 'a refused run is not logged');

    const ok = await rig.post(`/v1/judges/${judge.id}/execute/`, { request: 'q', response: 'a', contexts: ['c'], expected_output: 'a' });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal(ok.body.evaluator_results.length, 4);
  });

  test("an evaluator's model overrides TRIBUNAL_MODEL; an unpriced model's cost is null (unknown)", async () => {
    const evaluator = await rig.createEvaluator(evaluatorBody({ model: 'claude-haiku-4-5' }));
    rig.fake.enqueue(toolAnswer({ justification: 'fine', score: 0.5 }, { usage: { input_tokens: 2000, output_tokens: 100 }, model: 'claude-haiku-4-5-20251001' }));
    const res = await rig.post(`/v1/evaluators/${evaluator.id}/execute/`, { response: 'x' });
    assert.equal(res.status, 200);
    assert.equal(rig.fake.requests.at(-1)!.body.model, 'claude-haiku-4-5');
    assert.equal(res.body.evaluator_results[0].model, 'claude-haiku-4-5-20251001');
    assert.equal(res.body.evaluator_results[0].cost_usd, 0.0025); // 2000*1e-6 + 100*5e-6

    const odd = await rig.createEvaluator(evaluatorBody({ model: 'some-unpriced-model' }));
    rig.fake.enqueue(toolAnswer({ justification: 'fine', score: 0.5 }, { usage: { input_tokens: 2000, output_tokens: 100 } }));
    const res2 = await rig.post(`/v1/evaluators/${odd.id}/execute/`, { response: 'x' });
    assert.equal(res2.status, 200);
    assert.equal(res2.body.evaluator_results[0].cost_usd, null, 'unknown, never a silent 0');
    assert.equal(res2.body.cost_usd, null, 'a total with an unknown part is unknown');
    assert.equal(res2.body.evaluator_results[0].input_tokens, 2000);
    const logged = await rig.get(`/v1/execution-logs/${res2.body.execution_log_id}/`);
    assert.equal(logged.body.cost_usd, null);
    assert.equal(logged.body.evaluator_results[0].cost_usd, null);
  });

  test('a judge runs the exact evaluator versions it references, and the log records them', async () => {
    const evaluator = await rig.createEvaluator(evaluatorBody());
    const pinned = await rig.createJudge({ name: 'Pinned judge', intent: 'x', evaluator_ids: [evaluator.id], pin_versions: true });
    const latest = await rig.createJudge({ name: 'Latest judge', intent: 'x', evaluator_ids: [evaluator.id] });
    const edit = await rig.server.request('PATCH', `/v1/evaluators/${evaluator.id}/`, { key: rig.key, body: { rubric: 'A brand new rubric: score 1 only for perfect answers.' } });
    assert.equal(edit.status, 200, JSON.stringify(edit.body));
    assert.equal(edit.body.version, 2);

    const a = await rig.post(`/v1/judges/${pinned.id}/execute/`, { response: 'x' });
    assert.equal(a.body.evaluator_results[0].evaluator_version, 1);
    assert.doesNotMatch(rig.fake.requests.at(-1)!.system, /brand new rubric/);
    const b = await rig.post(`/v1/judges/${latest.id}/execute/`, { response: 'x' });
    assert.equal(b.body.evaluator_results[0].evaluator_version, 2);
    assert.match(rig.fake.requests.at(-1)!.system, /A brand new rubric/);
  });

  test('unknown judge or evaluator ids answer 404 without a model call', async () => {
    const before = rig.fake.requests.length;
    const a = await rig.post('/v1/judges/jdg_00000000000000000000000000000000/execute/', { response: 'x' });
    assert.equal(a.status, 404);
    assert.equal(a.body.code, 'not_found');
    const b = await rig.post('/v1/evaluators/evl_00000000000000000000000000000000/execute/', { response: 'x' });
    assert.equal(b.status, 404);
    const c = await rig.post('/v1/evaluators/preset_clarity/execute/', { request: 'no response' });
    assert.equal(c.status, 400);
    assert.equal(c.body.code, 'validation_error');
    assert.equal(rig.fake.requests.length, before);
  });
});

describe('no judge model configured', () => {
  test('the server serves everything else; a run answers model_unavailable, never a made-up score', async () => {
    const server = await startTestServer({ ANTHROPIC_API_KEY: undefined, ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' });
    try {
      const { api_key: key } = await server.demoUser();
      const list = await server.request('GET', '/v1/evaluators/?limit=5', { key });
      assert.equal(list.status, 200);
      const res = await server.request('POST', '/v1/evaluators/preset_clarity/execute/', { key, body: { response: 'Hello.' } });
      assert.equal(res.status, 503);
      assert.equal(res.body.code, 'model_unavailable');
      assert.match(res.body.detail, /set ANTHROPIC_API_KEY/);
      assert.match(res.body.detail, /TRIBUNAL_MODEL/);
      assert.equal(res.body.score, undefined);
      assert.equal(res.body.evaluator_results, undefined);
      const judge = await server.request('POST', '/v1/judges/', { key, body: { name: 'j', intent: 'x', evaluator_ids: ['preset_clarity'] } });
      const run = await server.request('POST', `/v1/judges/${judge.body.id}/execute/`, { key, body: { response: 'Hello.' } });
      assert.equal(run.status, 503);
      assert.equal(run.body.code, 'model_unavailable');
      const logs = await server.request('GET', '/v1/execution-logs/', { key });
      assert.deepEqual(logs.body.results, [], 'nothing was scored, so nothing claims a score');
    } finally {
      await server.close();
    }
  });
});

async function callerOf(rig: ScoringRig) {
  const { Authenticator } = await import('../src/auth.ts');
  return new Authenticator(rig.server.store).authenticate(`Api-Key ${rig.key}`);
}
