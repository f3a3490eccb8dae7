// A queue's sources (SPEC section 17): as a run is logged (REST, MCP, batches, anything that scores
// through the engine), each queue of its organization whose sources match adds it. Best effort and
// off the caller's path: a failure here is logged by the caller, never fails the run.
import type { ExecutionLogRecord, Store } from '../store/types.ts';
import { reviewId } from './ids.ts';
import { reviewStore } from './store.ts';
import type { ReviewQueueRecord } from './types.ts';

/** Queues with sources, per organization, kept for a few seconds (a run does not read the queue table). */
const CACHE_MS = 5_000;
const cache = new WeakMap<Store, Map<string, { at: number; queues: ReviewQueueRecord[] }>>();

export function forgetQueues(store: Store, orgId: string): void {
  cache.get(store)?.delete(orgId);
}

async function queuesWithSources(store: Store, orgId: string): Promise<ReviewQueueRecord[]> {
  const perStore = cache.get(store) ?? new Map();
  cache.set(store, perStore);
  const hit = perStore.get(orgId);
  if (hit && Date.now() - hit.at < CACHE_MS) return hit.queues;
  const queues: ReviewQueueRecord[] = [];
  let after: { created_at: string; id: string } | undefined;
  do {
    const page = await reviewStore(store).listQueues(orgId, { limit: 200, after });
    queues.push(...page.items.filter((q) => Object.values(q.sources).some((v) => v !== undefined && v !== false)));
    after = page.last;
  } while (after);
  perStore.set(orgId, { at: Date.now(), queues });
  return queues;
}

type ResultLike = { evaluator_id: string; score: number | null; error?: string | null; spread?: number | null; confidence?: number | null };

/** The first source of the queue that this run matches, or null. `random` is injectable for tests. */
export function matchingSource(q: ReviewQueueRecord, log: ExecutionLogRecord, random: () => number = Math.random): string | null {
  if (log.type === 'comparison') return null;
  if (q.judge_id ? log.judge_id !== q.judge_id : !log.evaluator_results.some((r) => q.evaluator_ids.includes(r.evaluator_id))) return null;
  const results = (log.evaluator_results as ResultLike[]).filter((r) => q.evaluator_ids.includes(r.evaluator_id));
  const s = q.sources;
  const ruleId = (log as { evaluation_rule_id?: string | null }).evaluation_rule_id;
  if (s.evaluation_rule_ids?.length && ruleId && s.evaluation_rule_ids.includes(ruleId)) return 'evaluation_rule_ids';
  if (s.critical_failures && results.some((r) => (r.error ?? null) !== null || r.score === 0)) return 'critical_failures';
  if (s.jury_spread_above !== undefined && results.some((r) => typeof r.spread === 'number' && r.spread > s.jury_spread_above!)) return 'jury_spread_above';
  if (s.confidence_below !== undefined && results.some((r) => typeof r.confidence === 'number' && r.confidence < s.confidence_below!)) return 'confidence_below';
  if (s.sample_rate !== undefined && s.sample_rate > 0 && random() < s.sample_rate) return 'sample_rate';
  return null;
}

/** Adds the run to every queue of its organization whose sources match it; answers the queue ids. */
export async function feedReviewQueues(store: Store, log: ExecutionLogRecord): Promise<string[]> {
  const fed: string[] = [];
  for (const q of await queuesWithSources(store, log.org_id)) {
    const source = matchingSource(q, log);
    if (!source) continue;
    const added = await reviewStore(store).addItems(q.id, [
      { id: reviewId('rvi'), queue_id: q.id, execution_log_id: log.id, source, done: 0, adjudicated_at: null, created_at: new Date().toISOString() },
    ]);
    if (added.length) fed.push(q.id);
  }
  return fed;
}
