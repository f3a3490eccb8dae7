// Cancel stops spending (issue 25): once POST .../cancel/ has answered, no judge-model call of that
// run starts, not even one that was already waiting for a model slot when the cancel came. Rows in
// flight may finish. Here 8 rows of a 2-evaluator judge want 16 calls but only 2 model slots exist,
// so most calls are queued at the cancel; before the fix they kept starting for seconds after it.
// TRIBUNAL_TEST_STORE=postgres runs it on PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { evaluatorBody, startScoringRig, type ScoringRig } from './helpers/execute.ts';

let rig: ScoringRig;
let judgeId: string;

before(async () => {
  rig = await startScoringRig({ TRIBUNAL_BATCH_CONCURRENCY: '8', TRIBUNAL_BATCH_CHUNK: '8', TRIBUNAL_MODEL_CONCURRENCY: '2' });
  const a = await rig.createEvaluator(evaluatorBody());
  const b = await rig.createEvaluator(evaluatorBody());
  judgeId = (await rig.createJudge({ name: 'Cancel judge', intent: 'grade answers', evaluator_ids: [a.id, b.id] })).id;
});
after(() => rig.close());

it('no model call starts after the cancel is answered, however long it waited for a slot', async () => {
  rig.fake.setLatency(400);
  rig.fake.resetStats();
  const items = Array.from({ length: 40 }, (_, i) => ({ request: `question ${i}`, response: `answer ${i}` }));
  const started = await rig.post(`/v1/judges/${judgeId}/batch-execute/`, { items });
  assert.equal(started.status, 202, JSON.stringify(started.body));
  const id = started.body.batch_execution_id;
  // Wait until calls are both in flight and queued behind the 2 slots.
  for (const deadline = Date.now() + 20_000; rig.fake.requests.length < 2; ) {
    if (Date.now() > deadline) throw new Error('the run never called the model');
    await new Promise((r) => setTimeout(r, 20));
  }
  const cancel = await rig.post(`/v1/judges/batch-executions/${id}/cancel/`, {});
  const answeredAt = Date.now();
  assert.equal(cancel.status, 200, JSON.stringify(cancel.body));
  assert.equal(cancel.body.status, 'cancelled');
  // Let everything queued have its chance to start (several model latencies).
  for (const deadline = Date.now() + 3000; Date.now() < deadline || rig.fake.inFlight > 0; ) await new Promise((r) => setTimeout(r, 50));
  const late = rig.fake.requests.filter((r) => r.receivedAt > answeredAt);
  assert.equal(late.length, 0, `${late.length} model calls started after the cancel was answered`);
  const after = await rig.get(`/v1/judges/batch-executions/${id}/`);
  assert.equal(after.body.status, 'cancelled');
  assert.ok(after.body.done + after.body.failed < items.length, JSON.stringify(after.body));
});
