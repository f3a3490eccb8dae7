// Unknown fields are refused with a 400 that names each one and suggests the closest known name, on
// REST (bodies, nested objects, query strings, REST-only operations) and MCP alike, and nothing is
// scored or stored when they are.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { evaluatorBody, startScoringRig, type ScoringRig } from './helpers/execute.ts';
import { connectMcp, type McpTestClient } from './helpers/mcp-client.ts';
import { closestName } from '../src/unknown-fields.ts';

let rig: ScoringRig;
let mcp: McpTestClient;
let judgeId: string;

before(async () => {
  rig = await startScoringRig();
  mcp = await connectMcp(rig.server.url, rig.key);
  const evaluator = await rig.createEvaluator(evaluatorBody({ requires_contexts: false }));
  judgeId = (await rig.createJudge({ name: 'Unknown fields judge', intent: 'Checks support replies.', evaluator_ids: [evaluator.id] })).id;
});
after(async () => {
  await mcp?.close();
  await rig?.close();
});

const fieldErrors = (body: any) => Object.fromEntries((body.errors ?? []).map((e: { field: string; message: string }) => [e.field, e.message]));

describe('unknown fields on REST', () => {
  it('refuses a misspelt execution field, suggests the right name, and runs nothing', async () => {
    const modelCalls = rig.fake.requests.length;
    const res = await rig.post(`/v1/judges/${judgeId}/execute/`, { response: 'Reset it from Settings.', contex: ['Settings has a reset button.'] });
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.equal(res.body.code, 'validation_error');
    assert.equal(fieldErrors(res.body).contex, 'unknown field contex; did you mean contexts?');
    assert.match(res.body.detail, /unknown field contex; did you mean contexts\?/);
    assert.equal(rig.fake.requests.length, modelCalls, 'no model call for a refused request');
    const logs = await rig.get(`/v1/execution-logs/?judge_id=${judgeId}`);
    assert.deepEqual(logs.body.results, []);
  });

  it('names every unknown field, nested ones with their path, and lists the known names when none is close', async () => {
    const body = evaluatorBody({ demonstrations: [{ response: 'ok', score: 1, justifcation: 'fine' }], zzz: 1 });
    const res = await rig.post('/v1/evaluators/', body);
    assert.equal(res.status, 400, JSON.stringify(res.body));
    const errors = fieldErrors(res.body);
    assert.equal(errors['demonstrations.0.justifcation'], 'unknown field justifcation; did you mean justification?');
    assert.match(errors.zzz, /^unknown field zzz; known fields: name, intent, rubric/);
    assert.equal((await rig.get(`/v1/evaluators/${encodeURIComponent(String(body.name))}/`)).status, 404, 'nothing was created');
  });

  it('refuses unknown query parameters of lists', async () => {
    const res = await rig.get('/v1/execution-logs/?judge=abc&min_score=0.5');
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.match(fieldErrors(res.body).judge, /unknown field judge; did you mean judge_id\?/);
    const judges = await rig.get('/v1/judges/?includePublic=false');
    assert.equal(judges.status, 400);
    assert.equal(fieldErrors(judges.body).includePublic, 'unknown field includePublic; did you mean include_public?');
    assert.equal((await rig.get('/v1/judges/?include_public=false&limit=5')).status, 200);
  });

  it('refuses unknown fields of REST-only operations and PATCH bodies', async () => {
    const project = await rig.post('/v1/projects/', { name: 'Unknown fields project', descripton: 'typo' });
    assert.equal(project.status, 400, JSON.stringify(project.body));
    assert.equal(fieldErrors(project.body).descripton, 'unknown field descripton; did you mean description?');
    const patch = await rig.server.request('PATCH', `/v1/judges/${judgeId}/`, { key: rig.key, body: { nmae: 'Renamed' } });
    assert.equal(patch.status, 400, JSON.stringify(patch.body));
    assert.equal(fieldErrors(patch.body).nmae, 'unknown field nmae; did you mean name?');
    const judge = await rig.get(`/v1/judges/${judgeId}/`);
    assert.equal(judge.body.name, 'Unknown fields judge', 'nothing changed');
    assert.equal(judge.body.version, 1);
  });
});

describe('unknown fields on MCP', () => {
  it('refuses them with the same suggestion, and publishes additionalProperties: false', async () => {
    const result = await mcp.call('run_judge', { judge_id: judgeId, response: 'Reset it from Settings.', contex: ['Settings has a reset button.'] });
    assert.equal(result.isError, true);
    assert.match(result.text, /unknown field contex; did you mean contexts\?/);
    const nested = await mcp.call('create_evaluator', evaluatorBody({ demonstrations: [{ response: 'ok', scor: 1 }] }));
    assert.equal(nested.isError, true);
    assert.match(nested.text, /unknown field scor; did you mean score\?/);
    const { tools } = await mcp.client.listTools();
    const create = tools.find((t) => t.name === 'create_evaluator')!;
    assert.equal(create.inputSchema.additionalProperties, false);
    const demo = (create.inputSchema.properties as any).demonstrations.items;
    assert.equal(demo.additionalProperties, false);
  });
});

describe('closestName', () => {
  it('finds typos, cut-off names, case and separator slips, and nothing for unrelated names', () => {
    const known = ['response', 'request', 'contexts', 'expected_output', 'judge_id', 'tags'];
    assert.equal(closestName('contex', known), 'contexts');
    assert.equal(closestName('judgeId', known), 'judge_id');
    assert.equal(closestName('expected', known), 'expected_output');
    assert.equal(closestName('respones', known), 'response');
    assert.equal(closestName('tag', known), 'tags');
    assert.equal(closestName('reqeust', known), 'request');
    assert.equal(closestName('model', known), undefined);
  });
});
