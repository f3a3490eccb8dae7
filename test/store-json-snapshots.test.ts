// The JSON store's read-only snapshots (src/store/json-snapshots.ts): the key with its organization,
// the judge and the evaluator are handed out frozen, never as the stored record itself, and a write
// is seen by the next read while a snapshot already read stays as it was read.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jsonTempDirs, openJson } from './helpers/json-store.ts';
import { apiKey, evaluator, judge, org } from './store-contract.ts';

const tempDir = jsonTempDirs('tribunal-store-snapshots-');

describe('JSON store snapshots', () => {
  it('answers the key and its organization frozen; a revoke is seen by the next read, not by the snapshot already read', async () => {
    const store = await openJson(tempDir());
    try {
      const o = org();
      const k = apiKey(o.id);
      await store.createOrganization(o);
      await store.createApiKey(k);
      const first = (await store.getApiKeyWithOrganization(k.prefix))!;
      assert.ok(Object.isFrozen(first.key) && Object.isFrozen(first.org));
      assert.throws(() => {
        (first.key as { revoked_at: string | null }).revoked_at = 'now';
      }, TypeError);
      // The same snapshot again while nothing changed: made once per stored record.
      assert.equal((await store.getApiKeyWithOrganization(k.prefix))!.key, first.key);
      const revoked = await store.updateApiKey(k.id, { revoked_at: '2026-01-01T00:00:00.000Z' });
      const second = (await store.getApiKeyWithOrganization(k.prefix))!;
      assert.deepEqual(second.key, revoked);
      assert.equal(first.key.revoked_at, null);
      // The other reads still answer copies of their own.
      const copy = (await store.getApiKey(k.id))!;
      assert.ok(!Object.isFrozen(copy));
      copy.name = 'changed';
      assert.equal((await store.getApiKey(k.id))!.name, k.name);
    } finally {
      await store.close();
    }
  });

  it('answers the latest judge and evaluator frozen all the way down; an update makes a new snapshot', async () => {
    const store = await openJson(tempDir());
    try {
      const e = evaluator('org_a');
      const j = judge('org_a', [e.id]);
      await store.createEvaluator(e);
      await store.createJudge(j);
      const readJudge = (await store.getJudge(j.id))!;
      assert.ok(Object.isFrozen(readJudge) && Object.isFrozen(readJudge.evaluators) && Object.isFrozen(readJudge.evaluators[0]));
      assert.throws(() => readJudge.evaluators.push({ id: 'x', name: 'x', version: null }), TypeError);
      assert.deepEqual(await store.getJudge(j.id), j);
      const readEvaluator = (await store.getEvaluator(e.id))!;
      assert.ok(Object.isFrozen(readEvaluator) && Object.isFrozen(readEvaluator.demonstrations));
      assert.ok(await store.updateEvaluator({ ...e, version: 2, rubric: 'stricter' }, 1));
      assert.equal((await store.getEvaluator(e.id))!.rubric, 'stricter');
      assert.equal(readEvaluator.rubric, e.rubric);
    } finally {
      await store.close();
    }
  });
});
