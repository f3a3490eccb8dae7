// Issue 24, item 4 (h-harden): a batch run stops (cancelled, with the reason) within seconds of its
// key's revocation, and the owner organization can cancel a run another of its keys started.
// TRIBUNAL_TEST_STORE=postgres runs it on PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { keyEndReason } from '../src/batch/key-liveness.ts';
import { evaluatorBody, startScoringRig, type ScoringRig } from './helpers/execute.ts';

const items = (n: number) => Array.from({ length: n }, (_, i) => ({ request: `q ${i}`, response: `a ${i}` }));

describe('runs do not outlive their key', () => {
  let rig: ScoringRig;
  let judgeId: string;
  const as = (key: string, method: string, path: string, body?: unknown) => rig.server.request(method, path, { key, body });
  const newKey = async () => {
    const made = await rig.post('/v1/api-keys/', { name: `k${Math.random()}` });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    return made.body as { id: string; api_key: string };
  };
  const waitEnded = async (id: string) => {
    for (const deadline = Date.now() + 30_000; ; ) {
      const b = await rig.get(`/v1/judges/batch-executions/${id}/`);
      if (['completed', 'failed', 'cancelled'].includes(b.body.status)) return b.body;
      if (Date.now() > deadline) throw new Error(`still ${JSON.stringify(b.body)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  before(async () => {
    rig = await startScoringRig({ TRIBUNAL_BATCH_CONCURRENCY: '4', TRIBUNAL_BATCH_CHUNK: '4', TRIBUNAL_RATE_LIMIT: '100000' });
    const ev = await rig.createEvaluator(evaluatorBody());
    judgeId = (await rig.createJudge({ name: 'key judge', intent: 'grade', evaluator_ids: [ev.id] })).id;
  });
  after(async () => {
    // Rows of the cancelled runs still in flight finish first (PostgreSQL: their chunk jobs end).
    while (rig.fake.inFlight > 0) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 500));
    await rig.close();
  });

  test('revoking the key that started a run cancels the run, with the reason; no more model calls', async () => {
    const key = await newKey();
    rig.fake.setLatency(150);
    const started = await as(key.api_key, 'POST', `/v1/judges/${judgeId}/batch-execute/`, { items: items(300) });
    assert.equal(started.status, 202, JSON.stringify(started.body));
    const id = started.body.batch_execution_id;
    while ((await rig.get(`/v1/judges/batch-executions/${id}/`)).body.done < 4) await new Promise((r) => setTimeout(r, 50));
    assert.equal((await rig.server.request('DELETE', `/v1/api-keys/${key.id}/`, { key: rig.key })).status, 200);
    const run = await waitEnded(id);
    assert.equal(run.status, 'cancelled', JSON.stringify(run));
    assert.match(run.error ?? '', /revoked/);
    assert.ok(run.done + run.failed < 300, 'the rest of the rows never ran');
    const calls = rig.fake.requests.length;
    await new Promise((r) => setTimeout(r, 1500));
    assert.ok(rig.fake.requests.length - calls <= 4, 'at most the rows in flight were still calling');
    rig.fake.setLatency(0);
  });

  test('the owner organization cancels a run another of its keys started', async () => {
    const key = await newKey();
    rig.fake.setLatency(150);
    const started = await as(key.api_key, 'POST', `/v1/judges/${judgeId}/batch-execute/`, { items: items(100) });
    assert.equal(started.status, 202);
    const cancelled = await rig.post(`/v1/judges/batch-executions/${started.body.batch_execution_id}/cancel/`, {});
    assert.equal(cancelled.status, 200, JSON.stringify(cancelled.body));
    assert.equal(cancelled.body.status, 'cancelled');
    rig.fake.setLatency(0);
    await waitEnded(started.body.batch_execution_id);
  });

  test('an expired key ends its runs too', () => {
    const past = new Date(Date.now() - 1000).toISOString();
    assert.match(keyEndReason({ revoked_at: null, expires_at: past }) ?? '', /expired/);
    assert.equal(keyEndReason({ revoked_at: null, expires_at: new Date(Date.now() + 60_000).toISOString() }), null);
    assert.match(keyEndReason(null) ?? '', /deleted/);
  });
});
