// Review queues (SPEC section 17): the records and the store contract of the review room. Kept beside
// the Store (not in it): reviewStore(store) in ./store.ts gives the implementation for either store.
import type { ExecutionLogRecord, Page, PageQuery } from '../store/types.ts';

/** What feeds a queue automatically as runs happen (all optional; none = items only by hand). */
export interface ReviewSources {
  confidence_below?: number;
  jury_spread_above?: number;
  critical_failures?: boolean;
  sample_rate?: number;
  evaluation_rule_ids?: string[];
}

export interface ReviewQueueRecord {
  id: string;
  org_id: string;
  name: string;
  judge_id: string | null;
  /** The evaluators a person scores on each item (the judge's at creation, or those given). */
  evaluator_ids: string[];
  annotators_per_item: number;
  lease_seconds: number;
  sources: ReviewSources;
  /** Whether the review page shows the judge's justification before the person has scored. */
  show_justification: boolean;
  created_at: string;
  updated_at: string;
}

/** One execution log in one queue. `done` counts completed annotators; the item is open while done < annotators_per_item. */
export interface ReviewItemRecord {
  id: string;
  queue_id: string;
  execution_log_id: string;
  /** How it came in: `manual`, or the source that matched (`sample_rate`, `jury_spread_above`, ...). */
  source: string;
  done: number;
  adjudicated_at: string | null;
  created_at: string;
}

export type LeaseState = 'leased' | 'done' | 'skipped';

/** One person's hold on one item: at most one per (item, annotator). */
export interface ReviewLeaseRecord {
  item_id: string;
  queue_id: string;
  annotator_id: string;
  state: LeaseState;
  expires_at: string;
  reason: string | null;
  created_at: string;
  updated_at: string;
}

/** One person's score for one evaluator on one item: at most one per (item, evaluator, annotator). */
export interface ReviewLabelRecord {
  id: string;
  queue_id: string;
  item_id: string;
  execution_log_id: string;
  evaluator_id: string;
  annotator_id: string;
  score: number;
  note: string | null;
  created_at: string;
}

export interface ReviewCounts {
  queued: number;
  leased: number;
  done: number;
  skipped: number;
}

/** Why a submit or skip was refused (the domain turns it into the caller's error). */
export type LeaseOutcome = 'ok' | 'not_leased' | 'expired' | 'already_done' | 'already_skipped' | 'no_item';

export interface ReviewStore {
  createQueue(q: ReviewQueueRecord): Promise<void>;
  getQueue(id: string): Promise<ReviewQueueRecord | null>;
  /** Newest first. */
  listQueues(orgId: string, page: PageQuery): Promise<Page<ReviewQueueRecord>>;
  updateQueue(q: ReviewQueueRecord): Promise<boolean>;
  /** The queue with its items, leases and labels. */
  deleteQueue(id: string): Promise<boolean>;
  /** Adds the items whose log is not in the queue yet; answers the ones added. */
  addItems(queueId: string, items: ReviewItemRecord[]): Promise<ReviewItemRecord[]>;
  getItem(queueId: string, itemId: string): Promise<ReviewItemRecord | null>;
  /** Oldest first (by id); `after` is the previous page's last item. */
  listItems(queueId: string, page: PageQuery): Promise<Page<ReviewItemRecord>>;
  listLeases(queueId: string, itemIds: string[]): Promise<ReviewLeaseRecord[]>;
  counts(queueId: string, annotatorsPerItem: number, now: string): Promise<ReviewCounts>;
  /**
   * Leases the oldest open item this annotator holds nothing on (or only an expired lease) and that
   * fewer than `annotators_per_item` people have done or hold unexpired: atomically, so that several
   * instances never hand one item to more people than asked. Null when none is left for them.
   */
  next(queue: ReviewQueueRecord, annotatorId: string, now: string, expiresAt: string): Promise<{ item: ReviewItemRecord; lease: ReviewLeaseRecord } | null>;
  /**
   * `next` as the route needs it, in as few round trips as the store can: the queue (null when it
   * does not exist or is not `orgId`'s), the lease (expiring after the queue's lease_seconds), and
   * the item's log when the store read it in the same step (`log` undefined: the caller reads it).
   */
  nextInQueue(
    queueId: string,
    orgId: string,
    annotatorId: string,
    now: string,
  ): Promise<{ queue: ReviewQueueRecord; got: { item: ReviewItemRecord; lease: ReviewLeaseRecord } | null; log?: ExecutionLogRecord | null } | null>;
  /**
   * What a submit reads, in as few round trips as the store can: the queue (null when it does not
   * exist), the item (null when it is not this queue's) and its log when the store read it in the
   * same step (`log` undefined: the caller reads it).
   */
  itemInQueue(
    queueId: string,
    itemId: string,
  ): Promise<{ queue: ReviewQueueRecord; item: ReviewItemRecord | null; log?: Pick<ExecutionLogRecord, 'id' | 'org_id' | 'evaluator_results'> | null } | null>;
  /** Records the labels and completes the annotator's unexpired lease, all or nothing. */
  submit(queue: ReviewQueueRecord, itemId: string, annotatorId: string, labels: ReviewLabelRecord[], now: string): Promise<LeaseOutcome>;
  /** Gives the item back: the lease becomes `skipped` with the reason. */
  skip(queueId: string, itemId: string, annotatorId: string, reason: string, now: string): Promise<LeaseOutcome>;
  /** Every label of the queue (agreement and disagreements read them all). */
  listLabels(queueId: string): Promise<ReviewLabelRecord[]>;
  setAdjudicated(queueId: string, itemId: string, at: string): Promise<boolean>;
}
