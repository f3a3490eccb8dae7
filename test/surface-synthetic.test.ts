// Synthetic test data for a judge (SPEC section 16) over REST on both stores: generated in the
// background by the (fake) judge model, checked and retried, read with GET, saved as a dataset with
// expected_scores; a pending generation resumes after a restart; bad input answers a clear 4xx.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startServerWithFakeModel } from './helpers/execute.ts';
import { toolAnswer, type FakeAnthropic, type FakeRequest } from './helpers/fake-anthropic.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { until } from './helpers/wait.ts';

let srv: TestServer;
let fake: FakeAnthropic;
let key: string;
let otherKey: string;

/** A usable answer for the evaluators named in the prompt: `count` pairs, failing each in turn. */
function answerFor(req: FakeRequest) {
  const names = [...req.prompt.matchAll(/<evaluator name="([^"]+)">/g)].map((m) => m[1]);
  const count = Number(/exactly (\d+) pairs/.exec(req.prompt)?.[1] ?? 3);
  return {
    name: 'Refund replies test set',
    description: 'Typical and hard refund requests.',
    pairs: Array.from({ length: count }, (_, i) => ({
      request: `Can I get a refund for order ${i}?`,
      high_response: `Yes: per policy 4.2 order ${i} is refundable within 30 days.`,
      low_response: `No.`,
      fails_evaluator: names[i % names.length],
      failure: 'gives no reason and cites no policy',
    })),
  };
}

/** Reads until `done` holds of what was read, and answers that. */
const readUntil = <T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> =>
  until('the synthetic data to reach the expected state', async () => {
    const value = await read();
    return done(value) ? { value } : null;
  }).then((r) => r.value);

before(async () => {
  ({ server: srv, fake } = await startServerWithFakeModel());
  fake.respondWith((req) => (req.toolName === 'write_synthetic_data' ? toolAnswer(answerFor(req)) : toolAnswer({ justification: 'fine', score: 0.9 })));
  const { createOrganization } = await import('../src/domain/orgs.ts');
  key = (await createOrganization(srv.store, { name: 'acme', isDemo: false })).api_key;
  otherKey = (await createOrganization(srv.store, { name: 'globex', isDemo: false })).api_key;
});
after(async () => {
  await srv.services.synthetic?.stop();
  await srv.close();
  await fake.close();
});

const post = (path: string, body: unknown = {}, k = key) => srv.request('POST', path, { key: k, body });
const get = (path: string, k = key) => srv.request('GET', path, { key: k });

async function makeJudge(name: string) {
  const ids = [];
  for (const e of ['Cites policy', 'Gives a reason']) {
    const res = await post('/v1/evaluators/', { name: `${e} (${name})`, intent: `${e}.`, rubric: `HIGH: ${e}. LOW: does not.` });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    ids.push(res.body.id);
  }
  const judge = await post('/v1/judges/', { name, intent: 'Replies to refund requests', stage: 'reply', evaluator_ids: ids });
  assert.equal(judge.status, 201);
  return judge.body;
}

describe('synthetic data', () => {
  it('generates in the background, covers every evaluator, and saves a dataset with expected scores', async () => {
    const judge = await makeJudge('Refunds');
    assert.equal((await get(`/v1/judges/${judge.id}/synthetic-data/`)).body.status, 'not_generated');
    // The first answer names an evaluator the judge does not have: refused and asked again.
    fake.enqueueFor('write_synthetic_data', (req) => {
      const a = answerFor(req);
      a.pairs[0].fails_evaluator = 'Politeness';
      return toolAnswer(a);
    });
    const started = await post(`/v1/judges/${judge.id}/synthetic-data/`, { count: 4 });
    assert.equal(started.status, 202, JSON.stringify(started.body));
    assert.ok(['pending', 'ready'].includes(started.body.status));
    const ready = await readUntil(
      () => get(`/v1/judges/${judge.id}/synthetic-data/`),
      (r) => r.body.status !== 'pending',
    );
    assert.equal(ready.body.status, 'ready', JSON.stringify(ready.body));
    assert.equal(ready.body.name, 'Refund replies test set');
    assert.equal(ready.body.samples.length, 8);
    assert.deepEqual(ready.body.samples.map((s: { quality: string }) => s.quality).slice(0, 2), ['high', 'low']);
    const failed = new Set(ready.body.samples.filter((s: { quality: string }) => s.quality === 'low').map((s: { fails_evaluator: string }) => s.fails_evaluator));
    assert.deepEqual([...failed].sort(), ['Cites policy (Refunds)', 'Gives a reason (Refunds)']);
    const calls = fake.requests.filter((r) => r.toolName === 'write_synthetic_data');
    assert.equal(calls.length, 2);
    assert.match(calls[1].prompt, /"Politeness" is not one of/);
    assert.match(calls[0].prompt, /Replies to refund requests/);

    const saved = await post(`/v1/judges/${judge.id}/synthetic-data/dataset/`, { name: 'Refunds golden' });
    assert.equal(saved.status, 201, JSON.stringify(saved.body));
    assert.equal(saved.body.item_count, 8);
    const items = (await get(`/v1/datasets/${saved.body.dataset_id}/items/?limit=200`)).body.results;
    assert.equal(items.length, 8);
    const [high, low] = items;
    const evaluatorIds = judge.evaluators.map((e: { id: string }) => e.id);
    assert.deepEqual(Object.keys(high.expected_scores).sort(), [...evaluatorIds].sort());
    assert.ok(Object.values(high.expected_scores).every((v) => v === 1));
    assert.deepEqual(Object.values(low.expected_scores), [0]);
    assert.deepEqual(low.tags, ['synthetic', 'low']);
  });

  it("refuses bad input clearly: another org's judge, a bad count, a dataset before data is ready", async () => {
    const judge = await makeJudge('Refunds 2');
    assert.equal((await post(`/v1/judges/${judge.id}/synthetic-data/`, {}, otherKey)).status, 404);
    assert.equal((await get(`/v1/judges/${judge.id}/synthetic-data/`, otherKey)).status, 404);
    const bad = await post(`/v1/judges/${judge.id}/synthetic-data/`, { count: 0 });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.errors[0].field, 'count');
    const early = await post(`/v1/judges/${judge.id}/synthetic-data/dataset/`);
    assert.equal(early.status, 409);
    assert.match(early.body.detail, /synthetic-data/);
  });

  it('a model that keeps answering unusably leaves not_generated with the reason', async () => {
    const judge = await makeJudge('Refunds 3');
    const wrong = (req: FakeRequest) => toolAnswer({ ...answerFor(req), pairs: [] });
    fake.enqueueFor('write_synthetic_data', wrong, wrong, wrong);
    await post(`/v1/judges/${judge.id}/synthetic-data/`, { count: 2 });
    const done = await readUntil(
      () => get(`/v1/judges/${judge.id}/synthetic-data/`),
      (r) => r.body.status !== 'pending',
    );
    assert.equal(done.body.status, 'not_generated');
    assert.match(done.body.error, /unusable answer/);
  });

  it('a pending generation resumes when a server starts on the same store (restart)', async () => {
    const judge = await makeJudge('Refunds 4');
    const orgId = (await srv.store.getJudge(judge.id))!.org_id;
    const keyRecord = (await srv.store.listApiKeys(orgId, { limit: 1 })).items[0];
    const now = new Date().toISOString();
    // What a crash leaves: the record stored as pending, no process working on it.
    await srv.store.putSyntheticData({
      judge_id: judge.id,
      org_id: keyRecord.org_id,
      key_id: keyRecord.id,
      status: 'pending',
      count: 2,
      name: '',
      description: '',
      samples: [],
      error: null,
      created_at: now,
      updated_at: now,
    });
    const restarted = await startTestServer({ ANTHROPIC_API_KEY: 'sk-ant-test-dummy', ANTHROPIC_BASE_URL: fake.url, TRIBUNAL_MODEL: 'claude-sonnet-4-5' }, { store: srv.store });
    try {
      const done = await readUntil(
        () => restarted.request('GET', `/v1/judges/${judge.id}/synthetic-data/`, { key }),
        (r) => r.body.status !== 'pending',
      );
      assert.equal(done.body.status, 'ready');
      assert.equal(done.body.samples.length, 4);
    } finally {
      await restarted.services.synthetic?.stop();
      await restarted.close();
    }
  });

  it('without a judge model: 503 model_unavailable, nothing stored', async () => {
    const bare = await startTestServer({ ANTHROPIC_API_KEY: '' });
    try {
      const { createOrganization } = await import('../src/domain/orgs.ts');
      const k = (await createOrganization(bare.store, { name: 'solo', isDemo: false })).api_key;
      const e = await bare.request('POST', '/v1/evaluators/', { key: k, body: { name: 'E', intent: 'e', rubric: 'HIGH: e. LOW: not.' } });
      const j = await bare.request('POST', '/v1/judges/', { key: k, body: { name: 'J', intent: 'j', evaluator_ids: [e.body.id] } });
      const res = await bare.request('POST', `/v1/judges/${j.body.id}/synthetic-data/`, { key: k, body: {} });
      assert.equal(res.status, 503);
      assert.equal(res.body.code, 'model_unavailable');
      assert.equal((await bare.request('GET', `/v1/judges/${j.body.id}/synthetic-data/`, { key: k })).body.status, 'not_generated');
    } finally {
      await bare.close();
    }
  });
});
