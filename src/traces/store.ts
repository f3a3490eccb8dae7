// The trace store of a Store: one per store object (the JSON one holds the spans in memory, so every
// user of a store must share it). Kept beside the Store rather than in its interface, over the same
// pool (PostgreSQL) or data directory (JSON).
import { JsonTraceStore } from '../store/json-traces.ts';
import type { Store } from '../store/types.ts';
import type { TraceStore } from './types.ts';

const stores = new WeakMap<Store, Promise<TraceStore>>();

export function traceStoreOf(store: Store): Promise<TraceStore> {
  let ts = stores.get(store);
  if (!ts) {
    ts = (async () => {
      if (store.kind === 'postgres') {
        const { PgTraceStore } = await import('../store/postgres/traces.ts');
        return new PgTraceStore((store as unknown as { pool: import('pg').Pool }).pool);
      }
      const json = store as unknown as { dataDir: string; closers?: Array<() => Promise<void>> };
      const traces = new JsonTraceStore(json.dataDir);
      // Its appends reach the disk and its files are let go before the directory's lock is.
      json.closers?.push(() => traces.close());
      return traces;
    })();
    stores.set(store, ts);
  }
  return ts;
}
