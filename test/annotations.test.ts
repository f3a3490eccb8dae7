// Annotations over real HTTP (SPEC section 8): create, read, filter, edit, delete; the log must be the
// caller's and the evaluator one of its results; copying annotated runs into a dataset.
// TRIBUNAL_TEST_STORE=postgres runs it on PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newId } from '../src/ids.ts';
import type { ExecutionLogRecord } from '../src/store/types.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { log } from './store-contract.ts';

let srv: TestServer;
let keyA: string;
let keyB: string;
let orgA: string;
let orgB: string;
const judgeId = newId('jdg');
const GROUNDED = newId('evl');
const POLITE = newId('evl');

const result = (id: string, name: string, score: number) => ({
  evaluator_id: id,
  evaluator_name: name,
  evaluator_version: 1,
  score,
  justification: 'because',
  model: 'claude-sonnet-4-5',
  input_tokens: 10,
  output_tokens: 5,
  cost_usd: 0.001,
  latency_ms: 12,
});

async function judgeLog(orgId: string, over: Partial<ExecutionLogRecord> = {}): Promise<ExecutionLogRecord> {
  const l = log(orgId, {
    type: 'judge',
    judge_id: judgeId,
    judge_name: 'Support',
    judge_version: 1,
    evaluator_id: null,
    evaluator_name: null,
    evaluator_version: null,
    request: 'When does the store open?',
    response: 'At 9am on weekdays.',
    contexts: ['Opening hours: 9am-5pm, Monday to Friday.'],
    tags: ['support'],
    evaluator_results: [result(GROUNDED, 'Grounded', 0.9), result(POLITE, 'Polite', 0.4)],
    created_at: new Date().toISOString(),
    ...over,
  });
  await srv.store.appendExecutionLog(l);
  return l;
}

before(async () => {
  srv = await startTestServer();
  const { createOrganization } = await import('../src/domain/orgs.ts');
  const a = await createOrganization(srv.store, { name: 'acme', isDemo: false });
  const b = await createOrganization(srv.store, { name: 'globex', isDemo: false });
  [keyA, orgA, keyB, orgB] = [a.api_key, a.organization.id, b.api_key, b.organization.id];
});
after(() => srv.close());

const post = (body: unknown, key = keyA) => srv.request('POST', '/v1/annotations/', { key, body });

describe('annotations', () => {
  it('annotates a result by evaluator id or name, reads, lists with filters, edits and deletes', async () => {
    const l = await judgeLog(orgA);
    const created = await post({ execution_log_id: l.id, evaluator_id: POLITE, score: 0.9, note: 'It is polite enough.' });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.match(created.body.id, /^ann_/);
    assert.equal(created.body.judge_id, judgeId);
    assert.equal(created.body.evaluator_id, POLITE);
    assert.equal(created.body.note, 'It is polite enough.');
    // By exact name, as the log names it: stored by id.
    const byName = await post({ execution_log_id: l.id, evaluator_id: 'Grounded', score: 1 });
    assert.equal(byName.status, 201, JSON.stringify(byName.body));
    assert.equal(byName.body.evaluator_id, GROUNDED);
    assert.equal(byName.body.note, null);

    const got = await srv.request('GET', `/v1/annotations/${created.body.id}/`, { key: keyA });
    assert.deepEqual(got.body, created.body);
    const ids = async (query: string) => (await srv.request('GET', `/v1/annotations/${query}`, { key: keyA })).body.results.map((a: any) => a.id);
    assert.deepEqual(await ids(`?execution_log_id=${l.id}`), [byName.body.id, created.body.id]);
    assert.deepEqual(await ids(`?evaluator_id=${POLITE}`), [created.body.id]);
    assert.deepEqual(await ids(`?judge_id=${judgeId}&limit=1`), [byName.body.id]);
    assert.deepEqual(await ids(`?judge_id=${newId('jdg')}`), []);

    const edited = await srv.request('PATCH', `/v1/annotations/${created.body.id}/`, { key: keyA, body: { score: 0.7, note: null } });
    assert.equal(edited.status, 200);
    assert.equal(edited.body.score, 0.7);
    assert.equal(edited.body.note, null);
    assert.ok(edited.body.updated_at >= created.body.updated_at);
    const del = await srv.request('DELETE', `/v1/annotations/${created.body.id}/`, { key: keyA });
    assert.deepEqual(del.body, { deleted: true, id: created.body.id });
    assert.equal((await srv.request('GET', `/v1/annotations/${created.body.id}/`, { key: keyA })).status, 404);
  });

  it('refuses what cannot be annotated, each with a clear 4xx and code', async () => {
    const l = await judgeLog(orgA);
    const bad = async (body: unknown, status: number, code: string, detail?: RegExp, key = keyA) => {
      const res = await post(body, key);
      assert.equal(res.status, status, JSON.stringify(res.body));
      assert.equal(res.body.code, code);
      if (detail) assert.match(res.body.detail, detail);
    };
    await bad({ execution_log_id: l.id, evaluator_id: 'evl_other', score: 0.5 }, 400, 'validation_error', new RegExp(`Grounded \\(${GROUNDED}\\), Polite \\(${POLITE}\\)`));
    await bad({ execution_log_id: l.id, evaluator_id: POLITE, score: 1.5 }, 400, 'validation_error', /score/);
    await bad({ execution_log_id: l.id, evaluator_id: POLITE, score: -0.1 }, 400, 'validation_error');
    await bad({ execution_log_id: l.id, evaluator_id: POLITE }, 400, 'validation_error', /score/);
    await bad({ execution_log_id: 'log_missing', evaluator_id: POLITE, score: 0.5 }, 404, 'not_found');
    // Another organization's log is not visible: 404, never 403 (its existence is not told).
    await bad({ execution_log_id: l.id, evaluator_id: POLITE, score: 0.5 }, 404, 'not_found', undefined, keyB);
    await bad({ execution_log_id: l.id, evaluator_id: POLITE, score: 0.5, colour: 'red' }, 400, 'validation_error', /colour/);
    assert.equal((await post({ execution_log_id: l.id, evaluator_id: POLITE, score: 0.5 })).status, 201);
    await bad({ execution_log_id: l.id, evaluator_id: POLITE, score: 0.6 }, 409, 'conflict', /PATCH/);
    const mine = (await srv.request('GET', `/v1/annotations/?execution_log_id=${l.id}`, { key: keyA })).body.results[0];
    assert.equal((await srv.request('GET', `/v1/annotations/${mine.id}/`, { key: keyB })).status, 404);
    assert.equal((await srv.request('PATCH', `/v1/annotations/${mine.id}/`, { key: keyB, body: { score: 0 } })).status, 404);
    assert.equal((await srv.request('DELETE', `/v1/annotations/${mine.id}/`, { key: keyB })).status, 404);
    assert.deepEqual((await srv.request('GET', '/v1/annotations/', { key: keyB })).body.results, []);
    assert.equal((await srv.request('GET', '/v1/annotations/?date_from=yesterday', { key: keyA })).body.code, 'validation_error');
    assert.equal((await srv.request('GET', '/v1/annotations/?judge_id=No%20such%20judge', { key: keyA })).status, 404);
  });

  it('copies annotated runs into a dataset: person scores become expected_scores, notes go to metadata', async () => {
    const first = await judgeLog(orgB, { request: 'Refund?', response: 'No refunds, sorry.', contexts: null, tags: ['refunds'] });
    const second = await judgeLog(orgB, { request: null, response: 'Hello!', contexts: null, tags: [] });
    const conversation = await judgeLog(orgB, {
      response: 'ok',
      turns: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'ok' },
      ],
    });
    const a1 = (await post({ execution_log_id: first.id, evaluator_id: GROUNDED, score: 0.2, note: 'Refunds exist within 30 days.' }, keyB)).body;
    const a2 = (await post({ execution_log_id: first.id, evaluator_id: POLITE, score: 0.8 }, keyB)).body;
    const a3 = (await post({ execution_log_id: second.id, evaluator_id: POLITE, score: 1 }, keyB)).body;
    const a4 = (await post({ execution_log_id: conversation.id, evaluator_id: POLITE, score: 1 }, keyB)).body;
    const ds = (await srv.request('POST', '/v1/datasets/', { key: keyB, body: { name: 'labelled' } })).body.id;

    const copied = await srv.request('POST', `/v1/datasets/${ds}/items/from-annotations/`, { key: keyB, body: { judge_id: judgeId } });
    assert.equal(copied.status, 201, JSON.stringify(copied.body));
    assert.equal(copied.body.created, 3);
    assert.equal(copied.body.annotations, 4);
    assert.deepEqual(copied.body.skipped, []);
    const items = (await srv.request('GET', `/v1/datasets/${ds}/items/`, { key: keyB })).body.results;
    assert.equal(items.length, 3);
    const [i1, i2, i3] = items;
    // A conversation is copied as its turns.
    assert.deepEqual(i3.turns, [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'ok' },
    ]);
    assert.equal(i3.response, null);
    assert.deepEqual(i3.expected_scores, { [POLITE]: 1 });
    assert.equal(i1.request, 'Refund?');
    assert.equal(i1.response, 'No refunds, sorry.');
    assert.deepEqual(i1.tags, ['refunds']);
    assert.deepEqual(i1.expected_scores, { [GROUNDED]: 0.2, [POLITE]: 0.8 });
    assert.deepEqual(i1.metadata, { execution_log_id: first.id, annotation_ids: [a1.id, a2.id], notes: { [GROUNDED]: 'Refunds exist within 30 days.' } });
    assert.equal(i2.request, null);
    assert.deepEqual(i2.expected_scores, { [POLITE]: 1 });
    assert.deepEqual(i2.metadata, { execution_log_id: second.id, annotation_ids: [a3.id] });

    // By ids: only those.
    const ds2 = (await srv.request('POST', '/v1/datasets/', { key: keyB, body: { name: 'picked' } })).body.id;
    const picked = await srv.request('POST', `/v1/datasets/picked/items/from-annotations/`, { key: keyB, body: { annotation_ids: [a3.id] } });
    assert.equal(picked.status, 201, JSON.stringify(picked.body));
    assert.equal(picked.body.created, 1);
    assert.equal((await srv.request('GET', `/v1/datasets/${ds2}/`, { key: keyB })).body.item_count, 1);

    const refuse = async (body: unknown, status: number, field?: string, key = keyB) => {
      const res = await srv.request('POST', `/v1/datasets/${ds2}/items/from-annotations/`, { key, body });
      assert.equal(res.status, status, JSON.stringify(res.body));
      if (field)
        assert.ok(
          res.body.errors?.some((e: any) => e.field === field),
          JSON.stringify(res.body),
        );
      return res;
    };
    await refuse({}, 400, 'annotation_ids');
    await refuse({ annotation_ids: [a3.id], judge_id: judgeId }, 400, 'annotation_ids');
    await refuse({ annotation_ids: [a3.id], date_from: '2026-01-01' }, 400, 'date_from');
    await refuse({ annotation_ids: [] }, 400);
    await refuse({ annotation_ids: ['ann_missing'] }, 404);
    await refuse({ judge_id: judgeId, date_to: '2000-01-01' }, 400, 'judge_id');
    // Another organization: neither its dataset nor its annotations.
    assert.equal((await srv.request('POST', `/v1/datasets/${ds2}/items/from-annotations/`, { key: keyA, body: { annotation_ids: [a3.id] } })).status, 404);
    const dsA = (await srv.request('POST', '/v1/datasets/', { key: keyA, body: { name: 'mine' } })).body.id;
    assert.equal((await srv.request('POST', `/v1/datasets/${dsA}/items/from-annotations/`, { key: keyA, body: { annotation_ids: [a4.id] } })).status, 404);
    void orgA;
  });

  it('refuses a comparison log (preferences, no score), and from-annotations skips one annotated before that refusal', async () => {
    const comparison = await judgeLog(orgA, { type: 'comparison', response: 'Response A.' });
    const res = await post({ execution_log_id: comparison.id, evaluator_id: POLITE, score: 0.5 });
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.equal(res.body.code, 'validation_error');
    assert.match(res.body.detail, /comparison/);
    assert.equal(res.body.errors[0].field, 'execution_log_id');
    // One stored before the refusal existed is kept, and copies into no item (only response A is in the log).
    const now = new Date().toISOString();
    const old = {
      id: newId('ann'),
      org_id: orgA,
      execution_log_id: comparison.id,
      evaluator_id: POLITE,
      judge_id: judgeId,
      score: 0.5,
      note: null,
      created_at: now,
      updated_at: now,
    };
    await srv.store.createAnnotation(old);
    const ds = (await srv.request('POST', '/v1/datasets/', { key: keyA, body: { name: 'from comparisons' } })).body.id;
    const copied = await srv.request('POST', `/v1/datasets/${ds}/items/from-annotations/`, { key: keyA, body: { annotation_ids: [old.id] } });
    assert.equal(copied.status, 201, JSON.stringify(copied.body));
    assert.equal(copied.body.created, 0);
    assert.equal(copied.body.skipped.length, 1);
    assert.equal(copied.body.skipped[0].execution_log_id, comparison.id);
    assert.match(copied.body.skipped[0].reason, /comparison/);
    assert.equal((await srv.request('GET', `/v1/annotations/${old.id}/`, { key: keyA })).status, 200);
  });
});
