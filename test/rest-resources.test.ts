// The REST resources of SPEC section 2 (all but execute and generate), over real HTTP.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { until } from './helpers/wait.ts';

let srv: TestServer;
let keyA: string; // a real (non-demo) organization
let keyB: string; // another real organization
let demo: { api_key: string; organization_id: string; project_id: string };

async function realOrgKey(name: string): Promise<string> {
  const { createOrganization } = await import('../src/domain/orgs.ts');
  return (await createOrganization(srv.store, { name, isDemo: false })).api_key;
}

before(async () => {
  srv = await startTestServer();
  keyA = await realOrgKey('acme');
  keyB = await realOrgKey('globex');
  demo = await srv.demoUser();
});
after(() => srv.close());

const evaluatorBody = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  intent: 'Checks that the answer is polite.',
  rubric: 'HIGH: polite throughout. MIDDLING: curt. LOW: rude.',
  ...extra,
});

describe('demo users and keys', () => {
  it('creates a demo organization with a default project and an expiring key', async () => {
    assert.match(demo.api_key, /^trb_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
    const hours = (Date.parse((demo as { expires_at?: string }).expires_at ?? '') - Date.now()) / 3_600_000;
    assert.ok(hours > 23.9 && hours <= 24, `demo key lifetime ${hours} h`);
    const projects = await srv.request('GET', '/v1/projects/', { key: demo.api_key });
    assert.equal(projects.status, 200);
    assert.equal(projects.body.results.length, 1);
    assert.equal(projects.body.results[0].id, demo.project_id);
    assert.equal(projects.body.results[0].is_default, true);
  });

  it('accepts Api-Key and Bearer, and answers 401 problem+json for every bad key', async () => {
    const good = demo.api_key;
    for (const header of [`Api-Key ${good}`, `Bearer ${good}`, `bearer ${good}`]) {
      const res = await srv.request('GET', '/v1/judges/', { headers: { authorization: header } });
      assert.equal(res.status, 200, header);
    }
    const bad = [
      undefined,
      '',
      'Basic abc',
      'Api-Key',
      'Bearer not-a-key',
      `Api-Key ${good}x`,
      `Api-Key ${good.slice(0, -1)}${good.endsWith('A') ? 'B' : 'A'}`,
      'Api-Key trb_0000000000000000_' + 'A'.repeat(43),
    ];
    for (const header of bad) {
      const res = await srv.request('GET', '/v1/judges/', { headers: header === undefined ? {} : { authorization: header } });
      assert.equal(res.status, 401, String(header));
      assert.match(res.headers.get('content-type') ?? '', /application\/problem\+json/);
      assert.equal(res.body.code, 'not_authenticated');
      assert.equal(res.body.status, 401);
      assert.ok(res.headers.get('www-authenticate'));
      assert.ok(!JSON.stringify(res.body).includes(good), 'the key is never echoed');
    }
  });

  it('lists, creates and revokes keys; a revoked key stops working and secrets are never listed', async () => {
    const created = await srv.request('POST', '/v1/api-keys/', { key: keyA, body: { name: 'ci' } });
    assert.equal(created.status, 201);
    assert.match(created.body.api_key, /^trb_/);
    assert.equal(created.body.api_key.startsWith(created.body.prefix), true);
    assert.equal(created.body.expires_at, null);
    const useIt = await srv.request('GET', '/v1/judges/', { key: created.body.api_key });
    assert.equal(useIt.status, 200);
    const listed = await srv.request('GET', '/v1/api-keys/', { key: keyA });
    assert.equal(listed.status, 200);
    const names = listed.body.results.map((k: { name: string }) => k.name);
    assert.deepEqual(names, ['ci', 'first key']);
    assert.ok(!JSON.stringify(listed.body).includes(created.body.api_key));
    assert.ok(!('hash' in listed.body.results[0]));
    const ciKey = listed.body.results[0];
    // last_used_at is written beside the request, not before its answer (auth.ts): read until it lands.
    const used = await until(
      'last_used_at to be recorded',
      async () => {
        const keys = (await srv.request('GET', '/v1/api-keys/', { key: keyA })).body.results;
        return keys.find((k: { id: string; last_used_at: string | null }) => k.id === ciKey.id)?.last_used_at;
      },
      10_000,
    );
    assert.ok(used, 'last_used_at is recorded');
    // another org cannot revoke it
    assert.equal((await srv.request('DELETE', `/v1/api-keys/${ciKey.id}/`, { key: keyB })).status, 404);
    const revoked = await srv.request('DELETE', `/v1/api-keys/${ciKey.id}/`, { key: keyA });
    assert.equal(revoked.status, 200);
    assert.ok(revoked.body.revoked_at);
    const after = await srv.request('GET', '/v1/judges/', { key: created.body.api_key });
    assert.equal(after.status, 401);
    assert.match(after.body.detail, /revoked/);
  });

  it('refuses an expired key', async () => {
    const { mintApiKey } = await import('../src/auth.ts');
    const { secret, record } = mintApiKey(demo.organization_id, 'old', new Date(Date.now() - 1000).toISOString());
    await srv.store.createApiKey(record);
    const res = await srv.request('GET', '/v1/judges/', { key: secret });
    assert.equal(res.status, 401);
    assert.match(res.body.detail, /expired/);
  });
});

describe('evaluators', () => {
  it('lists the presets: at least 30, public, read-only, with real rubrics', async () => {
    const res = await srv.request('GET', '/v1/evaluators/?is_preset=true&limit=200', { key: keyA });
    assert.equal(res.status, 200);
    assert.ok(res.body.results.length >= 30, `${res.body.results.length} presets`);
    for (const p of res.body.results) {
      assert.equal(p.is_preset, true);
      assert.equal(p.visibility, 'public');
      // Model-graded presets carry a real rubric; check and code presets describe their rules instead.
      if (p.kind === 'check' || p.kind === 'code') continue;
      assert.match(p.rubric, /high/i);
      assert.match(p.rubric, /low/i);
    }
    assert.ok(res.body.results.filter((p: { kind?: string }) => p.kind !== 'check' && p.kind !== 'code').length >= 30, 'at least 30 model-graded presets');
    const faith = res.body.results.find((p: { name: string }) => p.name === 'Faithfulness');
    assert.equal(faith.requires_contexts, true);
    const edit = await srv.request('PATCH', `/v1/evaluators/${faith.id}/`, { key: keyA, body: { rubric: 'x' } });
    assert.equal(edit.status, 403);
    assert.equal(edit.body.code, 'permission_denied');
    assert.equal((await srv.request('DELETE', `/v1/evaluators/${faith.id}/`, { key: keyA })).status, 403);
  });

  it('creates, reads, versions and deletes an evaluator', async () => {
    const created = await srv.request('POST', '/v1/evaluators/', { key: keyA, body: evaluatorBody('Polite') });
    assert.equal(created.status, 201);
    const ev = created.body;
    assert.equal(ev.version, 1);
    assert.equal(ev.visibility, 'private');
    assert.equal(ev.is_preset, false);
    assert.ok(ev.project_id.startsWith('prj_'));

    const v2 = await srv.request('PATCH', `/v1/evaluators/${ev.id}/`, { key: keyA, body: { rubric: 'HIGH: always polite. LOW: rude.' } });
    assert.equal(v2.status, 200);
    assert.equal(v2.body.version, 2);
    const same = await srv.request('PATCH', `/v1/evaluators/${ev.id}/`, { key: keyA, body: { rubric: 'HIGH: always polite. LOW: rude.' } });
    assert.equal(same.body.version, 2, 'no change, no new version');

    const old = await srv.request('GET', `/v1/evaluators/${ev.id}/?version=1`, { key: keyA });
    assert.equal(old.status, 200);
    assert.equal(old.body.rubric, evaluatorBody('x').rubric);
    const versions = await srv.request('GET', `/v1/evaluators/${ev.id}/versions/`, { key: keyA });
    assert.deepEqual(
      versions.body.results.map((v: { version: number }) => v.version),
      [2, 1],
    );
    assert.equal((await srv.request('GET', `/v1/evaluators/${ev.id}/?version=9`, { key: keyA })).status, 404);

    const byName = await srv.request('POST', '/v1/evaluators/', { key: keyA, body: evaluatorBody('Polite') });
    assert.equal(byName.status, 409, 'names are unique in an organization');

    const del = await srv.request('DELETE', `/v1/evaluators/${ev.id}/`, { key: keyA });
    assert.equal(del.status, 200);
    assert.equal((await srv.request('GET', `/v1/evaluators/${ev.id}/`, { key: keyA })).status, 404);
  });

  it('checks demonstrations against the required inputs', async () => {
    const res = await srv.request('POST', '/v1/evaluators/', {
      key: keyA,
      body: evaluatorBody('Grounded', { requires_contexts: true, demonstrations: [{ response: 'x', score: 1 }] }),
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.errors[0].field, 'demonstrations.0.contexts');
  });
});

describe('visibility between organizations', () => {
  it('hides private resources (404), shows public ones read-only, and demo resources are public', async () => {
    const priv = (await srv.request('POST', '/v1/evaluators/', { key: keyA, body: evaluatorBody('Secret sauce') })).body;
    const pub = (await srv.request('POST', '/v1/evaluators/', { key: keyA, body: evaluatorBody('Shared tone', { visibility: 'public' }) })).body;
    const privJudge = (await srv.request('POST', '/v1/judges/', { key: keyA, body: { name: 'Private judge', intent: 'x', evaluator_ids: [priv.id] } })).body;
    assert.equal(privJudge.visibility, 'private');

    assert.equal((await srv.request('GET', `/v1/evaluators/${priv.id}/`, { key: keyB })).status, 404);
    assert.equal((await srv.request('GET', `/v1/judges/${privJudge.id}/`, { key: keyB })).status, 404);
    assert.equal((await srv.request('PATCH', `/v1/judges/${privJudge.id}/`, { key: keyB, body: { name: 'mine' } })).status, 404);
    assert.equal((await srv.request('DELETE', `/v1/judges/${privJudge.id}/`, { key: keyB })).status, 404);
    const listB = await srv.request('GET', '/v1/judges/?limit=200', { key: keyB });
    assert.ok(!listB.body.results.some((j: { id: string }) => j.id === privJudge.id));

    assert.equal((await srv.request('GET', `/v1/evaluators/${pub.id}/`, { key: keyB })).status, 200);
    const editPub = await srv.request('PATCH', `/v1/evaluators/${pub.id}/`, { key: keyB, body: { intent: 'hijacked' } });
    assert.equal(editPub.status, 403);

    // B may use A's public evaluator in its own judge, not A's private one
    const useB = await srv.request('POST', '/v1/judges/', { key: keyB, body: { name: 'B judge', intent: 'x', evaluator_ids: [pub.id, 'Clarity'] } });
    assert.equal(useB.status, 201);
    const usePriv = await srv.request('POST', '/v1/judges/', { key: keyB, body: { name: 'B judge 2', intent: 'x', evaluator_ids: [priv.id] } });
    assert.equal(usePriv.status, 400);
    assert.equal(usePriv.body.errors[0].field, 'evaluator_ids.0');

    // A public judge may not expose a private evaluator
    const leak = await srv.request('POST', '/v1/judges/', { key: keyA, body: { name: 'Leaky', intent: 'x', evaluator_ids: [priv.id], visibility: 'public' } });
    assert.equal(leak.status, 400);

    const demoJudge = await srv.request('POST', '/v1/judges/', { key: demo.api_key, body: { name: 'Demo judge', intent: 'x', evaluator_ids: ['Clarity'], visibility: 'private' } });
    assert.equal(demoJudge.status, 201);
    assert.equal(demoJudge.body.visibility, 'public');
    assert.equal((await srv.request('GET', `/v1/judges/${demoJudge.body.id}/`, { key: keyB })).status, 200);
    const onlyMine = await srv.request('GET', '/v1/judges/?include_public=false', { key: keyB });
    assert.ok(!onlyMine.body.results.some((j: { id: string }) => j.id === demoJudge.body.id));
    // issue 26: lists default to the caller's own organization (plus the presets, for evaluators);
    // other organizations' public ones come only with include_public=true.
    const byDefault = await srv.request('GET', '/v1/judges/?limit=200', { key: keyB });
    assert.ok(!byDefault.body.results.some((j: { id: string }) => j.id === demoJudge.body.id), "a demo user's public judge is not in a new org's list");
    assert.ok(byDefault.body.results.some((j: { name: string }) => j.name === 'B judge'));
    const withPublic = await srv.request('GET', '/v1/judges/?include_public=true&limit=200', { key: keyB });
    assert.ok(withPublic.body.results.some((j: { id: string }) => j.id === demoJudge.body.id));
    const evaluators = await srv.request('GET', '/v1/evaluators/?limit=200', { key: keyB });
    assert.ok(!evaluators.body.results.some((e: { id: string }) => e.id === pub.id), "another org's public evaluator is not listed by default");
    assert.ok(
      evaluators.body.results.some((e: { name: string; is_preset: boolean }) => e.name === 'Clarity' && e.is_preset),
      'the presets are',
    );
    const allEvaluators = await srv.request('GET', '/v1/evaluators/?include_public=true&limit=200', { key: keyB });
    assert.ok(allEvaluators.body.results.some((e: { id: string }) => e.id === pub.id));
    // Names still reach others' public resources (a name is explicit): run and get by name work.
    assert.equal((await srv.request('GET', `/v1/judges/${demoJudge.body.id}/`, { key: keyB })).status, 200);
  });

  it("rejects another organization's project_id", async () => {
    const projB = (await srv.request('POST', '/v1/projects/', { key: keyB, body: { name: 'B project' } })).body;
    const res = await srv.request('POST', '/v1/judges/', { key: keyA, body: { name: 'x', intent: 'x', evaluator_ids: ['Clarity'], project_id: projB.id } });
    assert.equal(res.status, 400);
    assert.equal(res.body.errors[0].field, 'project_id');
    const list = await srv.request('GET', `/v1/judges/?project_id=${projB.id}`, { key: keyA });
    assert.equal(list.status, 400);
  });
});

describe('judges', () => {
  it('creates, reads in full, edits with versions, pins, and deletes', async () => {
    const proj = (await srv.request('POST', '/v1/projects/', { key: keyA, body: { name: 'Support bot', description: 'tier 1' } })).body;
    assert.equal(proj.is_default, false);
    const ev = (await srv.request('POST', '/v1/evaluators/', { key: keyA, body: evaluatorBody('Brand voice', { project_id: proj.id }) })).body;
    const created = await srv.request('POST', '/v1/judges/', {
      key: keyA,
      body: { name: 'Support answers', intent: 'Answers of the support bot', stage: 'answer', evaluator_ids: ['Faithfulness', ev.id], project_id: proj.id },
    });
    assert.equal(created.status, 201);
    const judge = created.body;
    assert.equal(judge.project_id, proj.id);
    assert.deepEqual(
      judge.evaluators.map((e: { name: string }) => e.name),
      ['Faithfulness', 'Brand voice'],
    );

    const full = await srv.request('GET', `/v1/judges/${judge.id}/`, { key: keyA });
    assert.equal(full.status, 200);
    assert.equal(full.body.evaluators[0].requires_contexts, true);
    assert.match(full.body.evaluators[1].rubric, /polite/);

    const byName = await srv.request('GET', `/v1/judges/${judge.id}/?version=1`, { key: keyA });
    assert.equal(byName.body.version, 1);

    const edited = await srv.request('PATCH', `/v1/judges/${judge.id}/`, { key: keyA, body: { evaluator_ids: [ev.id], pin_versions: true } });
    assert.equal(edited.status, 200);
    assert.equal(edited.body.version, 2);
    assert.deepEqual(edited.body.evaluators, [{ id: ev.id, name: 'Brand voice', version: 1 }]);
    await srv.request('PATCH', `/v1/evaluators/${ev.id}/`, { key: keyA, body: { intent: 'Brand voice, v2' } });
    const pinned = await srv.request('GET', `/v1/judges/${judge.id}/`, { key: keyA });
    assert.equal(pinned.body.evaluators[0].version, 1, 'the pinned version is what the judge applies');
    assert.equal(pinned.body.evaluators[0].intent, evaluatorBody('x').intent);

    const v1 = await srv.request('GET', `/v1/judges/${judge.id}/?version=1`, { key: keyA });
    assert.equal(v1.body.evaluators.length, 2, 'the old version stays readable');
    const versions = await srv.request('GET', `/v1/judges/${judge.id}/versions/`, { key: keyA });
    assert.deepEqual(
      versions.body.results.map((v: { version: number }) => v.version),
      [2, 1],
    );

    const inUse = await srv.request('DELETE', `/v1/evaluators/${ev.id}/`, { key: keyA });
    assert.equal(inUse.status, 409);
    assert.match(inUse.body.detail, /Support answers/);

    const filtered = await srv.request('GET', `/v1/judges/?project_id=${proj.id}`, { key: keyA });
    assert.deepEqual(
      filtered.body.results.map((j: { id: string }) => j.id),
      [judge.id],
    );
    const searched = await srv.request('GET', '/v1/judges/?search=SUPPORT', { key: keyA });
    assert.ok(searched.body.results.some((j: { id: string }) => j.id === judge.id));

    assert.equal((await srv.request('DELETE', `/v1/judges/${judge.id}/`, { key: keyA })).status, 200);
    assert.equal((await srv.request('GET', `/v1/judges/${judge.id}/`, { key: keyA })).status, 404);
  });

  it('pages newest first with opaque cursors, default 50 and at most 200', async () => {
    const org = await realOrgKey('pager');
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      ids.push((await srv.request('POST', '/v1/judges/', { key: org, body: { name: `J${i}`, intent: 'x', evaluator_ids: ['Clarity'] } })).body.id);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await srv.request('GET', `/v1/judges/?include_public=false&limit=3${cursor ? `&cursor=${cursor}` : ''}`, { key: org });
      assert.equal(res.status, 200);
      assert.ok(res.body.results.length <= 3);
      seen.push(...res.body.results.map((j: { id: string }) => j.id));
      cursor = res.body.next_cursor;
    } while (cursor);
    assert.deepEqual(seen, [...ids].reverse());
    const tooBig = await srv.request('GET', '/v1/judges/?limit=201', { key: org });
    assert.equal(tooBig.status, 400);
    assert.equal(tooBig.body.errors[0].field, 'limit');
  });
});

describe('execution logs (reads)', () => {
  it('lists nothing yet, validates filters, and 404s unknown ids', async () => {
    const res = await srv.request('GET', '/v1/execution-logs/', { key: keyB });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { results: [], next_cursor: null });
    assert.equal((await srv.request('GET', '/v1/execution-logs/?min_score=0.9&max_score=0.1', { key: keyB })).status, 400);
    assert.equal((await srv.request('GET', '/v1/execution-logs/?date_from=yesterday', { key: keyB })).status, 400);
    assert.equal((await srv.request('GET', '/v1/execution-logs/?min_score=abc', { key: keyB })).status, 400);
    assert.equal((await srv.request('GET', '/v1/execution-logs/log_0/', { key: keyB })).status, 404);
  });
});

describe('service endpoints', () => {
  it('serves /healthz without auth and an OpenAPI 3.1 document of every route', async () => {
    const health = await srv.request('GET', '/healthz');
    assert.equal(health.status, 200);
    assert.equal(health.body.store.status, 'up');
    const doc = await srv.request('GET', '/v1/openapi.json');
    assert.equal(doc.status, 200);
    assert.equal(doc.body.openapi, '3.1.0');
    for (const path of [
      '/v1/judges/',
      '/v1/judges/{judge_id}/',
      '/v1/judges/{judge_id}/execute/',
      '/v1/judges/generate/',
      '/v1/evaluators/',
      '/v1/evaluators/{evaluator_id}/execute/',
      '/v1/projects/',
      '/v1/execution-logs/',
      '/v1/execution-logs/{log_id}/',
      '/v1/api-keys/',
      '/v1/api-keys/{key_id}/',
      '/create-demo-user/',
    ]) {
      assert.ok(doc.body.paths[path], `OpenAPI documents ${path}`);
    }
    const create = doc.body.paths['/v1/judges/'].post.requestBody.content['application/json'].schema;
    assert.deepEqual(create.required.sort(), ['evaluator_ids', 'intent', 'name']);
    const listParams = doc.body.paths['/v1/execution-logs/'].get.parameters.map((p: { name: string }) => p.name);
    for (const f of ['judge_id', 'evaluator_id', 'project_id', 'min_score', 'max_score', 'min_cost', 'max_cost', 'tags', 'date_from', 'date_to', 'limit', 'cursor'])
      assert.ok(listParams.includes(f), f);
  });
});
