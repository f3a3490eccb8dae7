// Every item of a dataset in insertion order, a page at a time (a dataset may hold 100,000 items).
import type { DatasetItemRecord, Store } from '../store/types.ts';

export async function* getDatasetItems(store: Store, datasetId: string, pageSize = 1000): AsyncGenerator<DatasetItemRecord> {
  let after: number | undefined;
  for (;;) {
    const page = await store.listDatasetItems(datasetId, { limit: pageSize, after });
    yield* page.items;
    if (page.last === undefined) return;
    after = page.last;
  }
}
