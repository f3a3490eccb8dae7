// Review queues over real HTTP (SPEC section 17): CRUD, items by hand, leases (never twice to one
// person, never to more people than asked, expiry, skip), submitting, agreement, disagreements and
// adjudication; bad input gets clear 4xx. TRIBUNAL_TEST_STORE=postgres runs it on PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { krippendorffAlphaInterval } from '../src/review/alpha.ts';
import type { ExecutionLogRecord } from '../src/store/types.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { log } from './store-contract.ts';

let srv: TestServer;
let keyA: string;
let orgA: string;
let keyB: string;
const extraKeys: string[] = [];
let GROUNDED: string;
let POLITE: string;

const result = (id: string, name: string, score: number) => ({
  evaluator_id: id,
  evaluator_name: name,
  evaluator_version: 1,
  score,
  justification: 'because the judge said so',
  model: 'claude-sonnet-4-5',
  input_tokens: 10,
  output_tokens: 5,
  cost_usd: 0.001,
  latency_ms: 12,
});

async function runLog(orgId: string, response = 'At 9am.'): Promise<ExecutionLogRecord> {
  const l = log(orgId, {
    type: 'evaluator',
    judge_id: null,
    judge_name: null,
    judge_version: null,
    request: 'When does the store open?',
    response,
    evaluator_results: [result(GROUNDED, 'Grounded', 0.9), result(POLITE, 'Polite', 0.4)],
    created_at: new Date().toISOString(),
  });
  await srv.store.appendExecutionLog(l);
  return l;
}

const req = (method: string, path: string, key: string, body?: unknown) => srv.request(method, path, { key, body });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function newQueue(body: Record<string, unknown>, key = keyA) {
  const res = await req('POST', '/v1/review-queues/', key, { name: `q ${Math.random()}`, evaluator_ids: [GROUNDED, POLITE], ...body });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body;
}
async function addLogs(queueId: string, n: number) {
  const logs = [];
  for (let i = 0; i < n; i++) logs.push(await runLog(orgA, `answer ${i}`));
  const res = await req('POST', `/v1/review-queues/${queueId}/items/`, keyA, { execution_log_ids: logs.map((l) => l.id) });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.added as Array<{ item_id: string; execution_log_id: string }>;
}
const next = (queueId: string, key: string) => req('POST', `/v1/review-queues/${queueId}/next/`, key, {});
const submit = (queueId: string, itemId: string, key: string, g: number, p: number) =>
  req('POST', `/v1/review-queues/${queueId}/items/${itemId}/annotations/`, key, {
    annotations: [
      { evaluator_id: GROUNDED, score: g },
      { evaluator_id: 'Polite', score: p, note: 'fine' },
    ],
  });

before(async () => {
  srv = await startTestServer();
  const { createOrganization } = await import('../src/domain/orgs.ts');
  const a = await createOrganization(srv.store, { name: 'acme', isDemo: false });
  const b = await createOrganization(srv.store, { name: 'globex', isDemo: false });
  [keyA, orgA, keyB] = [a.api_key, a.organization.id, b.api_key];
  for (let i = 0; i < 3; i++) {
    const k = await req('POST', '/v1/api-keys/', keyA, { name: `reviewer ${i}` });
    assert.equal(k.status, 201, JSON.stringify(k.body));
    extraKeys.push(k.body.api_key);
  }
  const rubric = 'A high score when the answer is right; a low score when it is wrong or invented.';
  const g = await req('POST', '/v1/evaluators/', keyA, { name: 'Grounded', intent: 'Is the answer supported by the contexts?', rubric });
  const p = await req('POST', '/v1/evaluators/', keyA, { name: 'Polite', intent: 'Is the answer polite?', rubric });
  assert.equal(g.status, 201, JSON.stringify(g.body));
  [GROUNDED, POLITE] = [g.body.id, p.body.id];
});
after(() => srv.close());

describe('review queues', () => {
  it('creates, reads, lists, edits and deletes a queue; refuses bad input and other organizations', async () => {
    const q = await newQueue({ annotators_per_item: 2, sources: { sample_rate: 0.1 } });
    assert.match(q.id, /^rvq_/);
    assert.deepEqual(q.evaluator_ids, [GROUNDED, POLITE]);
    assert.equal(q.lease_seconds, 600);
    assert.deepEqual(q.counts, { queued: 0, leased: 0, done: 0, skipped: 0 });
    assert.deepEqual(
      q.agreement.map((a: { alpha: unknown }) => a.alpha),
      [null, null],
    );

    const list = await req('GET', '/v1/review-queues/', keyA);
    assert.ok(list.body.results.some((x: { id: string }) => x.id === q.id));
    const patched = await req('PATCH', `/v1/review-queues/${q.id}/`, keyA, { name: 'renamed', annotators_per_item: 3 });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.equal(patched.body.name, 'renamed');
    const shrink = await req('PATCH', `/v1/review-queues/${q.id}/`, keyA, { annotators_per_item: 1 });
    assert.equal(shrink.status, 400);

    for (const bad of [{ annotators_per_item: 6 }, { annotators_per_item: 0 }, { judge_id: 'x', evaluator_ids: [GROUNDED] }, { evaluator_ids: undefined }]) {
      const res = await req('POST', '/v1/review-queues/', keyA, { name: 'bad', evaluator_ids: [GROUNDED], ...bad });
      assert.equal(res.status, 400, JSON.stringify(bad));
      assert.equal(res.body.code, 'validation_error');
    }
    // Another organization sees nothing.
    for (const [m, p] of [
      ['GET', `/v1/review-queues/${q.id}/`],
      ['POST', `/v1/review-queues/${q.id}/next/`],
      ['DELETE', `/v1/review-queues/${q.id}/`],
    ] as const) {
      const res = await req(m, p, keyB, m === 'POST' ? {} : undefined);
      assert.equal(res.status, 404, `${m} ${p}`);
    }
    const b = await req('POST', '/v1/review-queues/', keyB, { name: 'b', evaluator_ids: [] });
    assert.equal(b.status, 400);

    assert.equal((await req('DELETE', `/v1/review-queues/${q.id}/`, keyA)).status, 200);
    assert.equal((await req('GET', `/v1/review-queues/${q.id}/`, keyA)).status, 404);
  });

  it('adds runs by hand once each, and refuses foreign or unfitting logs', async () => {
    const q = await newQueue({});
    const [item] = await addLogs(q.id, 1);
    assert.match(item.item_id, /^rvi_/);
    const again = await req('POST', `/v1/review-queues/${q.id}/items/`, keyA, { execution_log_ids: [item.execution_log_id] });
    assert.equal(again.status, 201);
    assert.deepEqual(again.body.added, []);
    assert.deepEqual(again.body.already_queued, [item.execution_log_id]);
    const { createOrganization } = await import('../src/domain/orgs.ts');
    const other = await createOrganization(srv.store, { name: 'initech', isDemo: false });
    const foreign = await runLog(other.organization.id);
    const res = await req('POST', `/v1/review-queues/${q.id}/items/`, keyA, { execution_log_ids: [foreign.id] });
    assert.equal(res.status, 404);
    const items = await req('GET', `/v1/review-queues/${q.id}/items/`, keyA);
    assert.equal(items.body.results.length, 1);
    assert.equal(items.body.results[0].status, 'queued');
  });

  it('leases never twice to one person and never to more people than asked; submitting completes the lease once', async () => {
    const q = await newQueue({ annotators_per_item: 2 });
    const items = await addLogs(q.id, 3);
    const [k1, k2, k3] = extraKeys;
    const a = await next(q.id, k1);
    assert.equal(a.status, 200, JSON.stringify(a.body));
    assert.equal(a.body.item_id, items[0].item_id);
    assert.ok(Date.parse(a.body.lease_expires_at) > Date.now());
    // The judge's scores and justifications are hidden until the person has scored.
    assert.equal(a.body.log.evaluator_results[0].justification, null);
    assert.equal(a.body.log.evaluator_results[0].score, null);
    assert.equal(a.body.log.response, 'answer 0');
    const a2 = await next(q.id, k1);
    assert.equal(a2.body.item_id, items[1].item_id, 'the same person gets another item');
    const b = await next(q.id, k2);
    assert.equal(b.body.item_id, items[0].item_id, 'a second person gets the first item');
    const c = await next(q.id, k3);
    assert.equal(c.body.item_id, items[1].item_id, 'the first item has its two people');

    const counts = (await req('GET', `/v1/review-queues/${q.id}/`, keyA)).body.counts;
    assert.deepEqual(counts, { queued: 1, leased: 2, done: 0, skipped: 0 });

    assert.equal((await submit(q.id, items[0].item_id, k1, 1, 0.5)).status, 201);
    const twice = await submit(q.id, items[0].item_id, k1, 1, 0.5);
    assert.equal(twice.status, 409);
    assert.match(twice.body.detail, /already annotated/);
    const notMine = await submit(q.id, items[0].item_id, k3, 1, 0.5);
    assert.equal(notMine.status, 409);
    assert.match(notMine.body.detail, /not leased to you/);
    const partial = await req('POST', `/v1/review-queues/${q.id}/items/${items[0].item_id}/annotations/`, k2, { annotations: [{ evaluator_id: GROUNDED, score: 1 }] });
    assert.equal(partial.status, 400);
    assert.match(partial.body.detail, /missing/);
    const unknownItem = await submit(q.id, 'rvi_nope', k2, 1, 1);
    assert.equal(unknownItem.status, 404);
    assert.equal((await submit(q.id, items[0].item_id, k2, 0.8, 0.5)).status, 201);

    const done = (await req('GET', `/v1/review-queues/${q.id}/`, keyA)).body.counts;
    assert.deepEqual(done, { queued: 1, leased: 1, done: 1, skipped: 0 });
    // Person 1 has items 0 (done) and 1 (leased): next is item 2; then nothing is left for them.
    assert.equal((await next(q.id, k1)).body.item_id, items[2].item_id);
    const none = await next(q.id, k1);
    assert.equal(none.status, 204);
  });

  it('an expired lease returns the item to the queue and cannot be submitted; a skip gives it back with its reason', async () => {
    const q = await newQueue({ lease_seconds: 1 });
    const [item] = await addLogs(q.id, 1);
    const [k1, k2, k3] = extraKeys;
    assert.equal((await next(q.id, k1)).body.item_id, item.item_id);
    assert.equal((await next(q.id, k2)).status, 204, 'one person asked for, and it is leased');
    await sleep(1300);
    const late = await submit(q.id, item.item_id, k1, 1, 1);
    assert.equal(late.status, 409);
    assert.match(late.body.detail, /expired/);
    const b = await next(q.id, k2);
    assert.equal(b.body.item_id, item.item_id, 'back in the queue after expiry');
    const skip = await req('POST', `/v1/review-queues/${q.id}/items/${item.item_id}/skip/`, k2, { reason: 'I cannot judge French' });
    assert.equal(skip.status, 200, JSON.stringify(skip.body));
    assert.equal((await req('POST', `/v1/review-queues/${q.id}/items/${item.item_id}/skip/`, k2, { reason: 'again' })).status, 409);
    assert.equal((await req('POST', `/v1/review-queues/${q.id}/items/${item.item_id}/skip/`, k2, {})).status, 400);
    assert.equal((await next(q.id, k2)).status, 204, 'a person who skipped does not get it again');
    assert.deepEqual((await req('GET', `/v1/review-queues/${q.id}/`, keyA)).body.counts, { queued: 0, leased: 0, done: 0, skipped: 1 });
    assert.equal((await next(q.id, k3)).body.item_id, item.item_id);
    assert.equal((await submit(q.id, item.item_id, k3, 0.5, 0.5)).status, 201);
    assert.equal((await next(q.id, k1)).status, 204, 'done: nobody else is asked');
  });

  it("computes Krippendorff's alpha per evaluator, lists disagreements and adjudicates into annotations", async () => {
    const q = await newQueue({ annotators_per_item: 2 });
    const items = await addLogs(q.id, 3);
    const [k1, k2] = extraKeys;
    const scores: Record<string, Array<[number, number]>> = {
      [k1]: [
        [1, 0.5],
        [0.2, 0.5],
        [0.9, 1],
      ],
      [k2]: [
        [0.9, 0.5],
        [0.8, 0.5],
        [1, 0.5],
      ],
    };
    for (const k of [k1, k2]) {
      for (let i = 0; i < 3; i++) {
        const got = await next(q.id, k);
        assert.equal(got.body.item_id, items[i].item_id);
        assert.equal((await submit(q.id, got.body.item_id, k, ...scores[k][i])).status, 201);
      }
    }
    const read = (await req('GET', `/v1/review-queues/${q.id}/`, keyA)).body;
    assert.deepEqual(read.counts, { queued: 0, leased: 0, done: 3, skipped: 0 });
    const expected = krippendorffAlphaInterval([0, 1, 2].map((i) => [scores[k1][i][0], scores[k2][i][0]]));
    const grounded = read.agreement.find((a: { evaluator_id: string }) => a.evaluator_id === GROUNDED);
    assert.equal(grounded.n_items, 3);
    assert.equal(grounded.n_annotations, 6);
    assert.ok(Math.abs(grounded.alpha - expected.alpha!) < 1e-12);
    assert.ok(grounded.alpha < 0.5, 'item 2 splits the people');

    const dis = await req('GET', `/v1/review-queues/${q.id}/disagreements/?min_spread=0.3`, keyA);
    assert.equal(dis.status, 200);
    assert.equal(dis.body.total, 2, JSON.stringify(dis.body));
    assert.equal(dis.body.results[0].item_id, items[1].item_id);
    assert.ok(Math.abs(dis.body.results[0].spread - 0.6) < 1e-9);

    const adj = await req('POST', `/v1/review-queues/${q.id}/items/${items[1].item_id}/adjudicate/`, keyA, { scores: [{ evaluator_id: GROUNDED, score: 0.7 }] });
    assert.equal(adj.status, 200, JSON.stringify(adj.body));
    const anns = await req('GET', `/v1/annotations/?execution_log_id=${items[1].execution_log_id}`, keyA);
    const byEval = Object.fromEntries(anns.body.results.map((a: { evaluator_id: string; score: number }) => [a.evaluator_id, a.score]));
    assert.deepEqual(byEval, { [GROUNDED]: 0.7, [POLITE]: 0.5 }, 'the decided score, and the mean where none was given');
    // Adjudicating again edits the annotations, never adds a second.
    assert.equal((await req('POST', `/v1/review-queues/${q.id}/items/${items[1].item_id}/adjudicate/`, keyA, { scores: [{ evaluator_id: GROUNDED, score: 0.6 }] })).status, 200);
    const again = await req('GET', `/v1/annotations/?execution_log_id=${items[1].execution_log_id}&evaluator_id=${GROUNDED}`, keyA);
    assert.deepEqual(
      again.body.results.map((a: { score: number }) => a.score),
      [0.6],
    );
    const after = await req('GET', `/v1/review-queues/${q.id}/disagreements/?min_spread=0.3`, keyA);
    assert.equal(after.body.total, 1, 'an adjudicated item leaves the list');
  });

  it('hands each lease out exactly once to many concurrent reviewers', async () => {
    const q = await newQueue({});
    const items = await addLogs(q.id, 4);
    const keys: string[] = [];
    for (let i = 0; i < 8; i++) keys.push((await req('POST', '/v1/api-keys/', keyA, { name: `crowd ${i}` })).body.api_key);
    const answers = await Promise.all(keys.map((k) => next(q.id, k)));
    const got = answers
      .filter((a) => a.status === 200)
      .map((a) => a.body.item_id)
      .sort();
    assert.deepEqual(got, items.map((i) => i.item_id).sort(), 'each item exactly once');
    assert.equal(answers.filter((a) => a.status === 204).length, 4);
  });
});
