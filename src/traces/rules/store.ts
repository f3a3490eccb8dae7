// The rule store of a Store: one per store object, over the same pool (PostgreSQL) or data directory (JSON).
import { JsonRuleStore } from '../../store/json-eval-rules.ts';
import type { JsonTraceStore } from '../../store/json-traces.ts';
import { traceStoreOf } from '../store.ts';
import type { Store } from '../../store/types.ts';
import type { RuleStore } from './types.ts';

const stores = new WeakMap<Store, Promise<RuleStore>>();

export function ruleStoreOf(store: Store): Promise<RuleStore> {
  let rs = stores.get(store);
  if (!rs) {
    rs = (async () => {
      if (store.kind === 'postgres') {
        const { PgRuleStore } = await import('../../store/postgres/eval-rules.ts');
        return new PgRuleStore((store as unknown as { pool: import('pg').Pool }).pool);
      }
      const json = store as unknown as { dataDir: string; closers?: Array<() => Promise<void>> };
      // The enqueues ride the spans file's commits (span-carrier.ts): the trace store opens first.
      const traces = (await traceStoreOf(store)) as JsonTraceStore;
      const rules = new JsonRuleStore(json.dataDir, { carrier: traces.carrier });
      // Its journal is compacted into rules.json and let go before the directory's lock is.
      json.closers?.push(() => rules.close());
      return rules;
    })();
    stores.set(store, rs);
  }
  return rs;
}
