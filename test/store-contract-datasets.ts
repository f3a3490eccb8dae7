// The Store contract for datasets and their items, run by defineStoreContract on every store.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newId } from '../src/ids.ts';
import { StoreConflictError, type DatasetItemRecord, type DatasetRecord, type Store } from '../src/store/types.ts';

const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms).toISOString();

export function dataset(orgId: string, over: Partial<DatasetRecord> = {}): DatasetRecord {
  return {
    id: newId('dst'),
    org_id: orgId,
    project_id: 'prj_1',
    name: `Dataset ${newId('dst').slice(-8)}`,
    description: 'for tests',
    item_count: 0,
    created_at: at(0),
    updated_at: at(0),
    ...over,
  };
}

export function item(over: Partial<DatasetItemRecord> = {}): DatasetItemRecord {
  return {
    id: newId('itm'),
    response: 'Paris.',
    request: 'Capital of France?',
    contexts: null,
    expected_output: null,
    tags: [],
    metadata: {},
    expected_scores: null,
    created_at: at(0),
    ...over,
  };
}

/** Every item of a dataset, page by page, as a batch reads it. */
export async function allItems(store: Store, datasetId: string, limit: number): Promise<DatasetItemRecord[]> {
  const out: DatasetItemRecord[] = [];
  let after: number | undefined;
  for (let guard = 0; guard < 10_000; guard++) {
    const page = await store.listDatasetItems(datasetId, { limit, after });
    out.push(...page.items);
    if (page.last === undefined) return out;
    after = page.last;
  }
  throw new Error('paging did not end');
}

export function defineDatasetContract(fresh: () => Promise<Store>): void {
  describe('datasets', () => {
    it('creates, reads, lists newest first, renames and refuses a second name in one org', async () => {
      const store = await fresh();
      const a = dataset('org_a', { name: 'golden', created_at: at(1) });
      const b = dataset('org_a', { name: 'edge cases', description: 'odd inputs', created_at: at(2) });
      const other = dataset('org_b', { name: 'golden' });
      for (const d of [a, b, other]) await store.createDataset(d);
      assert.deepEqual(await store.getDataset(a.id), a);
      assert.equal(await store.getDataset('dst_missing'), null);
      const listed = await store.listDatasets({ org_id: 'org_a' }, { limit: 1 });
      assert.deepEqual(
        listed.items.map((d) => d.id),
        [b.id],
      );
      const second = await store.listDatasets({ org_id: 'org_a' }, { limit: 1, after: listed.last });
      assert.deepEqual(
        second.items.map((d) => d.id),
        [a.id],
      );
      assert.equal(second.last, undefined);
      assert.deepEqual(
        (await store.listDatasets({ org_id: 'org_a', name: 'golden' }, { limit: 10 })).items.map((d) => d.id),
        [a.id],
      );
      assert.deepEqual(
        (await store.listDatasets({ org_id: 'org_a', search: 'ODD' }, { limit: 10 })).items.map((d) => d.id),
        [b.id],
      );
      await assert.rejects(store.createDataset(dataset('org_a', { name: 'golden' })), StoreConflictError);
      await assert.rejects(store.updateDataset(b.id, { name: 'golden', updated_at: at(5) }), StoreConflictError);
      const renamed = await store.updateDataset(a.id, { name: 'gold', updated_at: at(5) });
      assert.equal(renamed?.name, 'gold');
      assert.equal(renamed?.description, 'for tests');
      assert.equal(renamed?.updated_at, at(5));
      assert.equal(await store.updateDataset('dst_missing', { name: 'x', updated_at: at(5) }), null);
    });

    it('adds items in order, pages them in insertion order, edits and deletes one, and counts them', async () => {
      const store = await fresh();
      const d = dataset('org_a');
      await store.createDataset(d);
      const items = Array.from({ length: 25 }, (_, i) => item({ response: `answer ${i}`, tags: [`n${i}`], metadata: { i }, expected_scores: { Grounded: i / 25 } }));
      assert.equal(await store.addDatasetItems(d.id, items.slice(0, 10)), true);
      assert.equal(await store.addDatasetItems(d.id, items.slice(10)), true);
      assert.equal(await store.addDatasetItems('dst_missing', [item()]), false);
      assert.deepEqual(await allItems(store, d.id, 7), items);
      assert.equal((await store.getDataset(d.id))?.item_count, 25);

      const edited = { ...items[3], response: 'changed', contexts: ['a snippet'] };
      assert.equal(await store.updateDatasetItem(d.id, edited), true);
      assert.equal(await store.updateDatasetItem(d.id, item()), false);
      assert.deepEqual(await store.getDatasetItem(d.id, items[3].id), edited);
      assert.equal(await store.deleteDatasetItem(d.id, items[4].id), true);
      assert.equal(await store.deleteDatasetItem(d.id, items[4].id), false);
      assert.equal(await store.getDatasetItem(d.id, items[4].id), null);
      assert.equal(await store.getDatasetItem('dst_other', items[3].id), null);
      const expected = items.map((it, i) => (i === 3 ? edited : it)).filter((_, i) => i !== 4);
      assert.deepEqual(await allItems(store, d.id, 4), expected);
      assert.equal((await store.getDataset(d.id))?.item_count, 24);
    });

    it('an add with an id already present adds nothing', async () => {
      const store = await fresh();
      const d = dataset('org_a');
      await store.createDataset(d);
      const first = item();
      await store.addDatasetItems(d.id, [first]);
      await assert.rejects(store.addDatasetItems(d.id, [item(), first]), StoreConflictError);
      assert.deepEqual(await allItems(store, d.id, 10), [first]);
    });

    it('deleting a dataset removes its items; a purge removes the org datasets', async () => {
      const store = await fresh();
      const d = dataset('org_a');
      const kept = dataset('org_b');
      await store.createDataset(d);
      await store.createDataset(kept);
      const it1 = item();
      await store.addDatasetItems(d.id, [it1, item()]);
      await store.addDatasetItems(kept.id, [item()]);
      assert.equal(await store.deleteDataset(d.id), true);
      assert.equal(await store.deleteDataset(d.id), false);
      assert.equal(await store.getDataset(d.id), null);
      assert.equal(await store.getDatasetItem(d.id, it1.id), null);
      assert.deepEqual((await store.listDatasetItems(d.id, { limit: 10 })).items, []);
      await store.createOrganization({ id: 'org_b', name: 'B', is_demo: true, created_at: at(0) });
      await store.purgeOrganization('org_b');
      assert.equal(await store.getDataset(kept.id), null);
    });

    it('keeps text with NUL and private-use characters exactly', async () => {
      const store = await fresh();
      const d = dataset('org_a');
      await store.createDataset(d);
      const odd = item({ response: 'a\u0000b\u{F0000}c', metadata: { nested: { list: [1, 'x\u0000'] } } });
      await store.addDatasetItems(d.id, [odd]);
      assert.deepEqual(await store.getDatasetItem(d.id, odd.id), odd);
    });
  });
}
