// Async judging in flight (?async_judge=true judges after the answer has gone out), per server: a
// graceful shutdown waits for it within its grace (stopServices in src/app.ts) so that the log the
// answer promised (`tribunal.execution_log_id`) is written before the store closes. Keyed by the
// server's store, so several servers in one process (tests, embedders) each wait for their own.
import type { Store } from '../store/types.ts';

const inFlight = new WeakMap<Store, Set<Promise<unknown>>>();

/** Tracks one background judging until it settles (it never rejects: judgeExchange logs its failures). */
export function trackJudging(store: Store, work: Promise<unknown>): void {
  let set = inFlight.get(store);
  if (!set) inFlight.set(store, (set = new Set()));
  const tracked = work.catch(() => {});
  set.add(tracked);
  void tracked.then(() => set.delete(tracked));
}

/** How many judgings are still running for this store's server. */
export const judgingInFlight = (store: Store) => inFlight.get(store)?.size ?? 0;

/** Waits for the store's background judging, at most `graceMs`; answers how many were still running then. */
export async function settleJudging(store: Store, graceMs: number): Promise<number> {
  const set = inFlight.get(store);
  if (!set?.size) return 0;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, graceMs);
  });
  // Judging started while waiting (an answer that went out just before) is waited for as well.
  const all = (async () => {
    while (set.size) await Promise.all([...set]);
  })();
  await Promise.race([all, timeout]);
  clearTimeout(timer);
  return set.size;
}
