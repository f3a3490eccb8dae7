// The PostgreSQL store's spans (migrations/013_traces.sql, 023_trace_cap_check.sql, 029, 031), over the
// store's pool. A batch of spans is one statement that inserts them, adds them to the organization's
// counter row and checks the cap, undone as a whole past it; so the size cap holds with several
// instances receiving at once, while requests below the cap never wait for each other.
import type pg from 'pg';
import type { Span, SpanEvaluation, SpanEvent, SpanLogEvent, SpanRecord, TraceFilter, TracePageQuery, TraceStore, TraceSummary } from '../../traces/types.ts';
import { logEventKey, withLogEvents } from '../../traces/types.ts';
import { StoreUnavailableError } from '../types.ts';
import { isConnectionError } from './connection.ts';

type Q = Pick<pg.Pool, 'query'>;

// The rows of a batch: each short column as an array parameter (unnest, zipped by ROWS FROM), the
// records as one text of lines, split by string_to_array: JSON.stringify never writes a raw newline,
// and the record column is text (migration 031), so PostgreSQL neither parses nor unescapes a record
// (a text[] parameter would be unescaped, every quote of the JSON escaped on the way).
const SPAN_ROWS = `SELECT $1, t, s, p, n, svc, st, b, e, bn, rcv, r
  FROM ROWS FROM (unnest($2::text[]), unnest($3::text[]), unnest($4::text[]), unnest($5::text[]), unnest($6::text[]), unnest($7::text[]),
                  unnest($8::timestamptz[]), unnest($9::timestamptz[]), unnest($10::numeric[]), unnest($11::timestamptz[]), unnest(string_to_array($12::text, E'\\n')))
       AS x(t, s, p, n, svc, st, b, e, bn, rcv, r)`;
const SPAN_COLUMNS = 'trace_spans (org_id, trace_id, span_id, parent_span_id, name, service_name, status_code, start_time, end_time, start_nanos, received_at, record)';

/** The organization's count moved by the rows of `ins`, and the cap checked on the new count (migration 023). */
const COUNT_AND_CAP = `c AS (INSERT INTO trace_span_counts AS t (org_id, spans) SELECT $1, count(*) FROM ins
                    ON CONFLICT (org_id) DO UPDATE SET spans = t.spans + excluded.spans RETURNING spans)`;

// The usual batch: new spans only. A plain INSERT checks the primary key while it writes each index
// entry; ON CONFLICT would first search the key for every span, about a seventh of the statement's
// work. A span already stored (an exporter's retry) or twice in the batch fails the statement as a
// whole (unique_violation, nothing stays), and the batch is stored again by INSERT_SKIPPING_STORED.
const INSERT_NEW = `WITH ins AS (INSERT INTO ${SPAN_COLUMNS} ${SPAN_ROWS} RETURNING 1), ${COUNT_AND_CAP}
  SELECT tribunal_trace_cap((SELECT spans FROM c), $13) AS held`;

// A batch holding spans already stored: those are skipped, and the keys of the new ones returned.
const INSERT_SKIPPING = `INSERT INTO ${SPAN_COLUMNS} ${SPAN_ROWS} ON CONFLICT DO NOTHING RETURNING trace_id || ':' || span_id AS k`;
const INSERT_SKIPPING_STORED = `WITH ins AS (${INSERT_SKIPPING}), ${COUNT_AND_CAP}
  SELECT tribunal_trace_cap((SELECT spans FROM c), $13) AS held, (SELECT array_agg(k) FROM ins) AS keys`;

// A span as read: its record and its log events (migration 026), in time order then as they arrived.
const SPAN_READ = `s.record, (SELECT json_agg(l.event ORDER BY l.time_nanos, l.received_at, l.seq) FROM trace_log_events l
  WHERE l.org_id = s.org_id AND l.trace_id = s.trace_id AND l.span_id = s.span_id) AS log_events`;
// The record is the span's JSON as text (migration 031), parsed here as node-pg parsed a json column.
const spanOf = (r: { record: string; log_events: SpanEvent[] | null }) => withLogEvents(JSON.parse(r.record) as SpanRecord, r.log_events);

/** SQLSTATE raised by tribunal_trace_cap when a batch would pass the organization's span cap. */
const CAP_PASSED = 'TRB01';
/** SQLSTATE of a key already stored (or twice in one statement). */
const UNIQUE_VIOLATION = '23505';

/** The batch without its repeats (the same trace and span id twice), and how many there were. */
function dedupe(spans: Span[]): { fresh: Span[]; duplicates: number } {
  const seen = new Set<string>();
  const fresh: Span[] = [];
  for (const s of spans) {
    const k = `${s.trace_id}:${s.span_id}`;
    if (!seen.has(k)) {
      seen.add(k);
      fresh.push(s);
    }
  }
  return { fresh, duplicates: spans.length - fresh.length };
}

function spanParams(orgId: string, spans: Span[]): unknown[] {
  const org = `{"org_id":${JSON.stringify(orgId)},`;
  // Each record is the span with its org_id first: the span's own JSON, its opening brace replaced.
  let records = '';
  for (let i = 0; i < spans.length; i++) records += `${i ? '\n' : ''}${org}${JSON.stringify(spans[i]).slice(1)}`;
  return [
    orgId,
    spans.map((s) => s.trace_id),
    spans.map((s) => s.span_id),
    spans.map((s) => s.parent_span_id),
    spans.map((s) => s.name),
    spans.map((s) => s.service_name),
    spans.map((s) => s.status.code),
    spans.map((s) => s.start_time),
    spans.map((s) => s.end_time),
    spans.map((s) => s.start_time_unix_nano),
    spans.map((s) => s.received_at),
    records,
  ];
}

/** The spans of `spans` whose keys the insert returned (the new ones), in their order. */
function storedOf(spans: Span[], keys: string[]): Span[] {
  if (keys.length === spans.length) return spans;
  const k = new Set(keys);
  return spans.filter((s) => k.has(`${s.trace_id}:${s.span_id}`));
}

function mapError(err: unknown): unknown {
  return isConnectionError(err) ? new StoreUnavailableError(`PostgreSQL is unreachable: ${(err as Error).message}`, { cause: err }) : err;
}

export class PgTraceStore implements TraceStore {
  constructor(private readonly pool: pg.Pool) {}

  /** A pooled connection, an unreachable database mapped to the store's error. */
  private async connect(): Promise<pg.PoolClient> {
    try {
      return await this.pool.connect();
    } catch (err) {
      throw mapError(err);
    }
  }

  private async q<R extends pg.QueryResultRow = any>(sql: string, params: unknown[] = [], c: Q = this.pool): Promise<pg.QueryResult<R>> {
    try {
      return await c.query<R>(sql, params);
    } catch (err) {
      throw mapError(err);
    }
  }

  async insertSpans(orgId: string, spans: Span[], maxSpans: number) {
    if (!spans.length) return { inserted: 0, duplicates: 0, refused: 0, stored: [] };
    // Optimistic: one statement in autocommit inserts the batch, adds it to the organization's count
    // and checks the cap (tribunal_trace_cap, migration 023); past the cap it raises and nothing of it
    // stays (nothing stored half), and the exact path below decides. Requests below the cap never wait
    // for each other beyond the count row's update, and each costs one round trip.
    const params = spanParams(orgId, spans);
    params.push(maxSpans);
    try {
      await this.pool.query(INSERT_NEW, params);
      return { inserted: spans.length, duplicates: 0, refused: 0, stored: spans };
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code !== UNIQUE_VIOLATION && code !== CAP_PASSED) throw mapError(err);
      if (code === CAP_PASSED) return this.insertExactly(orgId, dedupe(spans), maxSpans);
    }
    // A retry or a batch naming a span twice: its repeats dropped here, the spans already stored by
    // ON CONFLICT, the rest stored and counted as above.
    const { fresh, duplicates } = dedupe(spans);
    try {
      const { rows } = await this.pool.query<{ keys: string[] | null }>(INSERT_SKIPPING_STORED, fresh.length === spans.length ? params : [...spanParams(orgId, fresh), maxSpans]);
      const keys = rows[0].keys ?? [];
      return { inserted: keys.length, duplicates: duplicates + fresh.length - keys.length, refused: 0, stored: storedOf(fresh, keys) };
    } catch (err) {
      if ((err as { code?: string }).code !== CAP_PASSED) throw mapError(err);
    }
    return this.insertExactly(orgId, { fresh, duplicates }, maxSpans);
  }

  /** Past the cap: decided with the organization's counter row held (insertNearCap). */
  private async insertExactly(orgId: string, { fresh, duplicates }: { fresh: Span[]; duplicates: number }, maxSpans: number) {
    const client = await this.connect();
    try {
      const exact = await this.insertNearCap(client, orgId, fresh, maxSpans);
      client.release();
      return { ...exact, duplicates: duplicates + exact.duplicates };
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      client.release(isConnectionError(err) ? (err as Error) : undefined);
      throw mapError(err);
    }
  }

  /** Near the cap: the organization's counter row is held first, and only the room left is taken. */
  private async insertNearCap(client: pg.PoolClient, orgId: string, spans: Span[], maxSpans: number) {
    await client.query('BEGIN');
    await client.query('INSERT INTO trace_span_counts (org_id, spans) VALUES ($1, 0) ON CONFLICT DO NOTHING', [orgId]);
    const held = Number((await client.query('SELECT spans FROM trace_span_counts WHERE org_id = $1 FOR UPDATE', [orgId])).rows[0].spans);
    // Spans already stored (a retry) must not take the room of new ones.
    const existing = await client.query<{ k: string }>(
      `SELECT trace_id || ':' || span_id AS k FROM trace_spans WHERE org_id = $1 AND (trace_id, span_id) IN (SELECT * FROM unnest($2::text[], $3::text[]))`,
      [orgId, spans.map((s) => s.trace_id), spans.map((s) => s.span_id)],
    );
    const already = new Set(existing.rows.map((r) => r.k));
    const fresh = spans.filter((s) => !already.has(`${s.trace_id}:${s.span_id}`));
    let duplicates = spans.length - fresh.length;
    const take = fresh.slice(0, Math.max(0, maxSpans - held));
    let keys: string[] = [];
    if (take.length) {
      const r = await client.query<{ k: string }>(INSERT_SKIPPING, spanParams(orgId, take));
      keys = r.rows.map((x) => x.k);
      duplicates += take.length - keys.length;
      await client.query('UPDATE trace_span_counts SET spans = spans + $2 WHERE org_id = $1', [orgId, keys.length]);
    }
    await client.query('COMMIT');
    return { inserted: keys.length, duplicates, refused: fresh.length - take.length, stored: storedOf(take, keys) };
  }

  /**
   * Log events are one transaction with the organization's count row held: below the cap, what fits
   * is inserted (a retry's duplicates take no room) and counted; the rest is refused.
   */
  async insertLogEvents(orgId: string, events: SpanLogEvent[], maxEvents: number) {
    if (!events.length) return { inserted: 0, duplicates: 0, refused: 0 };
    const client = await this.connect();
    try {
      await client.query('BEGIN');
      await client.query('INSERT INTO trace_log_event_counts (org_id, events) VALUES ($1, 0) ON CONFLICT DO NOTHING', [orgId]);
      const held = Number((await client.query('SELECT events FROM trace_log_event_counts WHERE org_id = $1 FOR UPDATE', [orgId])).rows[0].events);
      const keys = events.map(logEventKey);
      const existing = await client.query<{ k: string }>(
        `SELECT trace_id || ':' || span_id || ':' || key AS k FROM trace_log_events
          WHERE org_id = $1 AND (trace_id, span_id, key) IN (SELECT * FROM unnest($2::text[], $3::text[], $4::text[]))`,
        [orgId, events.map((e) => e.trace_id), events.map((e) => e.span_id), keys],
      );
      const already = new Set(existing.rows.map((r) => r.k));
      const fresh: number[] = [];
      const seen = new Set<string>();
      for (const [i, e] of events.entries()) {
        const k = `${e.trace_id}:${e.span_id}:${keys[i]}`;
        if (!already.has(k) && !seen.has(k)) {
          seen.add(k);
          fresh.push(i);
        }
      }
      const take = fresh.slice(0, Math.max(0, maxEvents - held));
      let inserted = 0;
      if (take.length) {
        const col = <T>(f: (e: SpanLogEvent, i: number) => T) => take.map((i) => f(events[i], i));
        const r = await client.query(
          `INSERT INTO trace_log_events (org_id, trace_id, span_id, key, time_nanos, received_at, seq, event)
           SELECT $1, t, s, k, n, rcv, q, ev FROM ROWS FROM (unnest($2::text[]), unnest($3::text[]), unnest($4::text[]), unnest($5::numeric[]),
             unnest($6::timestamptz[]), unnest($7::int[]), json_array_elements($8::json)) AS x(t, s, k, n, rcv, q, ev)
           ON CONFLICT DO NOTHING`,
          [
            orgId,
            col((e) => e.trace_id),
            col((e) => e.span_id),
            col((_, i) => keys[i]),
            col((e) => e.time_unix_nano),
            col((e) => e.received_at),
            col((e) => e.seq),
            JSON.stringify(col((e) => e.event)),
          ],
        );
        inserted = r.rowCount ?? 0;
        await client.query('UPDATE trace_log_event_counts SET events = events + $2 WHERE org_id = $1', [orgId, inserted]);
      }
      await client.query('COMMIT');
      client.release();
      return { inserted, duplicates: events.length - fresh.length + (take.length - inserted), refused: fresh.length - take.length };
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      client.release(isConnectionError(err) ? (err as Error) : undefined);
      throw mapError(err);
    }
  }
  async countLogEvents(orgId: string) {
    const { rows } = await this.q('SELECT events FROM trace_log_event_counts WHERE org_id = $1', [orgId]);
    return rows[0] ? Number(rows[0].events) : 0;
  }

  async getTrace(orgId: string, traceId: string) {
    const { rows } = await this.q(`SELECT ${SPAN_READ} FROM trace_spans s WHERE s.org_id = $1 AND s.trace_id = $2 ORDER BY s.start_nanos, s.span_id`, [orgId, traceId]);
    return rows.map(spanOf);
  }
  async getSpan(orgId: string, traceId: string, spanId: string) {
    const { rows } = await this.q(`SELECT ${SPAN_READ} FROM trace_spans s WHERE s.org_id = $1 AND s.trace_id = $2 AND s.span_id = $3`, [orgId, traceId, spanId]);
    return rows[0] ? spanOf(rows[0]) : null;
  }

  async listTraces(f: TraceFilter, page: TracePageQuery) {
    const params: unknown[] = [f.org_id];
    const p = (v: unknown) => `$${params.push(v)}`;
    const where = ['s.org_id = $1'];
    if (f.service_name !== undefined) where.push(`s.service_name = ${p(f.service_name)}`);
    if (f.span_name !== undefined) where.push(`s.name = ${p(f.span_name)}`);
    if (f.date_from !== undefined) where.push(`s.start_time >= ${p(f.date_from)}::timestamptz`);
    if (f.date_to !== undefined) where.push(`s.start_time <= ${p(f.date_to)}::timestamptz`);
    let from = 'trace_spans s';
    if (f.attribute) {
      // The attribute as the record holds it (one path lookup per span, migration 029): present when
      // not SQL NULL; a string compared by its value, anything else by its JSON text, which is the
      // record's own (JSON.stringify), as the JSON store compares.
      // Every record was written by JSON.stringify, which writes a key as JSON.stringify(key) then a
      // colon: a record without that text cannot hold the attribute, and is passed over before its
      // JSON is parsed (the record is text since migration 031, so a lookup parses it twice).
      where.push(`strpos(s.record, ${p(`${JSON.stringify(f.attribute.key)}:`)}) > 0`);
      // OFFSET 0 keeps the lookup in its subquery: once per span of the organization, not once per use.
      from += ` CROSS JOIN LATERAL (SELECT s.record::json #> ARRAY['attributes', ${p(f.attribute.key)}::text] AS v OFFSET 0) x`;
      where.push('x.v IS NOT NULL');
      if (f.attribute.value !== undefined) where.push(`(CASE WHEN json_typeof(x.v) = 'string' THEN x.v #>> '{}' ELSE x.v::text END) = ${p(f.attribute.value)}`);
    }
    const evalCount = `(SELECT count(*) FROM trace_evaluations e WHERE e.org_id = $1 AND e.trace_id = t.trace_id)`;
    const outer: string[] = [];
    if (f.has_evaluation !== undefined) outer.push(`${evalCount} ${f.has_evaluation ? '>' : '='} 0`);
    if (page.after) outer.push(`(t.start_time, t.trace_id) < (${p(page.after.start_time)}::timestamptz, ${p(page.after.trace_id)}::text COLLATE "C")`);
    const sql = `WITH matched AS (SELECT DISTINCT s.trace_id FROM ${from} WHERE ${where.join(' AND ')}),
      t AS (SELECT a.trace_id, min(a.start_time) AS start_time, max(a.end_time) AS end_time, count(*)::int AS span_count,
                   count(*) FILTER (WHERE a.status_code = 'error')::int AS error_count,
                   (array_agg(a.name ORDER BY a.start_nanos) FILTER (WHERE a.parent_span_id IS NULL))[1] AS root_span_name,
                   (array_agg(a.service_name ORDER BY (a.parent_span_id IS NOT NULL), a.start_nanos))[1] AS service_name
            FROM trace_spans a JOIN matched m ON m.trace_id = a.trace_id WHERE a.org_id = $1 GROUP BY a.trace_id)
      SELECT t.*, ${evalCount}::int AS evaluation_count FROM t ${outer.length ? `WHERE ${outer.join(' AND ')}` : ''}
      ORDER BY t.start_time DESC, t.trace_id DESC LIMIT ${p(page.limit + 1)}`;
    const { rows } = await this.q(sql, params);
    const items: TraceSummary[] = rows.slice(0, page.limit).map((r) => ({
      trace_id: r.trace_id,
      root_span_name: r.root_span_name ?? null,
      service_name: r.service_name ?? null,
      start_time: new Date(r.start_time).toISOString(),
      end_time: new Date(r.end_time).toISOString(),
      span_count: r.span_count,
      error_count: r.error_count,
      evaluation_count: r.evaluation_count,
    }));
    const tail = items[items.length - 1];
    return rows.length > page.limit && tail ? { items, last: { start_time: tail.start_time, trace_id: tail.trace_id } } : { items };
  }

  async listSpans(orgId: string, q: { from?: string; to?: string; limit: number; after?: { received_at: string; key: string } }) {
    const params: unknown[] = [orgId];
    const p = (v: unknown) => `$${params.push(v)}`;
    const where = ['s.org_id = $1'];
    if (q.from !== undefined) where.push(`s.received_at >= ${p(q.from)}::timestamptz`);
    if (q.to !== undefined) where.push(`s.received_at < ${p(q.to)}::timestamptz`);
    if (q.after) {
      const [t, sp] = q.after.key.split(':');
      where.push(`(s.received_at, s.trace_id, s.span_id) > (${p(q.after.received_at)}::timestamptz, ${p(t)}::text COLLATE "C", ${p(sp)}::text COLLATE "C")`);
    }
    const { rows } = await this.q(`SELECT ${SPAN_READ} FROM trace_spans s WHERE ${where.join(' AND ')} ORDER BY s.received_at, s.trace_id, s.span_id LIMIT ${p(q.limit)}`, params);
    return rows.map(spanOf);
  }

  async prune(before: string) {
    const { rows } = await this.q(
      // Organization by organization over trace_spans_by_start (migration 029); every organization
      // with spans has its count row.
      `WITH gone AS (DELETE FROM trace_spans WHERE org_id = ANY (ARRAY(SELECT org_id FROM trace_span_counts)) AND start_time < $1::timestamptz RETURNING org_id),
            n AS (SELECT org_id, count(*) AS c FROM gone GROUP BY org_id),
            u AS (UPDATE trace_span_counts k SET spans = GREATEST(0, k.spans - n.c) FROM n WHERE k.org_id = n.org_id RETURNING 1)
       SELECT coalesce(sum(c), 0)::int AS removed FROM n`,
      [before],
    );
    // Log events from before the retention period, whether their span came or not.
    await this.q(
      `WITH gone AS (DELETE FROM trace_log_events WHERE time_nanos < $1 RETURNING org_id),
            n AS (SELECT org_id, count(*) AS c FROM gone GROUP BY org_id)
       UPDATE trace_log_event_counts k SET events = GREATEST(0, k.events - n.c) FROM n WHERE k.org_id = n.org_id`,
      [(BigInt(Date.parse(before)) * 1_000_000n).toString()],
    );
    return rows[0].removed as number;
  }
  async countSpans(orgId: string) {
    const { rows } = await this.q('SELECT spans FROM trace_span_counts WHERE org_id = $1', [orgId]);
    return rows[0] ? Number(rows[0].spans) : 0;
  }
  async addEvaluation(e: SpanEvaluation) {
    await this.q('INSERT INTO trace_evaluations (org_id, trace_id, span_id, execution_log_id, created_at, record) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING', [
      e.org_id,
      e.trace_id,
      e.span_id,
      e.execution_log_id,
      e.created_at,
      JSON.stringify(e),
    ]);
  }
  async listEvaluations(orgId: string, traceId: string) {
    const { rows } = await this.q('SELECT record FROM trace_evaluations WHERE org_id = $1 AND trace_id = $2 ORDER BY created_at, execution_log_id', [orgId, traceId]);
    return rows.map((r) => r.record as SpanEvaluation);
  }
  async purgeOrganization(orgId: string) {
    await this.q('DELETE FROM trace_spans WHERE org_id = $1', [orgId]);
    await this.q('DELETE FROM trace_span_counts WHERE org_id = $1', [orgId]);
    await this.q('DELETE FROM trace_evaluations WHERE org_id = $1', [orgId]);
    await this.q('DELETE FROM trace_log_events WHERE org_id = $1', [orgId]);
    await this.q('DELETE FROM trace_log_event_counts WHERE org_id = $1', [orgId]);
  }
}
