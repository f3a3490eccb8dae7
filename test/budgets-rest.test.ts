// Budgets (room h-cost, SPEC section 18) over real HTTP and MCP against the fake judge model: an org
// cap refuses the run that would start at or over it (429 budget_exceeded, Retry-After at the next
// UTC midnight; MCP: a tool error with the same code), exactly at the edge; an evaluator cap; a batch
// run's own cap stops it with its rows accounted for; a spent org refuses a batch at its start;
// dry_run estimates without a model call; the admin command sets an org's cap.
// TRIBUNAL_TEST_STORE=postgres runs it on PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { nextReset } from '../src/budgets/budgets.ts';
import { watchBudgets } from '../src/observability/budget-metrics.ts';
import { runKeyCommand } from '../src/key-commands.ts';
import { toolAnswer } from './helpers/fake-anthropic.ts';
import { evaluatorBody, startScoringRig, type ScoringRig } from './helpers/execute.ts';
import { connectMcp } from './helpers/mcp-client.ts';

// claude-sonnet-4-5 at $3 / $15 per million: 1000 input + 100 output tokens = $0.0045 a call.
const CALL_USD = 0.0045;
let rig: ScoringRig;
let orgId: string;

const setOrgCap = (cap: number | null) => rig.server.store.setBudgetCap({ org_id: orgId, scope: 'org', scope_id: orgId, period: 'daily', cap_usd: cap });
const spentToday = async () => (await rig.get('/v1/budgets/')).body.org.spent_today_usd as number;
const run = (evaluatorId: string, n = 0) => rig.post(`/v1/evaluators/${evaluatorId}/execute/`, { request: `q${n}`, response: `a${n}` });

before(async () => {
  rig = await startScoringRig({ TRIBUNAL_BATCH_CONCURRENCY: '1', TRIBUNAL_BATCH_CHUNK: '2' });
  const keys = await rig.get('/v1/api-keys/');
  orgId = (await rig.server.store.getApiKey(keys.body.results[0].id))!.org_id;
  rig.fake.respondWith(() => toolAnswer({ justification: 'Fine.', score: 0.8 }, { usage: { input_tokens: 1000, output_tokens: 100 } }));
});
after(() => rig.close());
beforeEach(async () => {
  // Every test starts with today's org counter at 0 (a fresh org id cannot be had: move the cap up by what was spent).
  await setOrgCap(null);
});

describe('budgets', () => {
  it('refuses the run that would start at the cap, with Retry-After at the reset; the spend is shown', async () => {
    const ev = await rig.createEvaluator(evaluatorBody());
    const before = await spentToday();
    // Room for exactly three calls from here.
    await setOrgCap(before + 3 * CALL_USD);
    rig.fake.resetStats();
    for (let i = 0; i < 3; i++) assert.equal((await run(ev.id, i)).status, 200);
    const refused = await run(ev.id, 3);
    assert.equal(refused.status, 429, JSON.stringify(refused.body));
    assert.equal(refused.body.code, 'budget_exceeded');
    assert.match(refused.headers.get('content-type') ?? '', /problem\+json/);
    assert.equal(refused.body.budget.scope, 'org');
    assert.equal(refused.body.budget.resets_at, nextReset().toISOString());
    const retryAfter = Number(refused.headers.get('retry-after'));
    const untilReset = (nextReset().getTime() - Date.now()) / 1000;
    assert.ok(retryAfter >= 1 && Math.abs(retryAfter - untilReset) < 120, `Retry-After ${retryAfter}, reset in ${untilReset}`);
    // The refused run called no model; the spend is exactly at the cap.
    assert.equal(rig.fake.requests.length, 3);
    const status = (await rig.get('/v1/budgets/')).body;
    assert.equal(Math.round((status.org.spent_today_usd - before) * 1e9), Math.round(3 * CALL_USD * 1e9));
    assert.equal(status.org.cap_source, 'organization');
    // Raised by just under one more call: the next run is admitted again (spent is below the cap).
    await setOrgCap(before + 3.5 * CALL_USD);
    assert.equal((await run(ev.id, 4)).status, 200);
    assert.equal((await run(ev.id, 5)).status, 429);
  });

  it('MCP: a run over the cap is a tool error with the code budget_exceeded', async () => {
    const ev = await rig.createEvaluator(evaluatorBody());
    await setOrgCap(await spentToday());
    const mcp = await connectMcp(rig.server.url, rig.key);
    try {
      const result = await mcp.call('run_evaluator', { evaluator_id: ev.id, request: 'q', response: 'a' });
      assert.equal(result.isError, true);
      assert.match(result.text, /budget_exceeded/);
    } finally {
      await mcp.close();
    }
  });

  it("an evaluator's daily cap refuses only that evaluator", async () => {
    const capped = await rig.createEvaluator(evaluatorBody());
    const free = await rig.createEvaluator(evaluatorBody());
    const set = await rig.post(`/v1/budgets/evaluators/${capped.id}/`, { daily_usd: CALL_USD });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    assert.deepEqual(set.body.evaluators, [{ evaluator_id: capped.id, daily_cap_usd: CALL_USD, spent_today_usd: 0 }]);
    assert.equal((await run(capped.id)).status, 200);
    const refused = await run(capped.id);
    assert.equal(refused.status, 429);
    assert.equal(refused.body.budget.scope, 'evaluator');
    assert.equal((await run(free.id)).status, 200);
    // Removed: runs again.
    assert.equal((await rig.post(`/v1/budgets/evaluators/${capped.id}/`, { daily_usd: null })).status, 200);
    assert.equal((await run(capped.id)).status, 200);
    assert.equal((await rig.post(`/v1/budgets/evaluators/${capped.id}/`, { daily_usd: -1 })).status, 400);
  });

  it('a batch run stops at its own cap with its rows accounted for', async () => {
    const ev = await rig.createEvaluator(evaluatorBody());
    const judge = await rig.createJudge({ name: `Budget judge ${Math.random()}`, intent: 'grade', evaluator_ids: [ev.id] });
    rig.fake.resetStats();
    const items = Array.from({ length: 6 }, (_, i) => ({ request: `q${i}`, response: `a${i}` }));
    const started = await rig.post(`/v1/judges/${judge.id}/batch-execute/`, { items, budget_usd: 2 * CALL_USD });
    assert.equal(started.status, 202, JSON.stringify(started.body));
    let batch: any;
    for (const deadline = Date.now() + 15_000; ; ) {
      batch = (await rig.get(`/v1/judges/batch-executions/${started.body.batch_execution_id}/`)).body;
      if (['completed', 'failed', 'cancelled'].includes(batch.status)) break;
      assert.ok(Date.now() < deadline, JSON.stringify(batch));
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(batch.status, 'failed');
    assert.match(batch.error, /^budget_exceeded: /);
    // One row at a time: two rows fit under $0.009, the third is refused before its model call.
    assert.equal(batch.done, 2);
    assert.equal(batch.failed, 0);
    assert.equal(rig.fake.requests.length, 2);
    assert.equal(Math.round(batch.cost_usd * 1e9), Math.round(2 * CALL_USD * 1e9));
    const rows = (await rig.get(`/v1/judges/batch-executions/${batch.id}/results/`)).body.results;
    assert.equal(rows.length, 2);
  });

  it('a batch run is refused at its start when the org budget is spent', async () => {
    const ev = await rig.createEvaluator(evaluatorBody());
    const judge = await rig.createJudge({ name: `Spent judge ${Math.random()}`, intent: 'grade', evaluator_ids: [ev.id] });
    await setOrgCap(await spentToday());
    const res = await rig.post(`/v1/judges/${judge.id}/batch-execute/`, { items: [{ request: 'q', response: 'a' }] });
    assert.equal(res.status, 429);
    assert.equal(res.body.code, 'budget_exceeded');
    assert.ok(Number(res.headers.get('retry-after')) > 0);
  });

  it('dry_run answers calls, tokens and three costs without a model call or a stored run', async () => {
    const a = await rig.createEvaluator(evaluatorBody({ demonstrations: [{ request: 'q', response: 'r '.repeat(500), score: 1, justification: 'good' }] }));
    const b = await rig.createEvaluator(evaluatorBody());
    const judge = await rig.createJudge({ name: `Estimate judge ${Math.random()}`, intent: 'grade', evaluator_ids: [a.id, b.id] });
    const listed = (await rig.get('/v1/judges/batch-executions/')).body.results.length;
    rig.fake.resetStats();
    const items = Array.from({ length: 10 }, (_, i) => ({ request: `question ${i}`, response: 'x'.repeat(400 * (i + 1)) }));
    const res = await rig.post(`/v1/judges/${judge.id}/batch-execute/`, { items, dry_run: true });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.dry_run, true);
    assert.equal(res.body.calls, 20);
    // Counted from the real prompts: the responses alone are 22,000 characters, seen by two evaluators.
    assert.ok(res.body.input_tokens > (2 * 22_000) / 4, String(res.body.input_tokens));
    const { live, cached, provider_batch } = res.body.cost_usd;
    assert.ok(live > cached && cached > provider_batch && provider_batch > 0, JSON.stringify(res.body.cost_usd));
    assert.equal(provider_batch, Math.round(cached * 0.5 * 1e6) / 1e6);
    assert.equal(rig.fake.requests.length, 0);
    assert.equal((await rig.get('/v1/judges/batch-executions/')).body.results.length, listed);
    // A bigger item costs more: the estimate reads the items.
    const one = await rig.post(`/v1/judges/${judge.id}/batch-execute/`, { items: items.slice(0, 1), dry_run: true });
    const last = await rig.post(`/v1/judges/${judge.id}/batch-execute/`, { items: items.slice(9), dry_run: true });
    assert.ok(last.body.input_tokens > one.body.input_tokens + (2 * 3000) / 4 - 10);
  });

  it('dry_run on a calibration run estimates the dataset', async () => {
    const ev = await rig.createEvaluator(evaluatorBody());
    const ds = (await rig.post('/v1/datasets/', { name: `cal ${Math.random()}` })).body;
    await rig.post(`/v1/datasets/${ds.id}/items/`, { items: Array.from({ length: 7 }, (_, i) => ({ request: `q${i}`, response: `a${i}`, expected_scores: { [ev.id]: 1 } })) });
    rig.fake.resetStats();
    const res = await rig.post('/v1/calibration-runs/', { evaluator_id: ev.id, dataset_id: ds.id, dry_run: true });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.calls, 7);
    assert.equal(rig.fake.requests.length, 0);
  });

  it("the admin command sets a named organization's daily cap", async () => {
    const created = (await runKeyCommand(rig.server.store, rig.config, { op: 'create', org: `Budget org ${Math.random()}` })) as {
      organization_name: string;
      organization_id: string;
      api_key: string;
    };
    const status = (await runKeyCommand(rig.server.store, rig.config, { op: 'budget', org: created.organization_name, daily_usd: 0 })) as any;
    assert.equal(status.org.daily_cap_usd, 0);
    assert.equal(status.org.cap_source, 'organization');
    const ev = (await rig.server.request('POST', '/v1/evaluators/', { key: created.api_key, body: evaluatorBody() })).body;
    const res = await rig.server.request('POST', `/v1/evaluators/${ev.id}/execute/`, { key: created.api_key, body: { request: 'q', response: 'a' } });
    assert.equal(res.status, 429);
    await assert.rejects(runKeyCommand(rig.server.store, rig.config, { op: 'budget', org: created.organization_name, daily_usd: -2 }), /USD/);
    const cleared = (await runKeyCommand(rig.server.store, rig.config, { op: 'budget', org: created.organization_name, daily_usd: null })) as any;
    assert.equal(cleared.org.cap_source, 'none');
  });

  it("/metrics carries each organization's spend today", async () => {
    const ev = await rig.createEvaluator(evaluatorBody());
    assert.equal((await run(ev.id)).status, 200);
    const spent = await spentToday();
    assert.ok(spent > 0);
    const registry = new Registry();
    watchBudgets(registry, rig.server.store);
    const text = await registry.metrics();
    const line = text.split('\n').find((l) => l.startsWith(`tribunal_org_spend_today_usd{org_id="${orgId}"}`));
    assert.ok(line, text);
    assert.equal(Number(line.split(' ').pop()), spent);
  });
});
