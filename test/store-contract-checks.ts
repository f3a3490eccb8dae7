// The Store contract for check and code evaluators (issue 29): kind, checks, combine and code are
// kept exactly, on the latest record, on each version, and across an update, on both stores.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newId } from '../src/ids.ts';
import type { Store } from '../src/store/types.ts';
import { evaluator } from './store-contract.ts';

export function defineChecksContract(fresh: () => Promise<Store>): void {
  describe('check and code evaluators', () => {
    it('keeps kind, checks, combine and code on every version', async () => {
      const store = await fresh();
      const org = newId('org');
      const checks = [
        { type: 'json_schema' as const, schema: { type: 'object', required: ['a'], properties: { a: { const: 'ünï\u0000' } } } },
        { type: 'regex' as const, pattern: '^\\d{3}$', flags: 'i', field: 'request' as const },
        { type: 'json_path' as const, path: '$.a', equals: { nested: [1, null, 'x'] } },
        { type: 'tool_call' as const, name: 'search', called: false },
      ];
      const v1 = evaluator(org, { kind: 'check', checks, combine: 'fraction', code: null });
      await store.createEvaluator(v1);
      assert.deepEqual(await store.getEvaluator(v1.id), v1);
      const v2 = { ...v1, kind: 'code' as const, checks: null, combine: null, code: 'return input.response.length > 3 ? 1 : 0 // "quoted" `tick`', version: 2 };
      assert.equal(await store.updateEvaluator(v2, 1), true);
      assert.deepEqual(await store.getEvaluator(v1.id), v2);
      assert.deepEqual(await store.getEvaluatorVersion(v1.id, 1), v1);
      assert.deepEqual(await store.getEvaluatorVersion(v1.id, 2), v2);
      const listed = await store.listEvaluators({ org_id: org, include_public: false }, { limit: 10 });
      assert.deepEqual(listed.items, [v2]);
    });

    it('an llm evaluator stored without kind reads back without it', async () => {
      const store = await fresh();
      const plain = evaluator(newId('org'));
      await store.createEvaluator(plain);
      const read = await store.getEvaluator(plain.id);
      assert.equal(read?.kind, undefined);
      assert.deepEqual(read, plain);
    });
  });
}
