// The JSON store's review queues in memory, and how they are read from disk: review.json (a snapshot)
// and review.journal.jsonl beside it (every change since, one line each, numbered, in order). Every change is a
// ReviewChange applied by `apply`, both when it happens and when the journal is replayed at start, so
// a replay rebuilds exactly what the process held. The snapshot carries the number of the last change
// it holds (`journal_seq`); replay skips lines up to it, so a crash between writing a snapshot and
// emptying the journal applies nothing twice (a submit's `done + 1` is not idempotent).
import fs from 'node:fs';
import path from 'node:path';
import { type JournalFiles, type JournalScan, replayJournals } from '../store/journal.ts';
import type { ReviewItemRecord, ReviewLabelRecord, ReviewLeaseRecord, ReviewQueueRecord } from './types.ts';

export interface ReviewData {
  queues: Record<string, ReviewQueueRecord>;
  items: Record<string, ReviewItemRecord[]>;
  leases: Record<string, ReviewLeaseRecord[]>;
  labels: Record<string, ReviewLabelRecord[]>;
}

/** One change of the review data, as the journal holds it. */
export type ReviewChange =
  | { k: 'queue'; queue: ReviewQueueRecord }
  | { k: 'delete'; queue_id: string }
  | { k: 'items'; queue_id: string; items: ReviewItemRecord[] }
  | { k: 'lease'; lease: ReviewLeaseRecord }
  | { k: 'done'; item_id: string; annotator_id: string; at: string; labels: ReviewLabelRecord[] }
  | { k: 'skip'; item_id: string; annotator_id: string; reason: string; at: string }
  | { k: 'adjudicated'; item_id: string; at: string };

export const SNAPSHOT = 'review.json';
/** The snapshot and its journal (src/store/journal.ts), in the data directory. */
export const REVIEW_FILES = (dataDir: string): JournalFiles => ({ dir: dataDir, snapshot: SNAPSHOT, journal: 'review.journal.jsonl' });

const leaseKey = (itemId: string, annotatorId: string) => `${itemId}\u0000${annotatorId}`;
const CHANGES = new Set(['queue', 'delete', 'items', 'lease', 'done', 'skip', 'adjudicated']);

/** A journal line that can be applied: a numbered change of a known kind. */
function isChangeLine(v: unknown): v is ReviewChange & { s: number } {
  return typeof v === 'object' && v !== null && Number.isInteger((v as { s?: unknown }).s) && CHANGES.has((v as { k?: unknown }).k as string);
}

export class ReviewState {
  data: ReviewData = { queues: {}, items: {}, leases: {}, labels: {} };
  /** The number of the last change applied. */
  seq = 0;
  /** Leases by (item, annotator), items by id, and leases by item (rebuilt on load). */
  readonly leaseIndex = new Map<string, ReviewLeaseRecord>();
  readonly itemIndex = new Map<string, ReviewItemRecord>();
  readonly itemLeases = new Map<string, ReviewLeaseRecord[]>();
  /** Per queue: every item before this position is done (where `next` starts looking); a hint, reset when a queue changes. */
  readonly doneBefore = new Map<string, number>();

  constructor(snapshot?: Partial<ReviewData> & { journal_seq?: number }) {
    if (snapshot) {
      this.seq = snapshot.journal_seq ?? 0;
      for (const t of ['queues', 'items', 'leases', 'labels'] as const) (this.data[t] as unknown) = snapshot[t] ?? {};
    }
    // Tables keyed by ids from the URL: no prototype, so `toString` or `__proto__` is no queue (h-harden fuzz).
    for (const t of ['queues', 'items', 'leases', 'labels'] as const) this.data[t] = Object.assign(Object.create(null), this.data[t]);
    for (const items of Object.values(this.data.items)) for (const i of items) this.itemIndex.set(i.id, i);
    for (const leases of Object.values(this.data.leases)) for (const l of leases) this.indexLease(l);
  }

  lease(itemId: string, annotatorId: string): ReviewLeaseRecord | undefined {
    return this.leaseIndex.get(leaseKey(itemId, annotatorId));
  }

  private indexLease(l: ReviewLeaseRecord): void {
    this.leaseIndex.set(leaseKey(l.item_id, l.annotator_id), l);
    const list = this.itemLeases.get(l.item_id) ?? [];
    list.push(l);
    this.itemLeases.set(l.item_id, list);
  }

  /** Applies one change (the caller has checked that it may happen); answers its number. */
  apply(change: ReviewChange, seq = this.seq + 1): number {
    this.seq = seq;
    const d = this.data;
    switch (change.k) {
      case 'queue':
        d.queues[change.queue.id] = change.queue;
        for (const t of ['items', 'leases', 'labels'] as const) d[t][change.queue.id] ??= [];
        // annotators_per_item may have grown: done items can be open again.
        this.doneBefore.delete(change.queue.id);
        break;
      case 'delete':
        for (const i of d.items[change.queue_id] ?? []) this.itemIndex.delete(i.id);
        for (const l of d.leases[change.queue_id] ?? []) {
          this.leaseIndex.delete(leaseKey(l.item_id, l.annotator_id));
          this.itemLeases.delete(l.item_id);
        }
        for (const t of ['queues', 'items', 'leases', 'labels'] as const) delete d[t][change.queue_id];
        this.doneBefore.delete(change.queue_id);
        break;
      case 'items':
        for (const item of change.items) {
          d.items[change.queue_id]?.push(item);
          this.itemIndex.set(item.id, item);
        }
        break;
      case 'lease': {
        const mine = this.lease(change.lease.item_id, change.lease.annotator_id);
        if (mine) Object.assign(mine, change.lease);
        else {
          d.leases[change.lease.queue_id]?.push(change.lease);
          this.indexLease(change.lease);
        }
        break;
      }
      // The `?`s: a replay after a journal line was set aside as damaged must not stop the start.
      case 'done': {
        const lease = this.lease(change.item_id, change.annotator_id);
        if (lease) Object.assign(lease, { state: 'done', updated_at: change.at });
        const item = this.itemIndex.get(change.item_id);
        if (item) item.done += 1;
        if (item) d.labels[item.queue_id]?.push(...change.labels);
        break;
      }
      case 'skip': {
        const lease = this.lease(change.item_id, change.annotator_id);
        if (lease) Object.assign(lease, { state: 'skipped', reason: change.reason, updated_at: change.at });
        break;
      }
      case 'adjudicated': {
        const item = this.itemIndex.get(change.item_id);
        if (item) item.adjudicated_at = change.at;
        break;
      }
    }
    return seq;
  }

  /** The snapshot's text: the data and the number of the last change it holds. */
  snapshot(): string {
    return JSON.stringify({ journal_seq: this.seq, ...this.data });
  }
}

/**
 * Reads the snapshot and replays the journals over it (the one a compaction left, then the current
 * one), changing no file (src/store/journal.ts).
 */
export function loadReviewState(dataDir: string): { state: ReviewState; scan: JournalScan } {
  const snapshotFile = path.join(dataDir, SNAPSHOT);
  const state = new ReviewState(fs.existsSync(snapshotFile) ? JSON.parse(fs.readFileSync(snapshotFile, 'utf8')) : undefined);
  // Lines up to the snapshot's number are in it already; the rest are replayed in file order.
  const scan = replayJournals(REVIEW_FILES(dataDir), state.seq, isChangeLine, (change, seq) => state.apply(change, seq), 'a review change');
  return { state, scan };
}
