// The PostgreSQL store's review queues (migrations/016_review_queues.sql). Every change to an item's
// leases or labels happens in a transaction that holds the item's row lock; submit and skip are one
// call each of review_submit and review_skip (migrations/027_review_submit.sql); `next` is one call of
// review_next (migrations/025_review_next.sql), which takes the oldest open item with FOR UPDATE
// SKIP LOCKED and, once the lock is held, checks again with a fresh statement (READ COMMITTED: it sees
// whatever the previous holder committed), so two instances never lease one item to more people than
// asked. A lease commits without waiting for the WAL flush (synchronous_commit off for that
// transaction only): a crash may forget a lease of the last moment, which only hands that item out
// again; labels and completions (submit) are committed durably. A submit that read a lease commits
// after it in the WAL, so once the submit is on disk the lease is too: a forgotten lease is never
// behind a stored annotation, and its holder's submit is refused (not_leased), so no item gets more
// annotations than annotators_per_item. Migration 030 leaves review_items_open the only index that
// gives next's candidate scan its order (test/review-lease-durability.test.ts).
import type pg from 'pg';
import { decodeRow, encodeParam, iso, json, LOG_COLUMNS, logFromRow, recordFromRow, type Row } from '../store/postgres/codecs.ts';
import { inTransaction } from '../store/postgres/transaction.ts';
import type { ExecutionLogRecord, Page, PageQuery } from '../store/types.ts';
import type { LeaseOutcome, ReviewCounts, ReviewItemRecord, ReviewLabelRecord, ReviewLeaseRecord, ReviewQueueRecord, ReviewStore } from './types.ts';

const itemFromRow = (r: Row): ReviewItemRecord => ({
  id: r.id,
  queue_id: r.queue_id,
  execution_log_id: r.execution_log_id,
  source: r.source,
  done: Number(r.done),
  adjudicated_at: iso(r.adjudicated_at),
  created_at: iso(r.created_at)!,
});
const LEASE_COLUMNS = ['item_id', 'queue_id', 'annotator_id', 'state', 'expires_at', 'reason', 'created_at', 'updated_at'] as const;
const leaseFromRow = (r: Row): ReviewLeaseRecord => recordFromRow(r, LEASE_COLUMNS);
const labelFromRow = (r: Row): ReviewLabelRecord => ({
  id: r.id,
  queue_id: r.queue_id,
  item_id: r.item_id,
  execution_log_id: r.execution_log_id,
  evaluator_id: r.evaluator_id,
  annotator_id: r.annotator_id,
  score: Number(r.score),
  note: r.note,
  created_at: iso(r.created_at)!,
});

/** The item of a row whose item columns are prefixed (review_next's, and itemInQueue's). */
const prefixedItem = (r: Row, queueId: string): ReviewItemRecord => ({
  id: r.item_id,
  queue_id: queueId,
  execution_log_id: r.item_log_id,
  source: r.item_source,
  done: Number(r.item_done),
  adjudicated_at: iso(r.item_adjudicated_at),
  created_at: iso(r.item_created_at)!,
});

/** A row of review_next: the item and the lease it gave, or null when it gave none. */
const leasedFromRow = (r: Row, annotatorId: string, now: string): { item: ReviewItemRecord; lease: ReviewLeaseRecord } | null => {
  if (r.item_id === null) return null;
  const queueId = (r.queue_record as ReviewQueueRecord).id;
  const item = prefixedItem(r, queueId);
  const lease: ReviewLeaseRecord = {
    item_id: item.id,
    queue_id: queueId,
    annotator_id: annotatorId,
    state: 'leased',
    expires_at: iso(r.lease_expires_at)!,
    reason: null,
    created_at: iso(r.lease_created_at)!,
    updated_at: now,
  };
  return { item, lease };
};

/** The log's columns that logFromRow reads (not l.*: a column added later changes neither the answer nor a prepared statement's result type). */
const LOG_SELECT = [...LOG_COLUMNS, 'extra'].map((c) => `l.${c}`).join(', ');

/**
 * The statements a reviewer's next and submit run, prepared once per connection by name (issue 31):
 * PostgreSQL then parses and plans each once per connection instead of on every call (0.15 ms of
 * planning for NEXT's join, of about 0.8 ms of PostgreSQL CPU per next). Their plans depend on no
 * statistics that could turn bad: primary-key lookups and one call of a function whose own
 * statements are planned inside it.
 */
// The log is read in a LATERAL subquery with LIMIT 1 (the primary key: at most one row anyway) so that
// it stays a lookup of that one row by id. As a plain join, the planner counts the 1,000 rows any
// set-returning function is assumed to return, and while execution_logs is small next to that (a new
// deployment: 30,000 short logs) it hashes the whole table on every `next` (a sequential scan of
// execution_logs per call) instead of looking one row up; the subquery's LIMIT keeps it from being
// turned back into that join.
export const NEXT_STATEMENT = {
  name: 'tribunal_review_next_v2',
  text: `SELECT n.*, l.* FROM review_next($1, $2, $3, $4, NULL) n
           LEFT JOIN LATERAL (SELECT ${LOG_SELECT} FROM execution_logs l WHERE l.id = n.item_log_id LIMIT 1) l ON true`,
};
// A submit checks the labels against the log's evaluator results only: it reads those (and the log's
// id and organization), not the whole log, which logFromRow would decode field by field (request,
// response, contexts...) for nothing.
const ITEM_IN_QUEUE = {
  name: 'tribunal_review_item_in_queue_v2',
  text: `SELECT q.record AS queue_record, i.id AS item_id, i.execution_log_id AS item_log_id, i.source AS item_source, i.done AS item_done,
              i.adjudicated_at AS item_adjudicated_at, i.created_at AS item_created_at, l.id, l.org_id, l.evaluator_results
         FROM review_queues q
         LEFT JOIN review_items i ON i.id = $2 AND i.queue_id = q.id
         LEFT JOIN execution_logs l ON l.id = i.execution_log_id
        WHERE q.id = $1`,
};
const SUBMIT = { name: 'tribunal_review_submit_v1', text: 'SELECT review_submit($1, $2, $3, $4, $5, $6) AS outcome' };
type Statement = string | { name: string; text: string };

export class PgReviewStore implements ReviewStore {
  constructor(private readonly pool: pg.Pool) {}

  private async q(sql: Statement, params: unknown[] = [], c: Pick<pg.Pool, 'query'> = this.pool) {
    const values = params.map(encodeParam);
    const result = await c.query<Row>(typeof sql === 'string' ? { text: sql, values } : { ...sql, values });
    result.rows = result.rows.map(decodeRow);
    return result;
  }

  private tx<T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    return inTransaction(this.pool, fn);
  }

  async createQueue(q: ReviewQueueRecord) {
    await this.q('INSERT INTO review_queues (id, org_id, created_at, record) VALUES ($1, $2, $3, $4)', [q.id, q.org_id, q.created_at, json(q)]);
  }
  async getQueue(id: string) {
    const { rows } = await this.q('SELECT record FROM review_queues WHERE id = $1', [id]);
    return rows.length ? (rows[0].record as ReviewQueueRecord) : null;
  }
  async listQueues(orgId: string, page: PageQuery): Promise<Page<ReviewQueueRecord>> {
    const params: unknown[] = [orgId, page.limit + 1];
    let where = 'org_id = $1';
    if (page.after) {
      params.push(page.after.created_at, page.after.id);
      where += ' AND (created_at, id) < ($3::timestamptz, $4)';
    }
    const { rows } = await this.q(`SELECT record FROM review_queues WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT $2`, params);
    const items = rows.slice(0, page.limit).map((r) => r.record as ReviewQueueRecord);
    return { items, ...(rows.length > page.limit ? { last: { created_at: items.at(-1)!.created_at, id: items.at(-1)!.id } } : {}) };
  }
  async updateQueue(q: ReviewQueueRecord) {
    const { rowCount } = await this.q('UPDATE review_queues SET record = $2 WHERE id = $1', [q.id, json(q)]);
    return (rowCount ?? 0) > 0;
  }
  async deleteQueue(id: string) {
    return this.tx(async (c) => {
      await this.q('DELETE FROM review_leases WHERE queue_id = $1', [id], c);
      await this.q('DELETE FROM review_labels WHERE queue_id = $1', [id], c);
      await this.q('DELETE FROM review_items WHERE queue_id = $1', [id], c);
      const { rowCount } = await this.q('DELETE FROM review_queues WHERE id = $1', [id], c);
      return (rowCount ?? 0) > 0;
    });
  }

  async addItems(queueId: string, items: ReviewItemRecord[]) {
    const added: ReviewItemRecord[] = [];
    for (let i = 0; i < items.length; i += 1000) {
      const chunk = items.slice(i, i + 1000);
      const { rows } = await this.q(
        `INSERT INTO review_items (id, queue_id, execution_log_id, source, done, open, created_at)
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int[], $6::boolean[], $7::timestamptz[])
         ON CONFLICT (queue_id, execution_log_id) DO NOTHING RETURNING id`,
        [
          chunk.map((x) => x.id),
          chunk.map(() => queueId),
          chunk.map((x) => x.execution_log_id),
          chunk.map((x) => x.source),
          chunk.map(() => 0),
          chunk.map(() => true),
          chunk.map((x) => x.created_at),
        ],
      );
      const ids = new Set(rows.map((r) => r.id as string));
      added.push(...chunk.filter((x) => ids.has(x.id)));
    }
    return added;
  }
  async getItem(queueId: string, itemId: string) {
    const { rows } = await this.q('SELECT * FROM review_items WHERE id = $1 AND queue_id = $2', [itemId, queueId]);
    return rows.length ? itemFromRow(rows[0]) : null;
  }
  async listItems(queueId: string, page: PageQuery): Promise<Page<ReviewItemRecord>> {
    const params: unknown[] = [queueId, page.limit + 1];
    if (page.after) params.push(page.after.id);
    const { rows } = await this.q(`SELECT * FROM review_items WHERE queue_id = $1 ${page.after ? 'AND id > $3' : ''} ORDER BY id LIMIT $2`, params);
    const items = rows.slice(0, page.limit).map(itemFromRow);
    return { items, ...(rows.length > page.limit ? { last: { created_at: items.at(-1)!.created_at, id: items.at(-1)!.id } } : {}) };
  }
  async listLeases(queueId: string, itemIds: string[]) {
    const { rows } = await this.q('SELECT * FROM review_leases WHERE queue_id = $1 AND item_id = ANY($2::text[])', [queueId, itemIds]);
    return rows.map(leaseFromRow);
  }
  async counts(queueId: string, n: number, now: string): Promise<ReviewCounts> {
    const { rows } = await this.q(
      `SELECT
         count(*) FILTER (WHERE i.done >= $2) AS done,
         count(*) FILTER (WHERE i.done < $2 AND EXISTS (SELECT 1 FROM review_leases l WHERE l.item_id = i.id AND l.state = 'leased' AND l.expires_at > $3::timestamptz)) AS leased,
         count(*) FILTER (WHERE i.done < $2 AND NOT EXISTS (SELECT 1 FROM review_leases l WHERE l.item_id = i.id AND l.state = 'leased' AND l.expires_at > $3::timestamptz)
                                           AND EXISTS (SELECT 1 FROM review_leases l WHERE l.item_id = i.id AND l.state = 'skipped')) AS skipped,
         count(*) AS total
       FROM review_items i WHERE i.queue_id = $1`,
      [queueId, n, now],
    );
    const r = rows[0];
    const [done, leased, skipped, total] = [r.done, r.leased, r.skipped, r.total].map(Number);
    return { queued: total - done - leased - skipped, leased, done, skipped };
  }

  async next(queue: ReviewQueueRecord, annotatorId: string, now: string, expiresAt: string) {
    const { rows } = await this.q('SELECT * FROM review_next($1, NULL, $2, $3, $4)', [queue.id, annotatorId, now, expiresAt]);
    return rows.length ? leasedFromRow(rows[0], annotatorId, now) : null;
  }

  /**
   * The route's whole read in one round trip (on a busy machine each round trip waits for a CPU):
   * the queue (null when it is not this organization's), the lease (migration 025's review_next, the
   * guarantees described there) and the item's log for the answer.
   */
  async nextInQueue(queueId: string, orgId: string, annotatorId: string, now: string) {
    const { rows } = await this.q(NEXT_STATEMENT, [queueId, orgId, annotatorId, now]);
    if (!rows.length) return null;
    const r = rows[0];
    const got = leasedFromRow(r, annotatorId, now);
    return { queue: r.queue_record as ReviewQueueRecord, got, log: got && r.id !== null ? logFromRow(r) : null };
  }

  /**
   * What a submit reads, in one round trip: the queue, the item (when it is the queue's) and the
   * item's log for checking the labels against (the organization is the caller's to check).
   */
  async itemInQueue(queueId: string, itemId: string) {
    const { rows } = await this.q(ITEM_IN_QUEUE, [queueId, itemId]);
    if (!rows.length) return null;
    const r = rows[0];
    const queue = r.queue_record as ReviewQueueRecord;
    if (r.item_id === null) return { queue, item: null, log: null };
    return {
      queue,
      item: prefixedItem(r, queue.id),
      log: r.id === null ? null : { id: r.id as string, org_id: r.org_id as string, evaluator_results: r.evaluator_results as ExecutionLogRecord['evaluator_results'] },
    };
  }

  /** One call of review_submit (migrations/027_review_submit.sql): the check under the item's lock, the labels and the completion, all or nothing. */
  async submit(queue: ReviewQueueRecord, itemId: string, annotatorId: string, labels: ReviewLabelRecord[], now: string) {
    const { rows } = await this.q(SUBMIT, [queue.id, itemId, annotatorId, now, queue.annotators_per_item, json(labels)]);
    return rows[0].outcome as LeaseOutcome;
  }
  async skip(queueId: string, itemId: string, annotatorId: string, reason: string, now: string) {
    const { rows } = await this.q('SELECT review_skip($1, $2, $3, $4, $5) AS outcome', [queueId, itemId, annotatorId, now, reason]);
    return rows[0].outcome as LeaseOutcome;
  }
  async listLabels(queueId: string) {
    const { rows } = await this.q('SELECT * FROM review_labels WHERE queue_id = $1 ORDER BY id', [queueId]);
    return rows.map(labelFromRow);
  }
  async setAdjudicated(queueId: string, itemId: string, at: string) {
    const { rowCount } = await this.q('UPDATE review_items SET adjudicated_at = $3 WHERE id = $1 AND queue_id = $2', [itemId, queueId, at]);
    return (rowCount ?? 0) > 0;
  }
}
