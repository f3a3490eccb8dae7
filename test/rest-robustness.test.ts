// Malformed input of every shape gets a clear 4xx problem, never a 500; concurrency is safe.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from './helpers/server.ts';

let srv: TestServer;
let key: string;

before(async () => {
  srv = await startTestServer({ TRIBUNAL_MAX_BODY: '64kb', TRIBUNAL_MAX_TEXT: '1000', TRIBUNAL_MAX_CONTEXTS: '3' });
  key = (await srv.demoUser()).api_key;
});
after(() => srv.close());

function assertProblem(res: { status: number; headers: Headers; body: any }, status: number, code: string) {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.match(res.headers.get('content-type') ?? '', /application\/problem\+json/);
  assert.equal(res.body.code, code);
  assert.equal(res.body.status, status);
  assert.equal(typeof res.body.title, 'string');
  assert.equal(typeof res.body.type, 'string');
  assert.ok(res.body.detail.length > 10, 'the detail says what to fix');
}

describe('malformed requests', () => {
  it('answers wrong types and missing fields with the offending fields listed', async () => {
    const res = await srv.request('POST', '/v1/judges/', { key, body: { name: 42, evaluator_ids: 'Clarity' } });
    assertProblem(res, 400, 'validation_error');
    const fields = res.body.errors.map((e: { field: string }) => e.field).sort();
    assert.deepEqual(fields, ['evaluator_ids', 'intent', 'name']);
    assertProblem(await srv.request('POST', '/v1/evaluators/', { key, body: {} }), 400, 'validation_error');
    assertProblem(
      await srv.request('POST', '/v1/evaluators/', { key, body: { name: 'x', intent: 'y', rubric: 'z', demonstrations: [{ response: 'r', score: 7 }] } }),
      400,
      'validation_error',
    );
    assertProblem(await srv.request('POST', '/v1/judges/', { key, body: { name: 'x', intent: 'y', evaluator_ids: [] } }), 400, 'validation_error');
    assertProblem(await srv.request('POST', '/v1/judges/', { key, body: { name: 'x', intent: 'y', evaluator_ids: ['No such evaluator'] } }), 400, 'validation_error');
    assertProblem(await srv.request('POST', '/v1/judges/', { key, body: { name: 'x', intent: 'y', evaluator_ids: ['Clarity'], visibility: 'secret' } }), 400, 'validation_error');
  });

  it('refuses non-object bodies, bad JSON and non-JSON content types', async () => {
    for (const body of ['[1,2]', '"text"', 'null', '7']) {
      assertProblem(await srv.request('POST', '/v1/projects/', { key, body }), 400, 'validation_error');
    }
    for (const body of ['{', '{"name": }', '\u0000', "{'a':1}"]) {
      assertProblem(await srv.request('POST', '/v1/projects/', { key, body }), 400, 'validation_error');
    }
    const form = await srv.request('POST', '/v1/projects/', { key, body: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    assert.equal(form.status, 415);
    assert.equal(form.body.code, 'validation_error');
  });

  it('answers 413 for a body over the limit and 400 for text and contexts over theirs', async () => {
    const huge = { name: 'x', description: 'y'.repeat(70 * 1024) };
    assertProblem(await srv.request('POST', '/v1/projects/', { key, body: huge }), 413, 'payload_too_large');
    const long = await srv.request('POST', '/v1/evaluators/', { key, body: { name: 'x', intent: 'i'.repeat(1001), rubric: 'r' } });
    assertProblem(long, 400, 'validation_error');
    assert.equal(long.body.errors[0].field, 'intent');
    const judge = (await srv.request('POST', '/v1/judges/', { key, body: { name: 'limits', intent: 'x', evaluator_ids: ['Clarity'] } })).body;
    const many = await srv.request('POST', `/v1/judges/${judge.id}/execute/`, { key, body: { response: 'r', contexts: ['a', 'b', 'c', 'd'] } });
    assertProblem(many, 400, 'validation_error');
    assert.equal(many.body.errors[0].field, 'contexts');
  });

  it('answers bad ids, bad cursors and bad query values without a 500', async () => {
    for (const path of ['/v1/judges/nope/', '/v1/judges/%00/', '/v1/evaluators/..%2F..%2Fetc/', '/v1/execution-logs/log_x/', `/v1/judges/${'a'.repeat(5000)}/`]) {
      const res = await srv.request('GET', path, { key });
      assert.ok(res.status === 404 || res.status === 400, `${path} -> ${res.status}`);
      assert.ok(res.body.code);
    }
    for (const cursor of ['abc', '!!!', Buffer.from('{"x":1}').toString('base64url'), Buffer.from('[1,2]').toString('base64url')]) {
      assertProblem(await srv.request('GET', `/v1/judges/?cursor=${encodeURIComponent(cursor)}`, { key }), 400, 'validation_error');
    }
    for (const q of ['limit=0', 'limit=-1', 'limit=abc', 'limit=1.5', 'include_public=maybe']) {
      assertProblem(await srv.request('GET', `/v1/judges/?${q}`, { key }), 400, 'validation_error');
    }
    for (const q of ['limit=0', 'limit=-1', 'limit=abc', 'limit=1.5']) {
      assertProblem(await srv.request('GET', `/v1/api-keys/?${q}`, { key }), 400, 'validation_error');
    }
    // A query field the route does not take is refused by name, never silently ignored.
    const unknown = await srv.request('GET', '/v1/judges/?version=0', { key });
    assertProblem(unknown, 400, 'validation_error');
    assert.equal(unknown.body.errors[0].field, 'version');
    assertProblem(await srv.request('GET', '/v1/evaluators/preset_clarity/?version=abc', { key }), 400, 'validation_error');
    assertProblem(await srv.request('GET', '/v1/evaluators/preset_clarity/?version=99999999999999', { key }), 400, 'validation_error');
    assertProblem(await srv.request('GET', '/v1/judges/jdg_x/?version=99999999999999', { key }), 400, 'validation_error');
    // A cursor of the right shape whose position is not an instant the server wrote.
    for (const forged of [
      ['notadate', 'x'],
      ['2026-13-45T99:99:99Z', 'x'],
      ['', ''],
    ]) {
      const cursor = Buffer.from(JSON.stringify(forged)).toString('base64url');
      assertProblem(await srv.request('GET', `/v1/evaluators/?cursor=${cursor}`, { key }), 400, 'validation_error');
      assertProblem(await srv.request('GET', `/v1/execution-logs/?cursor=${cursor}`, { key }), 400, 'validation_error');
    }
    for (const date of ['275760-09-13', '-000001-01-01', '0000-01-01', '2026-02-30T25:00:00Z']) {
      assertProblem(await srv.request('GET', `/v1/execution-logs/?date_from=${encodeURIComponent(date)}`, { key }), 400, 'validation_error');
    }
    // Duplicate query keys do not crash the parser
    assert.equal((await srv.request('GET', '/v1/judges/?limit=2&limit=3&search=a&search=b', { key })).status, 200);
  });

  it('answers an unreadable compressed body with 400, an empty response with 400', async () => {
    const res = await fetch(`${srv.url}/v1/projects/`, {
      method: 'POST',
      headers: { authorization: `Api-Key ${key}`, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: 'this is not gzip',
    });
    assert.equal(res.status, 400);
    assert.equal(((await res.json()) as { code: string }).code, 'validation_error');
    const run = await srv.request('POST', '/v1/evaluators/preset_clarity/execute/', { key, body: { response: '' } });
    assertProblem(run, 400, 'validation_error');
    assert.equal(run.body.errors[0].field, 'response');
  });

  it('accepts only the models the operator allows as an evaluator override', async () => {
    const bad = await srv.request('POST', '/v1/evaluators/', { key, body: { name: 'pricey', intent: 'i', rubric: 'r', model: 'claude-opus-anything-goes' } });
    assertProblem(bad, 400, 'validation_error');
    assert.equal(bad.body.errors[0].field, 'model');
    assert.match(bad.body.detail, /claude-sonnet-4-5/, 'the detail lists what is allowed');
    const ok = await srv.request('POST', '/v1/evaluators/', { key, body: { name: 'fast', intent: 'i', rubric: 'r', model: 'claude-haiku-4-5' } });
    assert.equal(ok.status, 201);
    const edit = await srv.request('PATCH', `/v1/evaluators/${ok.body.id}/`, { key, body: { model: 'gpt-something' } });
    assertProblem(edit, 400, 'validation_error');
    const restricted = await startTestServer({ TRIBUNAL_ALLOWED_MODELS: 'claude-haiku-4-5' });
    try {
      const k = (await restricted.demoUser()).api_key;
      assert.equal((await restricted.request('POST', '/v1/evaluators/', { key: k, body: { name: 'x', intent: 'i', rubric: 'r', model: 'claude-sonnet-4-5' } })).status, 400);
      assert.equal((await restricted.request('POST', '/v1/evaluators/', { key: k, body: { name: 'y', intent: 'i', rubric: 'r', model: 'claude-haiku-4-5' } })).status, 201);
    } finally {
      await restricted.close();
    }
  });

  it('answers unknown routes and methods with 404 problem+json', async () => {
    assertProblem(await srv.request('GET', '/nope'), 404, 'not_found');
    assertProblem(await srv.request('GET', '/v1/nope/', { key }), 404, 'not_found');
    assertProblem(await srv.request('PUT', '/v1/judges/', { key, body: {} }), 404, 'not_found');
  });
});

describe('concurrency', () => {
  it('200 concurrent creates leave exactly 200 resources', async () => {
    const org = (await srv.demoUser()).api_key;
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) => srv.request('POST', '/v1/projects/', { key: org, body: { name: `p${i}` } })));
    assert.deepEqual([...new Set(results.map((r) => r.status))], [201]);
    const ids = new Set<string>();
    let cursor: string | null = null;
    do {
      const res = await srv.request('GET', `/v1/projects/?limit=200${cursor ? `&cursor=${cursor}` : ''}`, { key: org });
      for (const p of res.body.results) ids.add(p.id);
      cursor = res.body.next_cursor;
    } while (cursor);
    assert.equal(ids.size, 201, '200 created + the default project');
  });

  it('concurrent edits of one evaluator each make their own version', async () => {
    const org = (await srv.demoUser()).api_key;
    const ev = (await srv.request('POST', '/v1/evaluators/', { key: org, body: { name: 'e', intent: 'i', rubric: 'r' } })).body;
    const edits = await Promise.all(Array.from({ length: 4 }, (_, i) => srv.request('PATCH', `/v1/evaluators/${ev.id}/`, { key: org, body: { rubric: `r${i}` } })));
    assert.deepEqual(
      edits.map((e) => e.status),
      [200, 200, 200, 200],
    );
    const versions = await srv.request('GET', `/v1/evaluators/${ev.id}/versions/`, { key: org });
    assert.deepEqual(
      versions.body.results.map((v: { version: number }) => v.version),
      [5, 4, 3, 2, 1],
    );
  });
});
