// Demo organizations are temporary: once their key has expired and the retention has passed
// (TRIBUNAL_DEMO_RETENTION, default 7 days), they are deleted with everything they made. Every
// instance runs the sweep; deleting what is already gone is harmless, so several need no coordination.
import type { Config } from './config.ts';
import type { Store } from './store/types.ts';
import { log } from './log.ts';
import { reviewStore } from './review/store.ts';
import { ruleStoreOf } from './traces/rules/store.ts';
import { traceStoreOf } from './traces/store.ts';

const SWEEP_EVERY_MS = 60 * 60 * 1000;

/** Deletes the demo organizations past retention; answers how many. */
export async function purgeExpiredDemoOrganizations(store: Store, config: Pick<Config, 'demoKeyTtlMs' | 'demoRetentionMs'>, now = Date.now()): Promise<number> {
  const cutoff = new Date(now - config.demoKeyTtlMs - config.demoRetentionMs).toISOString();
  let purged = 0;
  for (;;) {
    const batch = await store.listDemoOrganizations(cutoff, 100);
    for (const org of batch) await purgeOrganizationEverywhere(store, org.id);
    purged += batch.length;
    if (batch.length < 100) return purged;
  }
}

/**
 * An organization leaves with everything it made: the Store's own tables, and the rooms kept beside
 * it over the same database (spans, evaluation rules with their queues and counters, review queues
 * with their items, leases and labels). The rooms go first, so a sweep stopped half-way finds the org
 * again next time.
 */
export async function purgeOrganizationEverywhere(store: Store, orgId: string): Promise<void> {
  await (await traceStoreOf(store)).purgeOrganization(orgId);
  const rules = await ruleStoreOf(store);
  for (const rule of await rules.listRules(orgId)) await rules.deleteRule(rule.id);
  const review = reviewStore(store);
  for (;;) {
    const { items } = await review.listQueues(orgId, { limit: 100 });
    for (const q of items) await review.deleteQueue(q.id);
    if (items.length < 100) break;
  }
  await store.purgeOrganization(orgId);
}

/** Sweeps at start and then hourly; a failed sweep (store down) is reported and retried next time. */
export function scheduleDemoPurge(store: Store, config: Config): { stop: () => void } {
  const sweep = () =>
    purgeExpiredDemoOrganizations(store, config).then(
      (n) => n && log.info(`purged ${n} expired demo organization${n === 1 ? '' : 's'}`),
      (err: Error) => log.error(`demo purge failed, retried in an hour: ${err.message}`),
    );
  void sweep();
  const timer = setInterval(sweep, SWEEP_EVERY_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
