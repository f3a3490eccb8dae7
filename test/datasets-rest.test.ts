// Datasets and items over real HTTP (SPEC section 7): CRUD, bulk add, streamed import and export,
// organization isolation. TRIBUNAL_TEST_STORE=postgres runs it on PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from './helpers/server.ts';

let srv: TestServer;
let keyA: string;
let keyB: string;

before(async () => {
  srv = await startTestServer();
  const { createOrganization } = await import('../src/domain/orgs.ts');
  keyA = (await createOrganization(srv.store, { name: 'acme', isDemo: false })).api_key;
  keyB = (await createOrganization(srv.store, { name: 'globex', isDemo: false })).api_key;
});
after(() => srv.close());

/** A raw body (JSONL, CSV, or a stream of either) with its content type. */
async function send(method: string, path: string, key: string, body?: BodyInit, type?: string) {
  const res = await fetch(srv.url + path, {
    method,
    headers: { authorization: `Api-Key ${key}`, ...(type ? { 'content-type': type } : {}) },
    body,
    ...(body instanceof ReadableStream ? { duplex: 'half' } : {}),
  } as RequestInit);
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, body: json };
}

async function newDataset(name: string, key = keyA): Promise<string> {
  const res = await srv.request('POST', '/v1/datasets/', { key, body: { name, description: 'test set' } });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.id;
}

async function allItems(id: string, key = keyA, limit = 3): Promise<any[]> {
  const out: any[] = [];
  let cursor: string | null = null;
  do {
    const res = await srv.request('GET', `/v1/datasets/${id}/items/?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`, { key });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    out.push(...res.body.results);
    cursor = res.body.next_cursor;
  } while (cursor);
  return out;
}

describe('datasets', () => {
  it('creates, reads by id and by name, lists, renames and deletes a dataset', async () => {
    const id = await newDataset('golden');
    const got = await srv.request('GET', `/v1/datasets/${id}/`, { key: keyA });
    assert.equal(got.status, 200);
    assert.equal(got.body.name, 'golden');
    assert.equal(got.body.item_count, 0);
    assert.match(got.body.project_id, /^prj_/);
    assert.equal((await srv.request('GET', '/v1/datasets/golden/', { key: keyA })).body.id, id);
    const listed = await srv.request('GET', '/v1/datasets/?search=gold', { key: keyA });
    assert.deepEqual(
      listed.body.results.map((d: any) => d.id),
      [id],
    );
    assert.equal((await srv.request('POST', '/v1/datasets/', { key: keyA, body: { name: 'golden' } })).status, 409);
    const renamed = await srv.request('PATCH', `/v1/datasets/${id}/`, { key: keyA, body: { name: 'gold standard' } });
    assert.equal(renamed.status, 200);
    assert.equal(renamed.body.name, 'gold standard');
    const del = await srv.request('DELETE', '/v1/datasets/gold%20standard/', { key: keyA });
    assert.deepEqual(del.body, { deleted: true, id });
    assert.equal((await srv.request('GET', `/v1/datasets/${id}/`, { key: keyA })).status, 404);
  });

  it("hides another organization's dataset: 404 on every path, its list empty", async () => {
    const id = await newDataset('private set', keyA);
    await srv.request('POST', `/v1/datasets/${id}/items/`, { key: keyA, body: { items: [{ response: 'a' }] } });
    const itemId = (await allItems(id))[0].id;
    for (const [method, path, body] of [
      ['GET', `/v1/datasets/${id}/`],
      ['PATCH', `/v1/datasets/${id}/`, { name: 'x' }],
      ['DELETE', `/v1/datasets/${id}/`],
      ['GET', `/v1/datasets/${id}/items/`],
      ['POST', `/v1/datasets/${id}/items/`, { items: [{ response: 'b' }] }],
      ['GET', `/v1/datasets/${id}/items/${itemId}/`],
      ['DELETE', `/v1/datasets/${id}/items/${itemId}/`],
      ['GET', '/v1/datasets/private%20set/'],
      ['GET', `/v1/datasets/${id}/items/export/`],
    ] as const) {
      const res = await srv.request(method, path, { key: keyB, body });
      assert.equal(res.status, 404, `${method} ${path}`);
      assert.equal(res.body.code, 'not_found');
    }
    const imported = await send('POST', `/v1/datasets/${id}/items/import/`, keyB, '{"response":"x"}\n', 'application/x-ndjson');
    assert.equal(imported.status, 404);
    assert.deepEqual((await srv.request('GET', '/v1/datasets/', { key: keyB })).body.results, []);
    assert.equal((await allItems(id)).length, 1, 'nothing changed');
  });

  it('adds items in bulk in order; one bad item refuses the call, naming each bad index', async () => {
    const id = await newDataset('bulk');
    const items = Array.from({ length: 7 }, (_, i) => ({ response: `answer ${i}`, request: `q ${i}`, tags: ['t'], metadata: { i }, expected_scores: { Politeness: 0.5 } }));
    const added = await srv.request('POST', `/v1/datasets/${id}/items/`, { key: keyA, body: { items } });
    assert.equal(added.status, 201, JSON.stringify(added.body));
    assert.equal(added.body.created, 7);
    assert.equal(added.body.ids.length, 7);
    const listed = await allItems(id);
    assert.deepEqual(
      listed.map((i) => i.id),
      added.body.ids,
    );
    assert.deepEqual(
      listed.map((i) => i.response),
      items.map((i) => i.response),
    );
    assert.deepEqual(listed[2].metadata, { i: 2 });
    assert.equal(listed[2].contexts, null);

    const bad = await srv.request('POST', `/v1/datasets/${id}/items/`, {
      key: keyA,
      body: { items: [{ response: 'fine' }, { request: 'no response' }, { response: 'x', expected_scores: { E: 2 } }, { response: 'y', colour: 'red' }] },
    });
    assert.equal(bad.status, 400);
    const fields = bad.body.errors.map((e: any) => e.field).join(' ');
    for (const index of ['items.1', 'items.2', 'items.3']) assert.ok(fields.includes(index), `${index} named in ${fields}`);
    assert.ok(!fields.includes('items.0'));
    assert.equal((await srv.request('GET', `/v1/datasets/${id}/`, { key: keyA })).body.item_count, 7, 'nothing added');
    for (const body of [{ items: [] }, { items: Array.from({ length: 1001 }, () => ({ response: 'r' })) }, {}]) {
      assert.equal((await srv.request('POST', `/v1/datasets/${id}/items/`, { key: keyA, body })).status, 400);
    }
    assert.equal((await srv.request('GET', `/v1/datasets/${id}/items/?cursor=bogus`, { key: keyA })).status, 400);
  });

  it('reads, edits and deletes one item', async () => {
    const id = await newDataset('single');
    const { body } = await srv.request('POST', `/v1/datasets/${id}/items/`, { key: keyA, body: { items: [{ response: 'r', request: 'q', contexts: ['c'] }, { response: 's' }] } });
    const [first, second] = body.ids;
    const edited = await srv.request('PATCH', `/v1/datasets/${id}/items/${first}/`, { key: keyA, body: { response: 'r2', contexts: null, tags: ['x'] } });
    assert.equal(edited.status, 200, JSON.stringify(edited.body));
    assert.equal(edited.body.response, 'r2');
    assert.equal(edited.body.contexts, null);
    assert.equal(edited.body.request, 'q');
    assert.deepEqual((await srv.request('GET', `/v1/datasets/${id}/items/${first}/`, { key: keyA })).body.tags, ['x']);
    assert.equal((await srv.request('PATCH', `/v1/datasets/${id}/items/${first}/`, { key: keyA, body: { response: null } })).status, 400);
    assert.equal((await srv.request('DELETE', `/v1/datasets/${id}/items/${second}/`, { key: keyA })).status, 200);
    assert.equal((await srv.request('GET', `/v1/datasets/${id}/items/${second}/`, { key: keyA })).status, 404);
    assert.equal((await srv.request('GET', `/v1/datasets/${id}/`, { key: keyA })).body.item_count, 1);
  });
});

describe('conversation items (turns)', () => {
  const turns = [
    { role: 'user', content: 'Book me a table for two.' },
    { role: 'assistant', content: 'Which evening?', tool_calls: [{ name: 'lookup', arguments: { day: 'fri' } }] },
  ];

  it('stores turns with a system prompt, refuses turns with a response, and switches an item by patch', async () => {
    const id = await newDataset('conversations');
    const added = await srv.request('POST', `/v1/datasets/${id}/items/`, { key: keyA, body: { items: [{ turns, system_prompt: 'You book tables.' }, { response: 'plain' }] } });
    assert.equal(added.status, 201, JSON.stringify(added.body));
    const [conv, plain] = added.body.ids;
    const item = (await srv.request('GET', `/v1/datasets/${id}/items/${conv}/`, { key: keyA })).body;
    assert.deepEqual(item.turns, turns);
    assert.equal(item.system_prompt, 'You book tables.');
    assert.equal(item.response, null);
    assert.equal((await srv.request('GET', `/v1/datasets/${id}/items/${plain}/`, { key: keyA })).body.turns, null);

    const bad = await srv.request('POST', `/v1/datasets/${id}/items/`, {
      key: keyA,
      body: { items: [{ turns, response: 'both' }, { response: 'fine' }, { system_prompt: 'alone' }, { turns: [] }] },
    });
    assert.equal(bad.status, 400);
    const fields = bad.body.errors.map((e: any) => e.field);
    for (const f of ['items.0.turns', 'items.2.system_prompt', 'items.3.turns']) assert.ok(fields.includes(f), `${f} named in ${fields}`);
    assert.ok(!fields.some((f: string) => f.startsWith('items.1')));

    // Switching a plain item to a conversation needs response cleared in the same patch.
    assert.equal((await srv.request('PATCH', `/v1/datasets/${id}/items/${plain}/`, { key: keyA, body: { turns } })).status, 400);
    const switched = await srv.request('PATCH', `/v1/datasets/${id}/items/${plain}/`, { key: keyA, body: { turns, response: null } });
    assert.equal(switched.status, 200, JSON.stringify(switched.body));
    assert.deepEqual(switched.body.turns, turns);
    assert.equal(switched.body.response, null);
  });

  it('imports turns from JSONL and from a CSV column of JSON, and exports them', async () => {
    const id = await newDataset('conversation import');
    const jsonl = [JSON.stringify({ turns, system_prompt: 's' }), JSON.stringify({ turns, request: 'both' })].join('\n');
    const res = await send('POST', `/v1/datasets/${id}/items/import/`, keyA, jsonl, 'application/x-ndjson');
    assert.equal(res.body.created, 1, res.text);
    assert.deepEqual(
      res.body.skipped.map((s: any) => s.line),
      [2],
    );
    assert.match(res.body.skipped[0].error, /either turns or request\/response/);
    const csv = `turns,tags\n"${JSON.stringify(turns).replaceAll('"', '""')}",conv\n`;
    const fromCsv = await send('POST', `/v1/datasets/${id}/items/import/`, keyA, csv, 'text/csv');
    assert.equal(fromCsv.body.created, 1, fromCsv.text);
    const rows = (await send('GET', `/v1/datasets/${id}/items/export/`, keyA)).text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      rows.map((r) => r.turns),
      [turns, turns],
    );
    assert.deepEqual(
      rows.map((r) => r.system_prompt),
      ['s', null],
    );
  });
});

describe('dataset import and export', () => {
  it('imports JSONL, skipping bad lines by number, and exports every item as JSONL that imports again', async () => {
    const id = await newDataset('jsonl');
    const lines = [
      JSON.stringify({ response: 'one', request: 'q1', contexts: ['c1'] }),
      'not json',
      '',
      JSON.stringify({ request: 'missing response' }),
      JSON.stringify({ response: 'two', tags: ['a', 'b'], expected_scores: { Politeness: 1 } }),
      JSON.stringify([1, 2]),
      JSON.stringify({ response: 'three', metadata: { source: 'prod' } }),
    ];
    const res = await send('POST', `/v1/datasets/${id}/items/import/`, keyA, lines.join('\n'), 'application/x-ndjson');
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.created, 3);
    assert.deepEqual(
      res.body.skipped.map((s: any) => s.line),
      [2, 4, 6],
    );
    assert.match(res.body.skipped[1].error, /response/);
    const exported = await send('GET', `/v1/datasets/${id}/items/export/`, keyA);
    assert.equal(exported.status, 200);
    assert.match(exported.headers.get('content-type') ?? '', /application\/x-ndjson/);
    const rows = exported.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      rows.map((r) => r.response),
      ['one', 'two', 'three'],
    );
    assert.deepEqual(rows, await allItems(id));

    const copy = await newDataset('jsonl copy');
    const again = await send('POST', `/v1/datasets/${copy}/items/import/`, keyA, exported.text, 'application/x-ndjson');
    assert.equal(again.body.created, 3, again.text);
    const copied = await allItems(copy);
    assert.deepEqual(
      copied.map(({ id: _i, created_at: _c, ...rest }) => rest),
      rows.map(({ id: _i, created_at: _c, ...rest }) => rest),
    );
  });

  it('imports CSV with JSON or |-separated lists and JSON objects; an unknown column refuses the file', async () => {
    const id = await newDataset('csv');
    const csv = [
      'request,response,contexts,tags,expected_scores,metadata',
      'What is 2+2?,4,"[""arithmetic""]",math|easy,"{""Correctness"":1}","{""src"":""quiz""}"',
      '"Say ""hi""","hi, there",doc one|doc two,,,',
      'no response,,,,,',
      'bad json,x,,,{oops,',
    ].join('\r\n');
    const res = await send('POST', `/v1/datasets/${id}/items/import/`, keyA, csv, 'text/csv');
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.created, 2);
    assert.deepEqual(
      res.body.skipped.map((s: any) => s.line),
      [4, 5],
    );
    const items = await allItems(id);
    assert.deepEqual(items[0].contexts, ['arithmetic']);
    assert.deepEqual(items[0].tags, ['math', 'easy']);
    assert.deepEqual(items[0].expected_scores, { Correctness: 1 });
    assert.deepEqual(items[0].metadata, { src: 'quiz' });
    assert.equal(items[1].request, 'Say "hi"');
    assert.equal(items[1].response, 'hi, there');
    assert.deepEqual(items[1].contexts, ['doc one', 'doc two']);

    const unknown = await send('POST', `/v1/datasets/${id}/items/import/`, keyA, 'response,colour\nx,red\n', 'text/csv');
    assert.equal(unknown.status, 400, unknown.text);
    assert.match(unknown.body.detail, /colour/);
    const wrongType = await send('POST', `/v1/datasets/${id}/items/import/`, keyA, '{"response":"x"}', 'application/json');
    assert.equal(wrongType.status, 415);
    assert.equal((await srv.request('GET', `/v1/datasets/${id}/`, { key: keyA })).body.item_count, 2);
  });
});
