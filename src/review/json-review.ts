// The JSON store's review queues: one file, review.json, beside db.json (the data directory's lock
// makes this process its only writer). Checks and changes happen synchronously between awaits, so a
// lease is decided atomically; the file is then written whole (group commit, temp file + rename).
import fs from 'node:fs';
import path from 'node:path';
import { GroupCommit, writeFileDurably } from '../store/json-files.ts';
import { newestFirst, type Page, type PageQuery } from '../store/types.ts';
import type { LeaseOutcome, ReviewCounts, ReviewItemRecord, ReviewLabelRecord, ReviewLeaseRecord, ReviewQueueRecord, ReviewStore } from './types.ts';

interface ReviewData {
  queues: Record<string, ReviewQueueRecord>;
  items: Record<string, ReviewItemRecord[]>;
  leases: Record<string, ReviewLeaseRecord[]>;
  labels: Record<string, ReviewLabelRecord[]>;
}

const leaseKey = (itemId: string, annotatorId: string) => `${itemId}\u0000${annotatorId}`;

export class JsonReviewStore implements ReviewStore {
  private data: ReviewData = { queues: {}, items: {}, leases: {}, labels: {} };
  /** Per queue: leases by (item, annotator), and items by id; rebuilt on load. */
  private leaseIndex = new Map<string, ReviewLeaseRecord>();
  private itemIndex = new Map<string, ReviewItemRecord>();
  /** Leases by item: `next` counts an item's live leases without scanning the queue's. */
  private itemLeases = new Map<string, ReviewLeaseRecord[]>();
  private readonly file: string;
  private readonly commit: GroupCommit;

  constructor(dataDir: string) {
    this.file = path.join(dataDir, 'review.json');
    if (fs.existsSync(this.file)) this.data = JSON.parse(fs.readFileSync(this.file, 'utf8')) as ReviewData;
    // Tables keyed by ids from the URL: no prototype, so `toString` or `__proto__` is no queue (h-harden fuzz).
    for (const t of ['queues', 'items', 'leases', 'labels'] as const) this.data[t] = Object.assign(Object.create(null), this.data[t]);
    for (const items of Object.values(this.data.items)) for (const i of items) this.itemIndex.set(i.id, i);
    for (const leases of Object.values(this.data.leases)) for (const l of leases) this.indexLease(l);
    this.commit = new GroupCommit(() => writeFileDurably(this.file, JSON.stringify(this.data)));
  }

  private save = () => this.commit.commit();

  private indexLease(l: ReviewLeaseRecord): void {
    this.leaseIndex.set(leaseKey(l.item_id, l.annotator_id), l);
    const list = this.itemLeases.get(l.item_id) ?? [];
    list.push(l);
    this.itemLeases.set(l.item_id, list);
  }

  async createQueue(q: ReviewQueueRecord) {
    this.data.queues[q.id] = structuredClone(q);
    this.data.items[q.id] = [];
    this.data.leases[q.id] = [];
    this.data.labels[q.id] = [];
    await this.save();
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
    this.data.queues[q.id] = structuredClone(q);
    await this.save();
    return true;
  }
  async deleteQueue(id: string) {
    if (!this.data.queues[id]) return false;
    for (const i of this.data.items[id] ?? []) this.itemIndex.delete(i.id);
    for (const l of this.data.leases[id] ?? []) {
      this.leaseIndex.delete(leaseKey(l.item_id, l.annotator_id));
      this.itemLeases.delete(l.item_id);
    }
    delete this.data.queues[id];
    delete this.data.items[id];
    delete this.data.leases[id];
    delete this.data.labels[id];
    await this.save();
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
      const copy = structuredClone(item);
      list.push(copy);
      this.itemIndex.set(copy.id, copy);
      added.push(item);
    }
    if (added.length) await this.save();
    return added;
  }
  async getItem(queueId: string, itemId: string) {
    const item = this.itemIndex.get(itemId);
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
    for (const l of this.itemLeases.get(itemId) ?? []) if (l.state === 'leased' && l.expires_at > now) count++;
    return count;
  }

  async next(queue: ReviewQueueRecord, annotatorId: string, now: string, expiresAt: string) {
    const list = this.data.items[queue.id] ?? [];
    for (const item of list) {
      if (item.done >= queue.annotators_per_item) continue;
      const mine = this.leaseIndex.get(leaseKey(item.id, annotatorId));
      if (mine && (mine.state !== 'leased' || mine.expires_at > now)) continue;
      if (item.done + this.activeLeases(item.id, now) >= queue.annotators_per_item) continue;
      let lease: ReviewLeaseRecord;
      if (mine) {
        Object.assign(mine, { state: 'leased', expires_at: expiresAt, reason: null, updated_at: now });
        lease = mine;
      } else {
        lease = { item_id: item.id, queue_id: queue.id, annotator_id: annotatorId, state: 'leased', expires_at: expiresAt, reason: null, created_at: now, updated_at: now };
        this.data.leases[queue.id].push(lease);
        this.indexLease(lease);
      }
      const answer = { item: structuredClone(item), lease: structuredClone(lease) };
      await this.save();
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

  private check(queueId: string, itemId: string, annotatorId: string, now: string): { outcome: LeaseOutcome; lease?: ReviewLeaseRecord; item?: ReviewItemRecord } {
    const item = this.itemIndex.get(itemId);
    if (!item || item.queue_id !== queueId) return { outcome: 'no_item' };
    const lease = this.leaseIndex.get(leaseKey(itemId, annotatorId));
    if (!lease) return { outcome: 'not_leased' };
    if (lease.state === 'done') return { outcome: 'already_done' };
    if (lease.state === 'skipped') return { outcome: 'already_skipped' };
    if (lease.expires_at <= now) return { outcome: 'expired' };
    return { outcome: 'ok', lease, item };
  }

  async submit(queue: ReviewQueueRecord, itemId: string, annotatorId: string, labels: ReviewLabelRecord[], now: string) {
    const { outcome, lease, item } = this.check(queue.id, itemId, annotatorId, now);
    if (outcome !== 'ok') return outcome;
    Object.assign(lease!, { state: 'done', updated_at: now });
    item!.done += 1;
    this.data.labels[queue.id].push(...structuredClone(labels));
    await this.save();
    return 'ok' as const;
  }
  async skip(queueId: string, itemId: string, annotatorId: string, reason: string, now: string) {
    const { outcome, lease } = this.check(queueId, itemId, annotatorId, now);
    if (outcome !== 'ok') return outcome;
    Object.assign(lease!, { state: 'skipped', reason, updated_at: now });
    await this.save();
    return 'ok' as const;
  }
  async listLabels(queueId: string) {
    return structuredClone(this.data.labels[queueId] ?? []);
  }
  async setAdjudicated(queueId: string, itemId: string, at: string) {
    const item = this.itemIndex.get(itemId);
    if (!item || item.queue_id !== queueId) return false;
    item.adjudicated_at = at;
    await this.save();
    return true;
  }
}
