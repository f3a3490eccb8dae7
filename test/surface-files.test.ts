// Judges and evaluators as files (SPEC section 16), over real HTTP on both stores: export as YAML or
// JSON, import (created, then unchanged the second time), a dry run's diff, and bad documents.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parse } from 'yaml';
import { startTestServer, type TestServer } from './helpers/server.ts';

let srv: TestServer;
let keyA: string;
let keyB: string;
let presetName: string;

async function realOrgKey(name: string): Promise<string> {
  const { createOrganization } = await import('../src/domain/orgs.ts');
  return (await createOrganization(srv.store, { name, isDemo: false })).api_key;
}

before(async () => {
  srv = await startTestServer();
  keyA = await realOrgKey('acme');
  keyB = await realOrgKey('globex');
  const list = await srv.request('GET', '/v1/evaluators/?limit=200', { key: keyA });
  presetName = list.body.results.find((e: { is_preset: boolean }) => e.is_preset).name;
});
after(() => srv.close());

async function rawRequest(method: string, path: string, key: string, body?: string, type = 'application/yaml') {
  const res = await fetch(srv.url + path, { method, headers: { authorization: `Api-Key ${key}`, ...(body !== undefined ? { 'content-type': type } : {}) }, body });
  const text = await res.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {
    /* YAML */
  }
  return { status: res.status, type: res.headers.get('content-type') ?? '', text, json };
}
const importDoc = (key: string, body: string, query = '', type = 'application/yaml') => rawRequest('POST', `/v1/judges/import/${query}`, key, body, type);

describe('judges as files', () => {
  let yamlText: string;

  it('exports a judge with its evaluators as YAML (presets by name) and as JSON', async () => {
    const e = await srv.request('POST', '/v1/evaluators/', {
      key: keyA,
      body: {
        name: 'Cites policy',
        intent: 'Checks the reply cites the refund policy.',
        rubric: 'HIGH: cites it. LOW: does not.',
        requires_request: true,
        demonstrations: [{ request: 'Refund?', response: 'Per policy 4.2, yes.', score: 1 }],
      },
    });
    assert.equal(e.status, 201);
    const j = await srv.request('POST', '/v1/judges/', {
      key: keyA,
      body: { name: 'Refund replies', intent: 'Replies to refund requests', stage: 'reply', evaluator_ids: [e.body.id, presetName] },
    });
    assert.equal(j.status, 201);
    const yaml = await rawRequest('GET', `/v1/judges/${j.body.id}/export/`, keyA);
    assert.equal(yaml.status, 200);
    assert.match(yaml.type, /application\/yaml/);
    yamlText = yaml.text;
    const doc = parse(yaml.text);
    assert.equal(doc.kind, 'judge');
    assert.equal(doc.format, 1);
    assert.equal(doc.judge.name, 'Refund replies');
    assert.equal(doc.judge.stage, 'reply');
    assert.equal(doc.judge.evaluators[0].name, 'Cites policy');
    assert.equal(doc.judge.evaluators[0].requires_request, true);
    assert.equal(doc.judge.evaluators[0].requires_contexts, undefined, 'defaults are left out');
    assert.deepEqual(doc.judge.evaluators[1], { preset: presetName });
    const json = await rawRequest('GET', `/v1/judges/${encodeURIComponent('Refund replies')}/export/?format=json`, keyA);
    assert.match(json.type, /application\/json/);
    assert.deepEqual(json.json, doc);
    const ev = await rawRequest('GET', `/v1/evaluators/${e.body.id}/export/?format=json`, keyA);
    assert.equal(ev.json.kind, 'evaluator');
    assert.equal(ev.json.evaluator.rubric, 'HIGH: cites it. LOW: does not.');
    assert.equal((await rawRequest('GET', `/v1/judges/${j.body.id}/export/`, keyB)).status, 404, "another organization's private judge");
    assert.equal((await rawRequest('GET', `/v1/judges/${j.body.id}/export/?format=xml`, keyA)).status, 400);
  });

  it('imports into another organization, and a second import changes nothing', async () => {
    const first = await importDoc(keyB, yamlText);
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(
      first.json.created.map((c: { kind: string; name: string }) => `${c.kind}:${c.name}`),
      ['evaluator:Cites policy', 'judge:Refund replies'],
    );
    assert.deepEqual(first.json.updated, []);
    const judge = await srv.request('GET', `/v1/judges/${first.json.judge_id}/`, { key: keyB });
    assert.equal(judge.body.evaluators.length, 2);
    assert.equal(judge.body.evaluators[1].name, presetName);
    const second = await importDoc(keyB, yamlText);
    assert.deepEqual(second.json.created, []);
    assert.deepEqual(second.json.updated, []);
    assert.equal(second.json.unchanged.length, 2);
    assert.equal(second.json.judge_id, first.json.judge_id);
    assert.equal((await srv.request('GET', `/v1/judges/${first.json.judge_id}/`, { key: keyB })).body.version, 1);
    // The JSON export imports the same way.
    const json = await rawRequest('GET', `/v1/judges/${first.json.judge_id}/export/?format=json`, keyB);
    const third = await importDoc(keyB, json.text, '', 'application/json');
    assert.equal(third.json.unchanged.length, 2);
  });

  it('a dry run shows the diff and writes nothing; the real import then applies it', async () => {
    const changed = yamlText
      .replace('HIGH: cites it. LOW: does not.', 'HIGH: cites the policy number. LOW: does not.')
      .replace('Replies to refund requests', 'Replies to refund and return requests');
    assert.notEqual(changed, yamlText);
    const dry = await importDoc(keyB, changed, '?dry_run=true');
    assert.equal(dry.status, 200, dry.text);
    assert.equal(dry.json.dry_run, true);
    const byName = Object.fromEntries(dry.json.updated.map((u: { name: string; changes: unknown }) => [u.name, u.changes]));
    assert.deepEqual(byName['Cites policy'], [{ field: 'rubric', from: 'HIGH: cites it. LOW: does not.', to: 'HIGH: cites the policy number. LOW: does not.' }]);
    assert.deepEqual(byName['Refund replies'], [{ field: 'intent', from: 'Replies to refund requests', to: 'Replies to refund and return requests' }]);
    const before = await srv.request('GET', `/v1/judges/${dry.json.judge_id}/`, { key: keyB });
    assert.equal(before.body.intent, 'Replies to refund requests');
    const real = await importDoc(keyB, changed);
    assert.equal(real.json.updated.length, 2);
    const afterJudge = await srv.request('GET', `/v1/judges/${dry.json.judge_id}/`, { key: keyB });
    assert.equal(afterJudge.body.intent, 'Replies to refund and return requests');
    assert.equal(afterJudge.body.evaluators[0].rubric, 'HIGH: cites the policy number. LOW: does not.');
    assert.equal((await importDoc(keyB, changed)).json.updated.length, 0);
  });

  it('refuses an invalid document with one 400 naming the path of each bad field, and writes nothing', async () => {
    const bad = [
      'kind: judge',
      'format: 1',
      'judge:',
      '  name: Broken judge',
      '  intent: x',
      '  colour: red',
      '  evaluators:',
      '    - name: No rubric',
      '      intent: y',
      '    - name: Typo',
      '      intent: y',
      '      rubric: z',
      '      requires_context: true',
      '    - preset: No such preset at all',
      '      extra: 1',
      '',
    ].join('\n');
    const res = await importDoc(keyB, bad);
    assert.equal(res.status, 400, res.text);
    const fields = res.json.errors.map((e: { field: string }) => e.field).sort();
    assert.deepEqual(fields, ['judge.colour', 'judge.evaluators.0.rubric', 'judge.evaluators.1.requires_context', 'judge.evaluators.2.extra']);
    assert.match(res.json.detail, /requires_contexts/, 'suggests the known name');
    assert.equal((await srv.request('GET', `/v1/judges/${encodeURIComponent('Broken judge')}/`, { key: keyB })).status, 404);

    const unknownPreset = await importDoc(keyB, 'kind: judge\nformat: 1\njudge:\n  name: P\n  intent: x\n  evaluators:\n    - preset: No such preset\n');
    assert.equal(unknownPreset.status, 400);
    assert.equal(unknownPreset.json.errors[0].field, 'judge.evaluators.0.preset');

    const cycle = await importDoc(keyB, 'kind: judge\nformat: 1\njudge: &j\n  name: Loop\n  intent: x\n  evaluators: [*j]\n');
    assert.equal(cycle.status, 400);
    assert.match(cycle.json.detail, /alias/i);
    const dupes = await importDoc(
      keyB,
      `kind: judge\nformat: 1\njudge:\n  name: D\n  intent: x\n  evaluators:\n    - preset: ${JSON.stringify(presetName)}\n    - preset: ${JSON.stringify(presetName)}\n`,
    );
    assert.equal(dupes.status, 400);
    assert.equal(dupes.json.errors[0].field, 'judge.evaluators.1');
    assert.equal((await importDoc(keyB, 'kind: judge\n  bad: [')).status, 400);
    assert.equal((await importDoc(keyB, 'just a string')).status, 400);
    assert.equal((await importDoc(keyB, 'kind: robot\nformat: 1\n')).status, 400);
    assert.equal((await importDoc(keyB, 'name: x', '', 'text/plain')).status, 415);
    assert.equal((await importDoc(keyB, yamlText, '?dry_run=maybe')).status, 400);
    assert.equal((await importDoc(keyB, yamlText, '?project=p')).status, 400);
  });

  it('imports a single evaluator document', async () => {
    const doc = 'kind: evaluator\nformat: 1\nevaluator:\n  name: Short\n  intent: Short replies\n  rubric: "HIGH: under 50 words. LOW: rambling."\n';
    const first = await importDoc(keyA, doc);
    assert.equal(first.status, 200, first.text);
    assert.ok(first.json.evaluator_id);
    assert.equal(first.json.judge_id, null);
    assert.equal(first.json.created[0].kind, 'evaluator');
    assert.equal((await importDoc(keyA, doc)).json.unchanged.length, 1);
  });
});
