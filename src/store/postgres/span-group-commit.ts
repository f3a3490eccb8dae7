// Group commit for received spans (issue 28): the batches of concurrent OTLP requests of one
// organization are stored by one statement, so PostgreSQL parses, plans, counts, checks the cap and
// commits once for all of them instead of once per request. One statement per organization (and cap)
// is in flight at a time: the organization's count row is updated by every insert, so its statements
// would take turns at that row anyway; requests arriving meanwhile wait and go together next.
//
// Each request is answered only after the statement holding its spans has committed. When the shared
// statement fails for a reason that may be one request's (the cap passed, a value PostgreSQL refuses),
// nothing of it stayed (one statement in autocommit), and each request is stored again on its own, in
// arrival order, so the outcome lands on exactly the requests it concerns, as without grouping. An
// unreachable database is every request's failure and is answered to all of them.
import type { Span } from '../../traces/types.ts';

export interface SpanWrite {
  inserted: number;
  duplicates: number;
  refused: number;
  stored: Span[];
}

export interface SpanWriter {
  /** Stores `spans` (distinct keys) in one statement; answers the keys (`trace:span`) it stored, or throws with nothing stored. */
  insertTogether(orgId: string, spans: Span[], maxSpans: number): Promise<string[]>;
  /** Stores one request's spans (distinct keys) on its own, deciding the cap exactly. */
  insertAlone(orgId: string, spans: Span[], maxSpans: number): Promise<SpanWrite>;
  /** True for a failure that concerns every request (the database unreachable), not one request's spans. */
  isEveryones(err: unknown): boolean;
}

interface Waiting {
  spans: Span[];
  resolve: (w: SpanWrite) => void;
  reject: (err: unknown) => void;
}

const keyOf = (s: Span) => `${s.trace_id}:${s.span_id}`;

export class SpanGroupCommit {
  private readonly queues = new Map<string, Waiting[]>();

  /** `maxGroupSpans` bounds one statement's size; a single request larger than that still goes whole. */
  constructor(
    private readonly writer: SpanWriter,
    private readonly maxGroupSpans = 5000,
  ) {}

  /** Stores one request's spans (distinct keys), grouped with the organization's other waiting requests. */
  insert(orgId: string, spans: Span[], maxSpans: number): Promise<SpanWrite> {
    return new Promise((resolve, reject) => {
      const key = `${orgId}\u0000${maxSpans}`;
      const queue = this.queues.get(key);
      if (queue) queue.push({ spans, resolve, reject });
      else {
        const fresh = [{ spans, resolve, reject }];
        this.queues.set(key, fresh);
        void this.drain(key, orgId, maxSpans, fresh);
      }
    });
  }

  /** Stores the queue's requests group by group until none waits; the queue is then forgotten. */
  private async drain(key: string, orgId: string, maxSpans: number, queue: Waiting[]) {
    while (queue.length) {
      let n = 0;
      let spans = 0;
      while (n < queue.length && (n === 0 || spans + queue[n].spans.length <= this.maxGroupSpans)) spans += queue[n++].spans.length;
      await this.store(orgId, maxSpans, queue.splice(0, n));
    }
    this.queues.delete(key);
  }

  /** Settles every request of `group`; never throws. */
  private async store(orgId: string, maxSpans: number, group: Waiting[]) {
    if (group.length > 1) {
      // A span in two requests of the group is the earlier request's, as if they came one by one.
      const owner = new Set<string>();
      const sent = group.map((w) => w.spans.filter((s) => !owner.has(keyOf(s)) && owner.add(keyOf(s))));
      let keys: Set<string> | undefined;
      try {
        keys = new Set(await this.writer.insertTogether(orgId, sent.flat(), maxSpans));
      } catch (err) {
        if (this.writer.isEveryones(err)) {
          for (const w of group) w.reject(err);
          return;
        }
      }
      if (keys) {
        group.forEach((w, i) => {
          const stored = sent[i].filter((s) => keys.has(keyOf(s)));
          w.resolve({ inserted: stored.length, duplicates: w.spans.length - stored.length, refused: 0, stored });
        });
        return;
      }
    }
    for (const w of group) {
      try {
        w.resolve(await this.writer.insertAlone(orgId, w.spans, maxSpans));
      } catch (err) {
        w.reject(err);
      }
    }
  }
}
