// The Store contract for claim tokens and synthetic data (room surface), run by defineStoreContract on every store.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newId } from '../src/ids.ts';
import type { ClaimTokenRecord, Store, SyntheticDataRecord } from '../src/store/types.ts';
import { org } from './store-contract.ts';

const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms).toISOString();

export function claimToken(orgId: string, over: Partial<ClaimTokenRecord> = {}): ClaimTokenRecord {
  return {
    token_hash: newId('key').replace('key_', 'hash_'),
    judge_id: newId('jdg'),
    org_id: orgId,
    created_at: at(0),
    expires_at: at(86_400_000),
    used_at: null,
    used_by_org_id: null,
    ...over,
  };
}

export function syntheticData(orgId: string, over: Partial<SyntheticDataRecord> = {}): SyntheticDataRecord {
  return {
    judge_id: newId('jdg'),
    org_id: orgId,
    key_id: newId('key'),
    status: 'pending',
    count: 4,
    name: '',
    description: '',
    samples: [],
    error: null,
    created_at: at(0),
    updated_at: at(0),
    ...over,
  };
}

export function defineSurfaceContract(fresh: () => Promise<Store>): void {
  describe('claim tokens', () => {
    it('stores by hash, and is used exactly once even when two claims race', async () => {
      const store = await fresh();
      const t = claimToken('org_demo');
      await store.createClaimToken(t);
      assert.deepEqual(await store.getClaimToken(t.token_hash), t);
      assert.equal(await store.getClaimToken('unknown'), null);
      const results = await Promise.all([store.useClaimToken(t.token_hash, at(5), 'org_a'), store.useClaimToken(t.token_hash, at(6), 'org_b')]);
      assert.deepEqual(results.filter(Boolean).length, 1);
      const used = await store.getClaimToken(t.token_hash);
      assert.ok(used?.used_at);
      assert.ok(used?.used_by_org_id === 'org_a' || used?.used_by_org_id === 'org_b');
      assert.equal(await store.useClaimToken(t.token_hash, at(7), 'org_c'), false);
      assert.equal(await store.useClaimToken('unknown', at(7), 'org_c'), false);
    });
  });

  describe('synthetic data', () => {
    it('keeps one record per judge, replaced on put, and lists the pending ones', async () => {
      const store = await fresh();
      const a = syntheticData('org_a');
      const b = syntheticData('org_a', { status: 'ready', samples: [{ quality: 'high', request: 'q', response: 'r', fails_evaluator: null, failure: null }] });
      await store.putSyntheticData(a);
      await store.putSyntheticData(b);
      assert.deepEqual(await store.getSyntheticData(b.judge_id), b);
      assert.deepEqual(
        (await store.listPendingSyntheticData()).map((r) => r.judge_id),
        [a.judge_id],
      );
      const done = { ...a, status: 'ready' as const, name: 'Set', samples: b.samples, updated_at: at(9) };
      await store.putSyntheticData(done);
      assert.deepEqual(await store.getSyntheticData(a.judge_id), done);
      assert.deepEqual(await store.listPendingSyntheticData(), []);
      assert.equal(await store.getSyntheticData('jdg_unknown'), null);
    });

    it('goes with its organization when that is purged', async () => {
      const store = await fresh();
      const o = org({ is_demo: true });
      await store.createOrganization(o);
      const kept = syntheticData('org_other');
      const gone = syntheticData(o.id);
      const token = claimToken(o.id);
      await store.putSyntheticData(kept);
      await store.putSyntheticData(gone);
      await store.createClaimToken(token);
      await store.purgeOrganization(o.id);
      assert.equal(await store.getSyntheticData(gone.judge_id), null);
      assert.equal(await store.getClaimToken(token.token_hash), null);
      assert.deepEqual(await store.getSyntheticData(kept.judge_id), kept);
    });
  });
}
