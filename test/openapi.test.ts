// The OpenAPI document as served: valid OpenAPI 3.1 by a maintained validator (swagger-parser, which
// checks it against the official schema and resolves every $ref), and honest about what the server
// does: page sizes, required body fields, the error answers it sends, no field it ignores.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import SwaggerParser from '@apidevtools/swagger-parser';
import { startTestServer, type TestServer } from './helpers/server.ts';

let srv: TestServer;
let doc: any;
let key: string;

before(async () => {
  srv = await startTestServer();
  key = (await srv.demoUser()).api_key;
  const res = await srv.request('GET', '/v1/openapi.json');
  assert.equal(res.status, 200);
  doc = res.body;
});
after(() => srv?.close());

const operations = () => Object.entries<any>(doc.paths).flatMap(([path, ops]) => Object.entries<any>(ops).map(([method, op]) => ({ path, method, op })));
const bodySchema = (op: any) => op.requestBody?.content?.['application/json']?.schema;

describe('OpenAPI document', () => {
  it('is valid OpenAPI 3.1', async () => {
    const api = await SwaggerParser.validate(structuredClone(doc));
    assert.equal((api as { openapi?: string }).openapi, '3.1.0');
  });

  it('gives every list limit the maximum page size the server enforces', async () => {
    const limits = operations().flatMap(({ op }) => (op.parameters ?? []).filter((p: any) => p.name === 'limit'));
    assert.ok(limits.length >= 5);
    for (const limit of limits) assert.deepEqual([limit.schema.minimum, limit.schema.maximum], [1, 200]);
    // The document's maximum is what the server answers with.
    assert.equal((await srv.request('GET', '/v1/judges/?limit=200', { key })).status, 200);
    assert.equal((await srv.request('GET', '/v1/judges/?limit=201', { key })).status, 400);
  });

  it('requires only body fields it defines, and does not offer fields a path makes moot', () => {
    for (const { path, method, op } of operations()) {
      const body = bodySchema(op);
      if (body?.required) for (const r of body.required) assert.ok(r in body.properties, `${method} ${path} requires undefined ${r}`);
      const offered = [...Object.keys(body?.properties ?? {}), ...(op.parameters ?? []).filter((p: any) => p.in === 'query').map((p: any) => p.name)];
      for (const param of (op.parameters ?? []).filter((p: any) => p.in === 'path')) {
        assert.ok(!offered.includes(param.name), `${method} ${path} offers ${param.name} twice`);
        assert.ok(!offered.includes(param.name.replace(/_id$/, '_name')), `${method} ${path} offers an ignored ${param.name.replace(/_id$/, '_name')}`);
      }
    }
    const patch = bodySchema(doc.paths['/v1/judges/{judge_id}/'].patch);
    assert.equal(patch.required, undefined);
    assert.equal(patch.additionalProperties, false, 'unknown fields are refused, and the document says so');
    const execute = bodySchema(doc.paths['/v1/judges/{judge_id}/execute/'].post);
    // response or turns (SPEC section 10): neither is required by the schema; the server refuses a body with neither, or with both.
    assert.equal(execute.required, undefined);
    assert.ok(execute.properties.response && execute.properties.turns && execute.properties.system_prompt);
    assert.equal(execute.properties.judge_name, undefined);
  });

  it('documents the errors each operation can answer with', async () => {
    const statuses = (path: string, method: string) => Object.keys(doc.paths[path][method].responses);
    for (const { path, method, op } of operations()) {
      if (['/healthz', '/readyz', '/metrics', '/v1/openapi.json'].includes(path)) continue; // no key, no input, no rate limit (issue 26: documented below)
      for (const status of ['400', '429', '500', '503'])
        assert.ok(op.responses[status] || (path === '/create-demo-user/' && status === '400'), `${method} ${path} documents ${status}`);
      // The streamed import has no body-size limit (a line over TRIBUNAL_MAX_BODY is skipped, not a 413).
      const unlimited = path.endsWith('/items/import/');
      if (method === 'post' || method === 'patch')
        for (const status of unlimited ? ['415'] : ['413', '415']) assert.ok(op.responses[status] || path === '/create-demo-user/', `${method} ${path} documents ${status}`);
    }
    for (const s of ['403', '409']) assert.ok(statuses('/v1/judges/{judge_id}/', 'patch').includes(s));
    for (const s of ['403', '409']) assert.ok(statuses('/v1/evaluators/{evaluator_id}/', 'delete').includes(s));
    for (const s of ['409', '502', '503', '504']) assert.ok(statuses('/v1/judges/{judge_id}/execute/', 'post').includes(s));
    assert.ok(statuses('/v1/judges/', 'post').includes('409'), 'a taken name');

    // What the document promises is what the server sends: a 415, a 413 and a 403 as problems.
    const notJson = await srv.request('POST', '/v1/projects/', { key, body: 'name=x', headers: { 'content-type': 'text/plain' } });
    assert.equal(notJson.status, 415);
    const preset = await srv.request('PATCH', '/v1/evaluators/Faithfulness/', { key, body: { intent: 'Mine now.' } });
    assert.equal(preset.status, 403);
    assert.equal(preset.body.code, 'permission_denied');
  });
});

// issue 26 item 13: the operational doors the README documents are in the document, each with the
// body it answers; checked against the real answers.
describe('OpenAPI: /healthz, /readyz, /metrics, /v1/openapi.json', () => {
  /** Minimal JSON Schema check (type, enum, const, required, properties): enough for these bodies. */
  function check(schema: any, value: any, at = '$'): string[] {
    const errors: string[] = [];
    if (schema.enum && !schema.enum.includes(value)) errors.push(`${at}: ${JSON.stringify(value)} not in ${schema.enum}`);
    if (schema.const !== undefined && schema.const !== value) errors.push(`${at}: not ${schema.const}`);
    if (schema.type === 'object') {
      if (!value || typeof value !== 'object') return [...errors, `${at}: not an object`];
      for (const r of schema.required ?? []) if (!(r in value)) errors.push(`${at}.${r}: missing`);
      for (const [k, s] of Object.entries<any>(schema.properties ?? {})) if (k in value) errors.push(...check(s, value[k], `${at}.${k}`));
    } else if (schema.type && schema.type !== typeof value) errors.push(`${at}: ${typeof value}, not ${schema.type}`);
    return errors;
  }

  it('documents each with a response schema its real answer matches', async () => {
    for (const path of ['/healthz', '/readyz', '/v1/openapi.json']) {
      const op = doc.paths[path]?.get;
      assert.ok(op, `${path} is in the document`);
      assert.deepEqual(op.security, [], `${path} needs no key`);
      const schema = op.responses['200'].content['application/json'].schema;
      assert.equal(schema.type, 'object');
      const res = await srv.request('GET', path);
      assert.equal(res.status, 200);
      assert.deepEqual(check(schema, res.body), [], path);
    }
    assert.deepEqual(
      check(doc.paths['/healthz'].get.responses['503'].content['application/json'].schema, {
        status: 'degraded',
        store: { kind: 'json', status: 'down' },
        model: { configured: false },
      }),
      [],
    );
    const metrics = doc.paths['/metrics']?.get;
    assert.ok(metrics, '/metrics is in the document');
    assert.ok(metrics.responses['200'].content['text/plain'].schema);
    assert.deepEqual(metrics.security, [{ MetricsToken: [] }]);
    assert.ok(doc.components.securitySchemes.MetricsToken);
    // The check can fail: a body without its required members does not pass.
    assert.notDeepEqual(check(doc.paths['/readyz'].get.responses['200'].content['application/json'].schema, { status: 'nope' }), []);
  });
});
