// The Store contract for the result cache (engine/result-cache.ts): entries by (organization, key),
// never read across organizations, replaced in place, bounded with the least recently used evicted,
// and gone with their organization.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newId } from '../src/ids.ts';
import type { EvaluatorResult } from '../src/schemas.ts';
import type { Store } from '../src/store/types.ts';

const result = (score: number, over: Partial<EvaluatorResult> = {}): EvaluatorResult => ({
  evaluator_id: 'evl_x',
  evaluator_name: 'X',
  evaluator_version: 1,
  score,
  justification: `Scored ${score}: "quoted evidence" and ünïcödé.`,
  not_applicable: false,
  degenerate: false,
  critical: false,
  model: 'claude-sonnet-4-5',
  input_tokens: 1200,
  output_tokens: 80,
  cost_usd: 0.0048,
  latency_ms: 812.5,
  cache_read_tokens: 1000,
  cache_write_tokens: 0,
  settings: { temperature: 0, max_tokens: 1024, strategy: 'tool' },
  ...over,
});

export function defineResultCacheContract(fresh: () => Promise<Store>): void {
  describe('result cache', () => {
    it('stores and reads a result by organization and key, never across organizations', async () => {
      const store = await fresh();
      const [a, b] = [newId('org'), newId('org')];
      assert.equal(await store.getCachedResult(a, 'k1'), null);
      await store.putCachedResult(a, 'k1', result(0.75), 100);
      assert.deepEqual(await store.getCachedResult(a, 'k1'), result(0.75));
      assert.equal(await store.getCachedResult(b, 'k1'), null, 'another organization, the same key: nothing');
      await store.putCachedResult(b, 'k1', result(0.25), 100);
      assert.equal((await store.getCachedResult(a, 'k1'))!.score, 0.75);
      assert.equal((await store.getCachedResult(b, 'k1'))!.score, 0.25);
      // A put replaces the entry under the same key.
      await store.putCachedResult(a, 'k1', result(0.5), 100);
      assert.equal((await store.getCachedResult(a, 'k1'))!.score, 0.5);
    });

    it('keeps at most maxEntries entries across the store, the least recently used evicted first', async () => {
      const store = await fresh();
      const [a, b] = [newId('org'), newId('org')];
      await store.putCachedResult(a, 'k1', result(0.1), 3);
      await store.putCachedResult(b, 'k2', result(0.2), 3);
      await store.putCachedResult(a, 'k3', result(0.3), 3);
      // k1 is used: now k2 is the least recently used.
      assert.ok(await store.getCachedResult(a, 'k1'));
      await store.putCachedResult(a, 'k4', result(0.4), 3);
      assert.equal(await store.getCachedResult(b, 'k2'), null, 'evicted');
      for (const [org, key] of [
        [a, 'k1'],
        [a, 'k3'],
        [a, 'k4'],
      ] as const)
        assert.ok(await store.getCachedResult(org, key), key);
      // Many more puts: still only the last three.
      for (let i = 5; i <= 12; i++) await store.putCachedResult(a, `k${i}`, result(i / 100), 3);
      const present = [];
      for (let i = 1; i <= 12; i++) if (await store.getCachedResult(a, `k${i}`)) present.push(i);
      assert.deepEqual(present, [10, 11, 12]);
    });

    it("purging an organization removes its entries and keeps the others'", async () => {
      const store = await fresh();
      const o = { id: newId('org'), name: 'Cache purge', is_demo: true, created_at: new Date().toISOString() };
      const other = newId('org');
      await store.createOrganization(o);
      await store.putCachedResult(o.id, 'k', result(0.9), 100);
      await store.putCachedResult(other, 'k', result(0.8), 100);
      await store.purgeOrganization(o.id);
      assert.equal(await store.getCachedResult(o.id, 'k'), null);
      assert.equal((await store.getCachedResult(other, 'k'))!.score, 0.8);
    });
  });
}
