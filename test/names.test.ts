// Exact names work wherever ids do: judge and evaluator paths (read, edit, versions, delete), the log
// filters judge_id and evaluator_id, and the MCP tools. A name nobody has is a 404 and an ambiguous
// one a 400 naming the candidates; never an empty success. TRIBUNAL_TEST_STORE=postgres runs it on
// PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { evaluatorBody, startScoringRig, type ScoringRig } from './helpers/execute.ts';
import { connectMcp, type McpTestClient } from './helpers/mcp-client.ts';

let rig: ScoringRig;
let evaluator: { id: string; name: string };
let judge: { id: string; name: string };
const path = (name: string) => encodeURIComponent(name);

before(async () => {
  rig = await startScoringRig();
  evaluator = await rig.createEvaluator(evaluatorBody({ name: 'Names: politeness' }));
  judge = await rig.createJudge({ name: 'Support replies', intent: 'Checks support replies.', evaluator_ids: [evaluator.id] });
});
after(() => rig?.close());

describe('names in REST paths', () => {
  it('reads, edits and lists versions of a judge by its exact name', async () => {
    const got = await rig.get(`/v1/judges/${path('Support replies')}/`);
    assert.equal(got.status, 200, JSON.stringify(got.body));
    assert.equal(got.body.id, judge.id);
    const patched = await rig.server.request('PATCH', `/v1/judges/${path('Support replies')}/`, { key: rig.key, body: { intent: 'Checks support replies for tone.' } });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.equal(patched.body.id, judge.id);
    assert.equal(patched.body.version, 2);
    const versions = await rig.get(`/v1/judges/${path('Support replies')}/versions/`);
    assert.deepEqual(
      versions.body.results.map((v: { version: number }) => v.version),
      [2, 1],
    );
  });

  it('reads a preset and an own evaluator by name, and their versions', async () => {
    const preset = await rig.get('/v1/evaluators/Faithfulness/');
    assert.equal(preset.status, 200, JSON.stringify(preset.body));
    assert.equal(preset.body.name, 'Faithfulness');
    assert.equal(preset.body.is_preset, true);
    const own = await rig.get(`/v1/evaluators/${path(evaluator.name)}/versions/`);
    assert.equal(own.status, 200);
    assert.equal(own.body.results[0].id, evaluator.id);
  });

  it('answers 404 for a name nobody has, saying names are exact', async () => {
    const res = await rig.get(`/v1/judges/${path('support replies')}/`);
    assert.equal(res.status, 404);
    assert.match(res.body.detail, /No judge named "support replies".*exact/);
    assert.equal((await rig.get('/v1/evaluators/faithfulness/')).status, 404);
  });

  it('refuses an ambiguous public name with the candidates listed', async () => {
    // Demo organizations' judges are public: two strangers with the same judge name.
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const key = (await rig.server.demoUser()).api_key;
      const made = await rig.server.request('POST', '/v1/judges/', { key, body: { name: 'Shared name', intent: 'Checks replies.', evaluator_ids: ['Faithfulness'] } });
      assert.equal(made.status, 201, JSON.stringify(made.body));
      ids.push(made.body.id);
    }
    const res = await rig.get(`/v1/judges/${path('Shared name')}/`);
    assert.equal(res.status, 400, JSON.stringify(res.body));
    for (const id of ids) assert.ok(res.body.detail.includes(id), `${id} is named in ${res.body.detail}`);
  });
});

describe('names in the log filters', () => {
  it('filters by judge and evaluator name, and refuses an unknown name instead of an empty page', async () => {
    const run = await rig.post(`/v1/judges/${judge.id}/execute/`, { response: 'Happy to help: restart the router.' });
    assert.equal(run.status, 200, JSON.stringify(run.body));
    const byJudge = await rig.get(`/v1/execution-logs/?judge_id=${path('Support replies')}`);
    assert.equal(byJudge.status, 200, JSON.stringify(byJudge.body));
    assert.deepEqual(
      byJudge.body.results.map((l: { id: string }) => l.id),
      [run.body.execution_log_id],
    );
    const byEvaluator = await rig.get(`/v1/execution-logs/?evaluator_id=${path(evaluator.name)}`);
    assert.deepEqual(
      byEvaluator.body.results.map((l: { id: string }) => l.id),
      [run.body.execution_log_id],
    );
    const unknown = await rig.get(`/v1/execution-logs/?judge_id=${path('No such judge')}`);
    assert.equal(unknown.status, 404, JSON.stringify(unknown.body));
    assert.match(unknown.body.detail, /No such judge/);
  });
});

describe('names over MCP', () => {
  let mcp: McpTestClient;
  before(async () => {
    mcp = await connectMcp(rig.server.url, rig.key);
  });
  after(() => mcp?.close());

  it('get_judge, update_judge and get_evaluator take a name in the id field too', async () => {
    const got = await mcp.call('get_judge', { judge_id: 'Support replies' });
    assert.equal(got.isError, undefined, got.text);
    assert.equal(got.json.id, judge.id);
    const updated = await mcp.call('update_judge', { judge_id: 'Support replies', stage: 'reply' });
    assert.equal(updated.isError, undefined, updated.text);
    assert.equal(updated.json.stage, 'reply');
    const preset = await mcp.call('get_evaluator', { evaluator_id: 'Faithfulness' });
    assert.equal(preset.json.name, 'Faithfulness');
    const logs = await mcp.call('list_execution_logs', { judge_id: 'Support replies' });
    assert.equal(logs.json.results.length, 1);
  });
});

describe('delete by name', () => {
  it('deletes the named judge (and not some other resource)', async () => {
    const extra = await rig.createJudge({ name: 'Doomed judge', intent: 'Checks nothing much.', evaluator_ids: [evaluator.id] });
    const res = await rig.server.request('DELETE', `/v1/judges/${path('Doomed judge')}/`, { key: rig.key });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body, { deleted: true, id: extra.id });
    assert.equal((await rig.get(`/v1/judges/${extra.id}/`)).status, 404);
    assert.equal((await rig.get(`/v1/judges/${judge.id}/`)).status, 200);
  });
});
