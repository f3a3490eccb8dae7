// Execution logs written by real runs, read back through every filter of GET /v1/execution-logs/.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { invokeTool } from '../src/tool.ts';
import { tools } from '../tools/index.ts';
import { toolAnswer } from './helpers/fake-anthropic.ts';
import { startScoringRig, type ScoringRig } from './helpers/execute.ts';

// Score and input tokens per evaluator; at $3 per million input tokens the costs are
// Clarity 0.003, Politeness 0.006, Conciseness 0.009, Coherence 0.012.
const SCRIPT: Record<string, { score: number; input_tokens: number }> = {
  Clarity: { score: 0.2, input_tokens: 1000 },
  Politeness: { score: 0.4, input_tokens: 2000 },
  Conciseness: { score: 0.9, input_tokens: 3000 },
  Coherence: { score: 0.6, input_tokens: 4000 },
};

let rig: ScoringRig;
let p2: string;
let j1: string;
let j2: string;
/** Newest first: L4, L3, L2, L1. */
const L: Record<string, any> = {};

before(async () => {
  rig = await startScoringRig();
  rig.fake.respondWith((req) => {
    const name = Object.keys(SCRIPT).find((n) => req.system.includes(`Name: ${n}\n`))!;
    return toolAnswer({ justification: `${name} verdict.`, score: SCRIPT[name].score }, { usage: { input_tokens: SCRIPT[name].input_tokens, output_tokens: 0 } });
  });
  p2 = (await rig.post('/v1/projects/', { name: 'Second project' })).body.id;
  j1 = (await rig.createJudge({ name: 'J1', intent: 'x', evaluator_ids: ['Clarity', 'Politeness'] })).id;
  j2 = (await rig.createJudge({ name: 'J2', intent: 'x', evaluator_ids: ['Conciseness', 'Coherence'], project_id: p2 })).id;
  const run = async (path: string, body: Record<string, unknown>) => {
    const res = await rig.post(path, { response: 'The answer.', ...body });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return (await rig.get(`/v1/execution-logs/${res.body.execution_log_id}/`)).body;
  };
  L[1] = await run(`/v1/judges/${j1}/execute/`, { tags: ['a', 'b'] });
  L[2] = await run(`/v1/judges/${j2}/execute/`, { tags: ['b'] });
  L[3] = await run('/v1/evaluators/preset_clarity/execute/', { tags: ['a'], project_id: p2 });
  L[4] = await run('/v1/evaluators/preset_coherence/execute/', {});
});
after(() => rig.close());

async function ids(query: string): Promise<string[]> {
  const res = await rig.get(`/v1/execution-logs/${query}`);
  assert.equal(res.status, 200, `${query}: ${JSON.stringify(res.body)}`);
  return res.body.results.map((l: any) => l.id);
}
const of = (...n: number[]) => n.map((i) => L[i].id);

test('the logs hold what the runs produced', () => {
  assert.deepEqual([L[1].score, L[2].score, L[3].score, L[4].score], [0.3, 0.75, 0.2, 0.6]);
  assert.deepEqual([L[1].cost_usd, L[2].cost_usd, L[3].cost_usd, L[4].cost_usd], [0.009, 0.021, 0.003, 0.012]);
  assert.deepEqual([L[1].project_id, L[2].project_id, L[3].project_id, L[4].project_id], [rig.projectId, p2, p2, rig.projectId]);
});

test('no filter: every run, newest first', async () => {
  assert.deepEqual(await ids(''), of(4, 3, 2, 1));
});

test('judge_id and evaluator_id (alone or within a judge)', async () => {
  assert.deepEqual(await ids(`?judge_id=${j1}`), of(1));
  assert.deepEqual(await ids(`?judge_id=${j2}`), of(2));
  assert.deepEqual(await ids('?evaluator_id=preset_clarity'), of(3, 1));
  assert.deepEqual(await ids('?evaluator_id=preset_coherence'), of(4, 2));
});

test('project_id', async () => {
  assert.deepEqual(await ids(`?project_id=${p2}`), of(3, 2));
  assert.deepEqual(await ids(`?project_id=${rig.projectId}`), of(4, 1));
});

test('score range', async () => {
  assert.deepEqual(await ids('?min_score=0.5'), of(4, 2));
  assert.deepEqual(await ids('?max_score=0.3'), of(3, 1));
  assert.deepEqual(await ids('?min_score=0.25&max_score=0.7'), of(4, 1));
  const bad = await rig.get('/v1/execution-logs/?min_score=0.8&max_score=0.2');
  assert.equal(bad.status, 400);
  assert.equal(bad.body.code, 'validation_error');
});

test('cost range', async () => {
  assert.deepEqual(await ids('?min_cost=0.01'), of(4, 2));
  assert.deepEqual(await ids('?max_cost=0.009'), of(3, 1));
  assert.deepEqual(await ids('?min_cost=0.005&max_cost=0.015'), of(4, 1));
});

test('tags: every listed tag must be on the run', async () => {
  assert.deepEqual(await ids('?tags=a'), of(3, 1));
  assert.deepEqual(await ids('?tags=b'), of(2, 1));
  assert.deepEqual(await ids('?tags=a,b'), of(1));
  assert.deepEqual(await ids('?tags=a&tags=b'), of(1));
  assert.deepEqual(await ids('?tags=zzz'), []);
});

test('date range', async () => {
  const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
  assert.deepEqual(await ids(`?date_from=${day(0)}`), of(4, 3, 2, 1));
  assert.deepEqual(await ids(`?date_to=${day(0)}`), of(4, 3, 2, 1));
  assert.deepEqual(await ids(`?date_from=${day(1)}`), []);
  assert.deepEqual(await ids(`?date_to=${day(-1)}`), []);
  const from = await ids(`?date_from=${encodeURIComponent(L[3].created_at)}`);
  assert.ok(from.includes(L[3].id) && from.includes(L[4].id) && !from.includes(L[1].id), JSON.stringify(from));
  const to = await ids(`?date_to=${encodeURIComponent(L[2].created_at)}`);
  assert.ok(to.includes(L[1].id) && to.includes(L[2].id) && !to.includes(L[4].id), JSON.stringify(to));
  const bad = await rig.get('/v1/execution-logs/?date_from=yesterday');
  assert.equal(bad.status, 400);
});

test('cursor pages walk every run once, also under a filter', async () => {
  const walk = async (filter: string) => {
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let guard = 0; guard < 10; guard++) {
      const res = await rig.get(`/v1/execution-logs/?limit=1${filter}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      assert.equal(res.status, 200);
      assert.ok(res.body.results.length <= 1);
      seen.push(...res.body.results.map((l: any) => l.id));
      cursor = res.body.next_cursor;
      if (!cursor) break;
    }
    return seen;
  };
  assert.deepEqual(await walk(''), of(4, 3, 2, 1));
  assert.deepEqual(await walk('&tags=b'), of(2, 1));
  const two = await rig.get('/v1/execution-logs/?limit=3');
  assert.equal(two.body.results.length, 3);
  assert.equal(typeof two.body.next_cursor, 'string');
});

test('list_execution_logs (the tool MCP calls) filters the same; another organization sees none of it', async () => {
  const { Authenticator } = await import('../src/auth.ts');
  const caller = await new Authenticator(rig.server.store).authenticate(`Api-Key ${rig.key}`);
  const page = await invokeTool(tools.listExecutionLogs, { tags: ['a'], min_score: 0.1, evaluator_id: 'preset_clarity' }, { ...rig.server.services, caller });
  assert.deepEqual(
    page.results.map((l: any) => l.id),
    of(3, 1),
  );

  const other = await rig.server.demoUser();
  const list = await rig.server.request('GET', '/v1/execution-logs/', { key: other.api_key });
  assert.deepEqual(list.body.results, []);
  const one = await rig.server.request('GET', `/v1/execution-logs/${L[1].id}/`, { key: other.api_key });
  assert.equal(one.status, 404);
});
