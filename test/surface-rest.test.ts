// Room surface over REST (SPEC section 16): duplicate a judge or an evaluator, run a judge by name,
// claim a demo judge with its claim_token. Both stores (TRIBUNAL_TEST_STORE=postgres).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startServerWithFakeModel } from './helpers/execute.ts';
import type { FakeAnthropic } from './helpers/fake-anthropic.ts';
import type { TestServer } from './helpers/server.ts';

let srv: TestServer;
let fake: FakeAnthropic;
let keyA: string;
let keyB: string;

async function realOrgKey(name: string): Promise<string> {
  const { createOrganization } = await import('../src/domain/orgs.ts');
  return (await createOrganization(srv.store, { name, isDemo: false })).api_key;
}

before(async () => {
  ({ server: srv, fake } = await startServerWithFakeModel());
  keyA = await realOrgKey('acme');
  keyB = await realOrgKey('globex');
});
after(async () => {
  await srv.close();
  await fake.close();
});

const post = (key: string, path: string, body: unknown = {}) => srv.request('POST', path, { key, body });
const get = (key: string, path: string) => srv.request('GET', path, { key });

async function evaluator(key: string, name: string, extra: Record<string, unknown> = {}) {
  const res = await post(key, '/v1/evaluators/', { name, intent: 'Checks the answer is polite.', rubric: 'HIGH: polite. LOW: rude.', ...extra });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body;
}
async function judge(key: string, name: string, evaluatorIds: string[], extra: Record<string, unknown> = {}) {
  const res = await post(key, '/v1/judges/', { name, intent: 'Support replies', evaluator_ids: evaluatorIds, ...extra });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body;
}

describe('duplicate', () => {
  it('copies a judge as a private version 1 under a free name, in the project asked for', async () => {
    const e = await evaluator(keyA, 'Polite (dup)');
    const j = await judge(keyA, 'Replies (dup)', [e.id], { pin_versions: true });
    const first = await post(keyA, `/v1/judges/${j.id}/duplicate/`);
    assert.equal(first.status, 201, JSON.stringify(first.body));
    assert.notEqual(first.body.id, j.id);
    assert.equal(first.body.name, 'Replies (dup) (copy)');
    assert.equal(first.body.version, 1);
    assert.equal(first.body.visibility, 'private');
    assert.deepEqual(first.body.evaluators, j.evaluators);
    const second = await post(keyA, `/v1/judges/${j.id}/duplicate/`);
    assert.equal(second.body.name, 'Replies (dup) (copy 2)');
    const project = await post(keyA, '/v1/projects/', { name: 'Copies' });
    const named = await post(keyA, `/v1/judges/${encodeURIComponent('Replies (dup)')}/duplicate/`, { name: 'Replies v2', project_id: project.body.id });
    assert.equal(named.status, 201);
    assert.equal(named.body.name, 'Replies v2');
    assert.equal(named.body.project_id, project.body.id);
    const taken = await post(keyA, `/v1/judges/${j.id}/duplicate/`, { name: 'Replies v2' });
    assert.equal(taken.status, 409);
    assert.match(taken.body.detail, /Replies v2/);
  });

  it('copies an evaluator (a preset too) with its content; refuses what the caller cannot read and bad input', async () => {
    const e = await evaluator(keyA, 'Grounded (dup)', { demonstrations: [{ response: 'Hi there', score: 0.9 }] });
    const copy = await post(keyA, `/v1/evaluators/${e.id}/duplicate/`);
    assert.equal(copy.status, 201);
    assert.equal(copy.body.name, 'Grounded (dup) (copy)');
    assert.equal(copy.body.rubric, e.rubric);
    assert.deepEqual(copy.body.demonstrations, e.demonstrations);
    assert.equal(copy.body.is_preset, false);
    const presets = await get(keyB, '/v1/evaluators/?limit=1');
    const preset =
      presets.body.results.find((p: { is_preset: boolean }) => p.is_preset) ??
      (await get(keyB, '/v1/evaluators/?limit=200')).body.results.find((p: { is_preset: boolean }) => p.is_preset);
    const fromPreset = await post(keyB, `/v1/evaluators/${preset.id}/duplicate/`, { name: 'My own preset copy' });
    assert.equal(fromPreset.status, 201);
    assert.equal(fromPreset.body.rubric, preset.rubric);
    // Another organization's private evaluator and judge: not found, as for a read.
    assert.equal((await post(keyB, `/v1/evaluators/${e.id}/duplicate/`)).status, 404);
    const j = await judge(keyA, 'Private (dup)', [e.id]);
    assert.equal((await post(keyB, `/v1/judges/${j.id}/duplicate/`)).status, 404);
    const bad = await post(keyA, `/v1/judges/${j.id}/duplicate/`, { name: '', colour: 'red' });
    assert.equal(bad.status, 400);
    assert.match(JSON.stringify(bad.body.errors), /colour/);
    const otherProject = (await get(keyB, '/v1/projects/')).body.results[0].id;
    const wrongProject = await post(keyA, `/v1/judges/${j.id}/duplicate/`, { project_id: otherProject });
    assert.equal(wrongProject.status, 400);
    assert.equal(wrongProject.body.errors[0].field, 'project_id');
  });
});

describe('execute by name', () => {
  it('runs the judge named in the query with the execute body, and says clearly when no judge has that name', async () => {
    const e = await evaluator(keyA, 'Polite (by name)');
    const j = await judge(keyA, 'Replies by name', [e.id]);
    const res = await post(keyA, `/v1/judges/execute/by-name/?name=${encodeURIComponent('Replies by name')}`, { request: 'Where is my order?', response: 'It ships today.' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.evaluator_results.length, 1);
    const log = await get(keyA, `/v1/execution-logs/${res.body.execution_log_id}/`);
    assert.equal(log.body.judge_id, j.id);
    const unknown = await post(keyA, '/v1/judges/execute/by-name/?name=Nope', { response: 'x' });
    assert.equal(unknown.status, 404);
    assert.match(unknown.body.detail, /Nope/);
    const missing = await post(keyA, '/v1/judges/execute/by-name/', { response: 'x' });
    assert.equal(missing.status, 400);
    assert.match(JSON.stringify(missing.body.errors), /name/);
    // Another organization's private judge is not found by name.
    assert.equal((await post(keyB, `/v1/judges/execute/by-name/?name=${encodeURIComponent('Replies by name')}`, { response: 'x' })).status, 404);
  });
});

describe('claim', () => {
  it("moves a demo judge with its own evaluators into the caller's organization as private, once", async () => {
    const demo = await srv.demoUser();
    const own = await evaluator(demo.api_key, 'Demo polite');
    const created = await post(demo.api_key, '/v1/judges/', { name: 'Demo replies', intent: 'Support replies', evaluator_ids: [own.id, 'Polite (dup)'].slice(0, 1) });
    assert.equal(created.status, 201);
    assert.match(created.body.claim_token, /^clm_[A-Za-z0-9_-]{43}$/);
    // A real organization's judges answer no token.
    const real = await judge(keyA, 'Real judge', [(await evaluator(keyA, 'Real eval')).id]);
    assert.equal(real.claim_token, undefined);

    const claimed = await post(keyB, '/v1/judges/claim/', { claim_token: created.body.claim_token });
    assert.equal(claimed.status, 200, JSON.stringify(claimed.body));
    assert.equal(claimed.body.previous_judge_id, created.body.id);
    assert.equal(claimed.body.judge.name, 'Demo replies');
    assert.equal(claimed.body.judge.visibility, 'private');
    assert.equal(claimed.body.evaluators_moved.length, 1);
    assert.equal(claimed.body.evaluators_moved[0].previous_id, own.id);
    const full = await get(keyB, `/v1/judges/${claimed.body.judge.id}/`);
    assert.equal(full.status, 200);
    assert.equal(full.body.evaluators[0].visibility, 'private');
    assert.equal(full.body.evaluators[0].rubric, own.rubric);
    // Moved: gone from the demo organization, and private to everyone else.
    assert.equal((await get(demo.api_key, `/v1/judges/${created.body.id}/`)).status, 404);
    assert.equal((await get(demo.api_key, `/v1/evaluators/${own.id}/`)).status, 404);
    assert.equal((await get(keyA, `/v1/judges/${claimed.body.judge.id}/`)).status, 404);
    // Once.
    const again = await post(keyA, '/v1/judges/claim/', { claim_token: created.body.claim_token });
    assert.equal(again.status, 409);
    assert.match(again.body.detail, /used already/);
  });

  it('refuses a forged, malformed or expired token and a demo caller, with a clear 4xx, changing nothing', async () => {
    const forged = await post(keyA, '/v1/judges/claim/', { claim_token: `clm_${'A'.repeat(43)}` });
    assert.equal(forged.status, 404);
    assert.match(forged.body.detail, /unknown/);
    const malformed = await post(keyA, '/v1/judges/claim/', { claim_token: 'trb_0000' });
    assert.equal(malformed.status, 400);
    assert.equal(malformed.body.errors[0].field, 'claim_token');
    assert.equal((await post(keyA, '/v1/judges/claim/', {})).status, 400);

    const demo = await srv.demoUser();
    const e = await evaluator(demo.api_key, 'Demo eval 2');
    const made = await post(demo.api_key, '/v1/judges/', { name: 'Demo judge 2', intent: 'x', evaluator_ids: [e.id] });
    const byDemo = await post(demo.api_key, '/v1/judges/claim/', { claim_token: made.body.claim_token });
    assert.equal(byDemo.status, 403);
    // Expired: the token's expiry (the demo key's) has passed.
    const { createHash } = await import('node:crypto');
    const hash = createHash('sha256').update(made.body.claim_token).digest('hex');
    const stored = await srv.store.getClaimToken(hash);
    assert.ok(stored);
    const expiredToken = `clm_${'B'.repeat(43)}`;
    await srv.store.createClaimToken({ ...stored, token_hash: createHash('sha256').update(expiredToken).digest('hex'), expires_at: new Date(Date.now() - 1000).toISOString() });
    const expired = await post(keyA, '/v1/judges/claim/', { claim_token: expiredToken });
    assert.equal(expired.status, 410);
    assert.match(expired.body.detail, /expired/);
    // Nothing moved.
    assert.equal((await get(demo.api_key, `/v1/judges/${made.body.id}/`)).status, 200);
  });
});

describe('claim over MCP', () => {
  it('create_judge with a demo key answers a claim_token (valid against its output schema) that REST claims', async () => {
    const { connectMcp } = await import('./helpers/mcp-client.ts');
    const demo = await srv.demoUser();
    const mcp = await connectMcp(srv.url, demo.api_key);
    try {
      const made = await mcp.call('create_judge', { name: 'MCP demo judge', intent: 'Support replies', evaluator_ids: [(await evaluator(demo.api_key, 'MCP demo eval')).id] });
      assert.equal(made.isError, undefined, made.text);
      const token = (made.json as { claim_token?: string }).claim_token;
      assert.match(token ?? '', /^clm_/);
      const claimed = await post(keyA, '/v1/judges/claim/', { claim_token: token });
      assert.equal(claimed.status, 200, JSON.stringify(claimed.body));
      assert.equal(claimed.body.judge.name, 'MCP demo judge');
    } finally {
      await mcp.close();
    }
    // A real organization's MCP create_judge answers none.
    const real = await connectMcp(srv.url, keyA);
    try {
      const made = await real.call('create_judge', { name: 'MCP real judge', intent: 'x', evaluator_ids: ['Real eval'] });
      assert.equal(made.isError, undefined, made.text);
      assert.equal((made.json as { claim_token?: string }).claim_token, undefined);
    } finally {
      await real.close();
    }
  });
});
