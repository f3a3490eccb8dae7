// Issue 12 item 4: a conflict reads the same whichever store refused it: the store gives the reason
// as data, the domain writes the words. TRIBUNAL_TEST_STORE=postgres runs it on PostgreSQL; the
// exact texts below are asserted on both.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connectMcp } from './helpers/mcp-client.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

let srv: TestServer;
let key: string;

before(async () => {
  srv = await startTestServer();
  const { createOrganization } = await import('../src/domain/orgs.ts');
  key = (await createOrganization(srv.store, { name: 'conflicts', isDemo: false })).api_key;
});
after(() => srv.close());

describe('409 texts, the same on both stores', () => {
  it('an evaluator name taken', async () => {
    const body = { name: 'Twice', intent: 'i', rubric: 'r' };
    const first = await srv.request('POST', '/v1/evaluators/', { key, body });
    assert.equal(first.status, 201);
    const again = await srv.request('POST', '/v1/evaluators/', { key, body });
    assert.equal(again.status, 409);
    assert.equal(again.body.detail, 'An evaluator named "Twice" already exists in this organization; choose another name or edit the existing one.');
    const other = await srv.request('POST', '/v1/evaluators/', { key, body: { ...body, name: 'Other' } });
    const renamed = await srv.request('PATCH', `/v1/evaluators/${other.body.id}/`, { key, body: { name: 'Twice' } });
    assert.equal(renamed.status, 409);
    assert.equal(renamed.body.detail, again.body.detail);
  });

  it('a judge name taken, over REST and MCP', async () => {
    const e = await srv.request('POST', '/v1/evaluators/', { key, body: { name: 'For judges', intent: 'i', rubric: 'r' } });
    const body = { name: 'Judge twice', intent: 'i', evaluator_ids: [e.body.id] };
    assert.equal((await srv.request('POST', '/v1/judges/', { key, body })).status, 201);
    const again = await srv.request('POST', '/v1/judges/', { key, body });
    assert.equal(again.status, 409);
    const text = 'A judge named "Judge twice" already exists in this organization; choose another name or edit the existing judge.';
    assert.equal(again.body.detail, text);
    const mcp = await connectMcp(srv.url, key);
    try {
      const res = await mcp.call('create_judge', body);
      assert.equal(res.isError, true);
      assert.ok(res.text.includes(text), res.text);
    } finally {
      await mcp.close();
    }
  });

  it('a project name taken', async () => {
    assert.equal((await srv.request('POST', '/v1/projects/', { key, body: { name: 'Proj' } })).status, 201);
    const again = await srv.request('POST', '/v1/projects/', { key, body: { name: 'Proj' } });
    assert.equal(again.status, 409);
    assert.equal(again.body.detail, 'A project named "Proj" already exists in this organization; choose another name.');
  });
});
