// The review room's store beside the main one: the same database (PostgreSQL tables of migration
// 016, or review.json and its journal in the JSON data directory), one instance per Store.
import type { Store } from '../store/types.ts';
import { JsonReviewStore } from './json-review.ts';
import { PgReviewStore } from './pg-review.ts';
import type { ReviewStore } from './types.ts';

const stores = new WeakMap<Store, ReviewStore>();

export function reviewStore(store: Store): ReviewStore {
  let found = stores.get(store);
  if (!found) {
    const s = store as Store & { pool?: ConstructorParameters<typeof PgReviewStore>[0]; dataDir?: string; closers?: Array<() => Promise<void>> };
    if (s.kind === 'postgres' && s.pool) found = new PgReviewStore(s.pool);
    else if (s.dataDir) {
      const json = new JsonReviewStore(s.dataDir);
      // Its journal is compacted into review.json and let go before the directory's lock is.
      s.closers?.push(() => json.close());
      found = json;
    } else throw new Error('review queues need the JSON or the PostgreSQL store');
    stores.set(store, found);
  }
  return found;
}
