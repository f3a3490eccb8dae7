// The JSON store's review queues: review.json (a snapshot) and review.journal.jsonl (every change
// since, one line each), beside db.json; the data directory's lock makes this process their only
// writer (json-review-state.ts reads them, src/store/journal.ts writes them). Checks and changes
// happen synchronously between awaits, so a lease is decided atomically; each change is then one
// journal line, synced before the caller is answered (a lease: written, synced within 200 ms).
import { newestFirst, type Page, type PageQuery } from '../store/types.ts';
import { Journal } from '../store/journal.ts';
import { loadReviewState, REVIEW_FILES, type ReviewChange, type ReviewState } from './json-review-state.ts';
import type { LeaseOutcome, ReviewCounts, ReviewItemRecord, ReviewLabelRecord, ReviewLeaseRecord, ReviewQueueRecord, ReviewStore } from './types.ts';

export class JsonReviewStore implements ReviewStore {
  private readonly state: ReviewState;
  private readonly journal: Journal;

  /** `compactBytes`: the journal size that triggers a compaction (default: the snapshot's size, at least 4 MiB). */
  constructor(dataDir: string, opts: { compactBytes?: number } = {}) {
    const { state, scan } = loadReviewState(dataDir);
    this.state = state;
    this.journal = new Journal(REVIEW_FILES(dataDir), scan, () => state.snapshot(), opts.compactBytes);
  }

  private get data() {
    return this.state.data;
  }

  /** Applies a change in memory and writes its journal line at once; resolves when the line is on disk (a lease: when written). */
  private change(change: ReviewChange): Promise<void> {
    const seq = this.state.apply(change);
    return this.journal.append(JSON.stringify({ s: seq, ...change }), change.k !== 'lease');
  }

  /** Writes the snapshot and lets the files go (the JSON store calls this before it releases its lock). */
  close(): Promise<void> {
    return this.journal.close();
  }

  async createQueue(q: ReviewQueueRecord) {
    await this.change({ k: 'queue', queue: structuredClone(q) });
  }
  async getQueue(id: string) {
    return structuredClone(this.data.queues[id] ?? null);
  }
  async listQueues(orgId: string, page: PageQuery): Promise<Page<ReviewQueueRecord>> {
    const rows = Object.values(this.data.queues)
      .filter((q) => q.org_id === orgId)
      .sort(newestFirst);
    const start = page.after ? rows.findIndex((q) => newestFirst(page.after!, q) < 0) : 0;
    const slice = start < 0 ? [] : rows.slice(start, start + page.limit);
    const more = start >= 0 && start + page.limit < rows.length;
    return { items: structuredClone(slice), ...(more ? { last: { created_at: slice.at(-1)!.created_at, id: slice.at(-1)!.id } } : {}) };
  }
  async updateQueue(q: ReviewQueueRecord) {
    if (!this.data.queues[q.id]) return false;
    await this.change({ k: 'queue', queue: structuredClone(q) });
    return true;
  }
  async deleteQueue(id: string) {
    if (!this.data.queues[id]) return false;
    await this.change({ k: 'delete', queue_id: id });
    return true;
  }

  async addItems(queueId: string, items: ReviewItemRecord[]) {
    const list = this.data.items[queueId];
    if (!list) return [];
    const have = new Set(list.map((i) => i.execution_log_id));
    const added: ReviewItemRecord[] = [];
    for (const item of items) {
      if (have.has(item.execution_log_id)) continue;
      have.add(item.execution_log_id);
      added.push(item);
    }
    if (added.length) await this.change({ k: 'items', queue_id: queueId, items: structuredClone(added) });
    return added;
  }
  async getItem(queueId: string, itemId: string) {
    const item = this.state.itemIndex.get(itemId);
    return item && item.queue_id === queueId ? structuredClone(item) : null;
  }
  async listItems(queueId: string, page: PageQuery): Promise<Page<ReviewItemRecord>> {
    const list = this.data.items[queueId] ?? [];
    const start = page.after ? list.findIndex((i) => i.id > page.after!.id) : 0;
    const slice = start < 0 ? [] : list.slice(start, start + page.limit);
    const more = start >= 0 && start + page.limit < list.length;
    return { items: structuredClone(slice), ...(more ? { last: { created_at: slice.at(-1)!.created_at, id: slice.at(-1)!.id } } : {}) };
  }
  async listLeases(queueId: string, itemIds: string[]) {
    const wanted = new Set(itemIds);
    return structuredClone((this.data.leases[queueId] ?? []).filter((l) => wanted.has(l.item_id)));
  }
  async counts(queueId: string, n: number, now: string): Promise<ReviewCounts> {
    const active = new Set<string>();
    const skipped = new Set<string>();
    for (const l of this.data.leases[queueId] ?? []) {
      if (l.state === 'leased' && l.expires_at > now) active.add(l.item_id);
      if (l.state === 'skipped') skipped.add(l.item_id);
    }
    const c: ReviewCounts = { queued: 0, leased: 0, done: 0, skipped: 0 };
    for (const i of this.data.items[queueId] ?? []) {
      if (i.done >= n) c.done++;
      else if (active.has(i.id)) c.leased++;
      else if (skipped.has(i.id)) c.skipped++;
      else c.queued++;
    }
    return c;
  }

  private activeLeases(itemId: string, now: string): number {
    let count = 0;
    for (const l of this.state.itemLeases.get(itemId) ?? []) if (l.state === 'leased' && l.expires_at > now) count++;
    return count;
  }

  async next(queue: ReviewQueueRecord, annotatorId: string, now: string, expiresAt: string) {
    const list = this.data.items[queue.id] ?? [];
    const wanted = queue.annotators_per_item;
    // Done items stay in the list: start after the leading run of them (so `next` does not walk a
    // worked queue's history each time).
    let from = this.state.doneBefore.get(queue.id) ?? 0;
    while (from < list.length && list[from].done >= wanted) from++;
    this.state.doneBefore.set(queue.id, from);
    for (let at = from; at < list.length; at++) {
      const item = list[at];
      if (item.done >= wanted) continue;
      const mine = this.state.lease(item.id, annotatorId);
      if (mine && (mine.state !== 'leased' || mine.expires_at > now)) continue;
      if (item.done + this.activeLeases(item.id, now) >= wanted) continue;
      const lease: ReviewLeaseRecord = mine
        ? { ...mine, state: 'leased', expires_at: expiresAt, reason: null, updated_at: now }
        : { item_id: item.id, queue_id: queue.id, annotator_id: annotatorId, state: 'leased', expires_at: expiresAt, reason: null, created_at: now, updated_at: now };
      const answer = { item: structuredClone(item), lease: structuredClone(lease) };
      await this.change({ k: 'lease', lease });
      return answer;
    }
    return null;
  }

  async nextInQueue(queueId: string, orgId: string, annotatorId: string, now: string) {
    const queue = this.data.queues[queueId];
    if (!queue || queue.org_id !== orgId) return null;
    const expires = new Date(Date.parse(now) + queue.lease_seconds * 1000).toISOString();
    return { queue: structuredClone(queue), got: await this.next(queue, annotatorId, now, expires) };
  }

  async itemInQueue(queueId: string, itemId: string) {
    const queue = this.data.queues[queueId];
    return queue ? { queue: structuredClone(queue), item: await this.getItem(queueId, itemId) } : null;
  }

  private check(queueId: string, itemId: string, annotatorId: string, now: string): { outcome: LeaseOutcome; lease?: ReviewLeaseRecord; item?: ReviewItemRecord } {
    const item = this.state.itemIndex.get(itemId);
    if (!item || item.queue_id !== queueId) return { outcome: 'no_item' };
    const lease = this.state.lease(itemId, annotatorId);
    if (!lease) return { outcome: 'not_leased' };
    if (lease.state === 'done') return { outcome: 'already_done' };
    if (lease.state === 'skipped') return { outcome: 'already_skipped' };
    if (lease.expires_at <= now) return { outcome: 'expired' };
    return { outcome: 'ok', lease, item };
  }

  async submit(queue: ReviewQueueRecord, itemId: string, annotatorId: string, labels: ReviewLabelRecord[], now: string) {
    const { outcome } = this.check(queue.id, itemId, annotatorId, now);
    if (outcome !== 'ok') return outcome;
    await this.change({ k: 'done', item_id: itemId, annotator_id: annotatorId, at: now, labels: structuredClone(labels) });
    return 'ok' as const;
  }
  async skip(queueId: string, itemId: string, annotatorId: string, reason: string, now: string) {
    const { outcome } = this.check(queueId, itemId, annotatorId, now);
    if (outcome !== 'ok') return outcome;
    await this.change({ k: 'skip', item_id: itemId, annotator_id: annotatorId, reason, at: now });
    return 'ok' as const;
  }
  async listLabels(queueId: string) {
    return structuredClone(this.data.labels[queueId] ?? []);
  }
  async setAdjudicated(queueId: string, itemId: string, at: string) {
    const item = this.state.itemIndex.get(itemId);
    if (!item || item.queue_id !== queueId) return false;
    await this.change({ k: 'adjudicated', item_id: itemId, at });
    return true;
  }
}
