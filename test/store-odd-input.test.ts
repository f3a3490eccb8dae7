// Issue 11 item 7, store side: ids named like Object.prototype members are plain unknown ids (404
// problems, never 500) on every resource path, and a forged cursor whose instant PostgreSQL cannot
// hold is a 400. TRIBUNAL_TEST_STORE=postgres runs it on PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connectMcp } from './helpers/mcp-client.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

let srv: TestServer;
let key: string;

before(async () => {
  srv = await startTestServer();
  const { createOrganization } = await import('../src/domain/orgs.ts');
  key = (await createOrganization(srv.store, { name: 'odd-input', isDemo: false })).api_key;
  // Something stored, so that lookups run against real tables.
  const e = await srv.request('POST', '/v1/evaluators/', { key, body: { name: 'E', intent: 'i', rubric: 'r' } });
  assert.equal(e.status, 201);
  assert.equal((await srv.request('POST', '/v1/judges/', { key, body: { name: 'J', intent: 'i', evaluator_ids: [e.body.id] } })).status, 201);
});
after(() => srv.close());

const PROTO_NAMES = ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf', 'isPrototypeOf', '__defineGetter__'];

describe('ids named like Object.prototype members', () => {
  for (const id of PROTO_NAMES) {
    it(`answers ${id} with 404 problems on every resource path`, async () => {
      const run = { request: 'Q', response: 'A' };
      const calls: Array<[string, string, unknown?]> = [
        ['GET', `/v1/judges/${id}/`],
        ['GET', `/v1/judges/${id}/?version=1`],
        ['GET', `/v1/judges/${id}/versions/`],
        ['PATCH', `/v1/judges/${id}/`, { name: 'x' }],
        ['DELETE', `/v1/judges/${id}/`],
        ['POST', `/v1/judges/${id}/execute/`, run],
        ['GET', `/v1/evaluators/${id}/`],
        ['GET', `/v1/evaluators/${id}/versions/`],
        ['PATCH', `/v1/evaluators/${id}/`, { name: 'x' }],
        ['DELETE', `/v1/evaluators/${id}/`],
        ['POST', `/v1/evaluators/${id}/execute/`, run],
        ['GET', `/v1/execution-logs/${id}/`],
        ['DELETE', `/v1/api-keys/${id}/`],
      ];
      for (const [method, path, body] of calls) {
        const res = await srv.request(method, path, { key, body });
        assert.equal(res.status, 404, `${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
        assert.match(res.headers.get('content-type') ?? '', /application\/problem\+json/);
        assert.equal(res.body.code, 'not_found');
      }
      for (const [method, path, body] of [
        ['GET', `/v1/judges/?project_id=${id}`],
        ['GET', `/v1/execution-logs/?judge_id=${id}&project_id=${id}`],
        ['POST', '/v1/judges/', { name: `j-${id}`, intent: 'i', evaluator_ids: [id] }],
        ['POST', '/v1/evaluators/', { name: `e-${id}`, intent: 'i', rubric: 'r', project_id: id }],
      ] as Array<[string, string, unknown?]>) {
        const res = await srv.request(method, path, { key, body });
        assert.ok(res.status >= 400 && res.status < 500, `${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
      }
    });
  }

  it('answers them as unknown over MCP too', async () => {
    const mcp = await connectMcp(srv.url, key);
    try {
      for (const id of PROTO_NAMES) {
        for (const [tool, args] of [
          ['get_judge', { judge_id: id }],
          ['get_evaluator', { evaluator_id: id }],
          ['get_execution_log', { log_id: id }],
          ['run_judge', { judge_id: id, response: 'A' }],
          ['update_evaluator', { evaluator_id: id, name: 'x' }],
        ] as Array<[string, Record<string, unknown>]>) {
          const res = await mcp.call(tool, args);
          assert.equal(res.isError, true, `${tool} ${id}`);
          assert.match(res.text, /not found|no .* visible|No /i, `${tool} ${id}: ${res.text}`);
          assert.doesNotMatch(res.text, /internal/i);
        }
      }
    } finally {
      await mcp.close();
    }
  });
});

describe('forged cursors', () => {
  it('answers a cursor at year 0000, a day that does not exist or a year past 9999 with 400', async () => {
    for (const instant of ['0000-01-01T00:00:00.000Z', '2026-02-30T00:00:00.000Z', '0000-12-31T23:59:59Z', '+10000-01-01T00:00:00.000Z']) {
      const cursor = Buffer.from(JSON.stringify([instant, 'log_x'])).toString('base64url');
      for (const path of ['/v1/execution-logs/', '/v1/judges/', '/v1/evaluators/', '/v1/projects/', '/v1/api-keys/']) {
        const res = await srv.request('GET', `${path}?cursor=${cursor}`, { key });
        assert.equal(res.status, 400, `${path} ${instant}: ${res.status} ${JSON.stringify(res.body)}`);
        assert.equal(res.body.code, 'validation_error');
      }
    }
  });

  it('still accepts the cursors the server writes', async () => {
    const first = await srv.request('GET', '/v1/evaluators/?limit=1', { key });
    assert.equal(first.status, 200);
    assert.ok(first.body.next_cursor, 'presets make a second page');
    const second = await srv.request('GET', `/v1/evaluators/?limit=1&cursor=${first.body.next_cursor}`, { key });
    assert.equal(second.status, 200, JSON.stringify(second.body));
    assert.notEqual(second.body.results[0].id, first.body.results[0].id);
  });
});
