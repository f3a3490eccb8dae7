// Issue 11 item 1: visibility is decided for the caller on every path that returns an evaluator,
// current or past (REST ?version=, REST versions lists, MCP get_judge / get_evaluator {version}).
// Each version keeps the visibility it was saved with (README, "Visibility and versions").
// TRIBUNAL_TEST_STORE=postgres runs it on PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connectMcp, type McpTestClient } from './helpers/mcp-client.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

let srv: TestServer;
let keyA: string; // owner of the private content
let keyB: string; // another organization
let mcpB: McpTestClient;

const SECRET_INTENT = 'SECRET-INTENT-of-org-A';
const SECRET_RUBRIC = 'SECRET-RUBRIC-of-org-A: 1.0 when the answer cites invoice 4711.';

async function realOrgKey(name: string): Promise<string> {
  const { createOrganization } = await import('../src/domain/orgs.ts');
  return (await createOrganization(srv.store, { name, isDemo: false })).api_key;
}

/** The private evaluator E, the public evaluator P and judge J: private with E, then public with P only. */
let E: { id: string; name: string };
let P: { id: string };
let J: { id: string };

before(async () => {
  srv = await startTestServer();
  keyA = await realOrgKey('owner-org');
  keyB = await realOrgKey('other-org');
  const e = await srv.request('POST', '/v1/evaluators/', { key: keyA, body: { name: 'Invoice secret', intent: SECRET_INTENT, rubric: SECRET_RUBRIC } });
  assert.equal(e.status, 201, JSON.stringify(e.body));
  E = e.body;
  const p = await srv.request('POST', '/v1/evaluators/', {
    key: keyA,
    body: { name: 'Polite', intent: 'Checks politeness.', rubric: 'HIGH polite, LOW rude.', visibility: 'public' },
  });
  assert.equal(p.status, 201, JSON.stringify(p.body));
  P = p.body;
  const j = await srv.request('POST', '/v1/judges/', { key: keyA, body: { name: 'Support judge', intent: 'Scores support answers.', evaluator_ids: [E.id] } });
  assert.equal(j.status, 201, JSON.stringify(j.body));
  J = j.body;
  const made = await srv.request('PATCH', `/v1/judges/${J.id}/`, { key: keyA, body: { visibility: 'public', evaluator_ids: [P.id] } });
  assert.equal(made.status, 200, JSON.stringify(made.body));
  assert.equal(made.body.version, 2);
  mcpB = await connectMcp(srv.url, keyB);
});
after(async () => {
  await mcpB?.close();
  await srv.close();
});

const leaks = (body: unknown) => {
  const text = JSON.stringify(body);
  return text.includes(SECRET_INTENT) || text.includes(SECRET_RUBRIC) || text.includes(E.id) || text.includes('Invoice secret');
};

describe('a judge made public after a private version', () => {
  it('shows another organization its public latest version', async () => {
    const res = await srv.request('GET', `/v1/judges/${J.id}/`, { key: keyB });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(
      res.body.evaluators.map((e: { id: string }) => e.id),
      [P.id],
    );
    assert.equal(leaks(res.body), false);
  });

  it('does not show the private version 1 over REST', async () => {
    const res = await srv.request('GET', `/v1/judges/${J.id}/?version=1`, { key: keyB });
    assert.equal(res.status, 404, JSON.stringify(res.body));
    assert.equal(res.body.code, 'not_found');
    assert.equal(leaks(res.body), false, JSON.stringify(res.body));
  });

  it('does not show the private version 1 over MCP', async () => {
    const res = await mcpB.call('get_judge', { judge_id: J.id, version: 1 });
    assert.equal(res.isError, true, res.text);
    assert.equal(leaks(res), false, JSON.stringify(res));
    const byName = await mcpB.call('get_judge', { judge_name: 'Support judge', version: 1 });
    assert.equal(byName.isError, true, byName.text);
    assert.equal(leaks(byName), false, JSON.stringify(byName));
  });

  it('lists only the public versions to another organization, and every version to the owner', async () => {
    const other = await srv.request('GET', `/v1/judges/${J.id}/versions/`, { key: keyB });
    assert.equal(other.status, 200, JSON.stringify(other.body));
    assert.deepEqual(
      other.body.results.map((v: { version: number }) => v.version),
      [2],
    );
    assert.equal(leaks(other.body), false, JSON.stringify(other.body));
    const owner = await srv.request('GET', `/v1/judges/${J.id}/versions/`, { key: keyA });
    assert.deepEqual(
      owner.body.results.map((v: { version: number }) => v.version),
      [2, 1],
    );
  });

  it('still shows the owner its private version 1 in full', async () => {
    const res = await srv.request('GET', `/v1/judges/${J.id}/?version=1`, { key: keyA });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.evaluators[0].rubric, SECRET_RUBRIC);
  });
});

describe('an evaluator made public after a private version', () => {
  let X: { id: string };
  before(async () => {
    const x = await srv.request('POST', '/v1/evaluators/', { key: keyA, body: { name: 'Later public', intent: SECRET_INTENT, rubric: SECRET_RUBRIC } });
    assert.equal(x.status, 201, JSON.stringify(x.body));
    X = x.body;
    const made = await srv.request('PATCH', `/v1/evaluators/${X.id}/`, {
      key: keyA,
      body: { visibility: 'public', intent: 'Checks invoices are cited.', rubric: 'HIGH cites, LOW does not.' },
    });
    assert.equal(made.status, 200, JSON.stringify(made.body));
  });

  it('keeps its private version 1 private over REST and MCP', async () => {
    const rest = await srv.request('GET', `/v1/evaluators/${X.id}/?version=1`, { key: keyB });
    assert.equal(rest.status, 404, JSON.stringify(rest.body));
    assert.ok(!JSON.stringify(rest.body).includes(SECRET_RUBRIC));
    const mcp = await mcpB.call('get_evaluator', { evaluator_id: X.id, version: 1 });
    assert.equal(mcp.isError, true, mcp.text);
    assert.ok(!JSON.stringify(mcp).includes(SECRET_RUBRIC));
    const latest = await srv.request('GET', `/v1/evaluators/${X.id}/`, { key: keyB });
    assert.equal(latest.status, 200);
    assert.equal(latest.body.version, 2);
  });

  it('lists only its public versions to another organization', async () => {
    const other = await srv.request('GET', `/v1/evaluators/${X.id}/versions/`, { key: keyB });
    assert.equal(other.status, 200, JSON.stringify(other.body));
    assert.deepEqual(
      other.body.results.map((v: { version: number }) => v.version),
      [2],
    );
    assert.ok(!JSON.stringify(other.body).includes(SECRET_RUBRIC));
    const owner = await srv.request('GET', `/v1/evaluators/${X.id}/versions/`, { key: keyA });
    assert.deepEqual(
      owner.body.results.map((v: { version: number }) => v.version),
      [2, 1],
    );
  });

  it('refuses a public judge pinned at the private version', async () => {
    const j = await srv.request('POST', '/v1/judges/', { key: keyA, body: { name: 'Pinned early', intent: 'x', evaluator_ids: [E.id], pin_versions: true } });
    assert.equal(j.status, 201, JSON.stringify(j.body));
    // E becomes public (version 2) while the judge keeps its pin at E's private version 1.
    const pub = await srv.request('PATCH', `/v1/evaluators/${E.id}/`, { key: keyA, body: { visibility: 'public' } });
    assert.equal(pub.status, 200, JSON.stringify(pub.body));
    const res = await srv.request('PATCH', `/v1/judges/${j.body.id}/`, { key: keyA, body: { visibility: 'public' } });
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.match(res.body.detail, /pinned at version 1, which was saved private/);
  });
});
