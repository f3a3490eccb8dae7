// Issue 24, item 4 (h-harden): the owner can always stop a run, also a demo user whose key expired
// and so can no longer authenticate (the web session holds that key too). The path: a run ends with
// its key, so the expired demo user's run is already cancelled, with the reason, and no model call
// starts after; the expired key's 401 says so. TRIBUNAL_TEST_STORE=postgres runs it on PostgreSQL.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { evaluatorBody, startScoringRig } from './helpers/execute.ts';

const TTL_MS = 4000;

test("an expired demo key's run is cancelled by itself, and the key's cancel answers why", async () => {
  // The rig's own key is a demo key: with this TTL it expires a few seconds into the run.
  const rig = await startScoringRig({ TRIBUNAL_DEMO_KEY_TTL: `${TTL_MS}ms`, TRIBUNAL_BATCH_CONCURRENCY: '2', TRIBUNAL_BATCH_CHUNK: '2', TRIBUNAL_RATE_LIMIT: '100000' });
  try {
    const ev = await rig.createEvaluator(evaluatorBody());
    const judge = await rig.createJudge({ name: 'expiring judge', intent: 'grade', evaluator_ids: [ev.id] });
    rig.fake.setLatency(100);
    const started = await rig.post(`/v1/judges/${judge.id}/batch-execute/`, { items: Array.from({ length: 400 }, (_, i) => ({ request: `q ${i}`, response: `a ${i}` })) });
    assert.equal(started.status, 202, JSON.stringify(started.body));
    const id = started.body.batch_execution_id as string;
    const store = rig.server.store;
    let run = await store.getBatchExecution(id);
    for (const deadline = Date.now() + TTL_MS + 20_000; run && !['completed', 'failed', 'cancelled'].includes(run.status); run = await store.getBatchExecution(id)) {
      if (Date.now() > deadline) throw new Error(`still ${JSON.stringify(run)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(run!.status, 'cancelled', JSON.stringify(run));
    assert.match(run!.error ?? '', /the API key that started the run expired/);
    assert.ok(run!.done + run!.failed < 400, `the rest of the rows never ran (${run!.done + run!.failed} of 400)`);
    const calls = rig.fake.requests.length;
    await new Promise((r) => setTimeout(r, 1500));
    assert.ok(rig.fake.requests.length - calls <= 2, 'no model call starts after the cancel, beyond the rows in flight');

    const cancel = await rig.post(`/v1/judges/batch-executions/${id}/cancel/`, {});
    assert.equal(cancel.status, 401);
    assert.match(cancel.body.detail, /expired at .*batch runs it started were cancelled when it expired/);
  } finally {
    rig.fake.setLatency(0);
    while (rig.fake.inFlight > 0) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 500));
    await rig.close();
  }
});
