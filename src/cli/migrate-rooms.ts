// The rooms beside the Store, for `tribunal migrate --from json --to postgres` (src/store/migrate-json.ts
// runs this as its last part): review queues with their items, leases and labels (review.json and its journal),
// evaluation rules with their counters (traces/rules.json), and received spans with their
// evaluations (traces/spans.jsonl, traces/evaluations.jsonl). The JSON files are read as they are
// (the migration holds the data directory's lock, so nothing writes them meanwhile); rows are
// inserted with ON CONFLICT DO NOTHING, so a second run copies nothing twice; then everything is
// read back through the rooms' PostgreSQL stores and compared.
//
// Two things move as a restarted JSON server would see them:
// - a lease still held keeps its expiry: the person may still submit until then, as on JSON;
// - a rule's queued or running units move queued with no lease (a JSON server does the same at
//   start-up: no worker of the stopped process holds them), and only together with their rule,
//   in the rule's transaction: a second run never queues again a unit PostgreSQL has finished.
import path from 'node:path';
import type pg from 'pg';
import { loadReviewState, type ReviewData } from '../review/json-review-state.ts';
import { PgReviewStore } from '../review/pg-review.ts';
import type { ReviewItemRecord } from '../review/types.ts';
import { loadRuleState } from '../store/json-eval-rules-state.ts';
import { readLines, readSpanFile } from '../store/json-traces.ts';
import type { MigrateContext } from '../store/migrate-context.ts';
import { PgRuleStore } from '../store/postgres/eval-rules.ts';
import { PgTraceStore } from '../store/postgres/traces.ts';
import { inTransaction } from '../store/postgres/transaction.ts';
import type { EvalJob } from '../traces/rules/types.ts';
import { logEventKey, type SpanEvaluation, type SpanLogEvent, type SpanRecord } from '../traces/types.ts';

/** A record row (id, org_id, created_at, record) unless its id is there: how queues and rules are copied. */
function insertRecordRow(c: pg.PoolClient, table: string, r: { id: string; org_id: string; created_at: string }) {
  return c.query(`INSERT INTO ${table} (id, org_id, created_at, record) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`, [r.id, r.org_id, r.created_at, JSON.stringify(r)]);
}

const oldestFirst = <T extends { created_at: string; id: string }>(a: T, b: T) =>
  a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;

/**
 * Leases and labels only of an item this queue holds: when PostgreSQL holds another item for the
 * same log (an edited database), that is a mismatch to report, not a foreign-key error that stops
 * the migration.
 */
const ITEM_HERE = 'WHERE EXISTS (SELECT 1 FROM review_items i WHERE i.id = t.item_id AND i.queue_id = t.queue_id)';

/** Inserts rows a thousand at a time (one array per column), keeping any already there; answers how many were new. */
async function bulk(c: pg.PoolClient, table: string, columns: Record<string, string>, rows: unknown[][], where = ''): Promise<number> {
  const names = Object.keys(columns);
  const arrays = Object.values(columns).map((type, i) => `$${i + 1}::${type}[]`);
  let n = 0;
  for (let i = 0; i < rows.length; i += 1000) {
    const chunk = rows.slice(i, i + 1000);
    const r = await c.query(
      `INSERT INTO ${table} (${names.join(', ')}) SELECT * FROM unnest(${arrays.join(', ')}) AS t(${names.join(', ')}) ${where} ON CONFLICT DO NOTHING`,
      names.map((_, col) => chunk.map((row) => row[col])),
    );
    n += r.rowCount ?? 0;
  }
  return n;
}

async function migrateReview(ctx: MigrateContext): Promise<void> {
  const { counts, target } = ctx;
  // review.json with its journal replayed (what a restarted JSON server holds).
  const data: ReviewData = loadReviewState(ctx.dataDir).state.data;
  const queues = Object.values(data.queues).sort(oldestFirst);
  for (const q of queues) {
    const items = data.items[q.id] ?? [];
    const leases = data.leases[q.id] ?? [];
    const labels = data.labels[q.id] ?? [];
    counts.review_queues.source++;
    counts.review_items.source += items.length;
    counts.review_leases.source += leases.length;
    counts.review_labels.source += labels.length;
    // One transaction per queue: a queue is in PostgreSQL with all of its rows or none of them.
    await inTransaction(target.pool, async (c) => {
      const added = await insertRecordRow(c, 'review_queues', q);
      counts.review_queues.copied += added.rowCount ?? 0;
      counts.review_items.copied += await bulk(
        c,
        'review_items',
        { id: 'text', queue_id: 'text', execution_log_id: 'text', source: 'text', done: 'int', open: 'boolean', adjudicated_at: 'timestamptz', created_at: 'timestamptz' },
        items.map((i) => [i.id, q.id, i.execution_log_id, i.source, i.done, i.done < q.annotators_per_item, i.adjudicated_at, i.created_at]),
      );
      counts.review_leases.copied += await bulk(
        c,
        'review_leases',
        { item_id: 'text', queue_id: 'text', annotator_id: 'text', state: 'text', expires_at: 'timestamptz', reason: 'text', created_at: 'timestamptz', updated_at: 'timestamptz' },
        leases.map((l) => [l.item_id, q.id, l.annotator_id, l.state, l.expires_at, l.reason, l.created_at, l.updated_at]),
        ITEM_HERE,
      );
      counts.review_labels.copied += await bulk(
        c,
        'review_labels',
        {
          item_id: 'text',
          queue_id: 'text',
          id: 'text',
          execution_log_id: 'text',
          evaluator_id: 'text',
          annotator_id: 'text',
          score: 'float8',
          note: 'text',
          created_at: 'timestamptz',
        },
        labels.map((l) => [l.item_id, q.id, l.id, l.execution_log_id, l.evaluator_id, l.annotator_id, l.score, l.note, l.created_at]),
        ITEM_HERE,
      );
    });
  }

  const pg = new PgReviewStore(target.pool);
  for (const q of queues) {
    ctx.compare('review_queues', q.id, q, await pg.getQueue(q.id));
    const stored = new Map<string, ReviewItemRecord>();
    let after: { created_at: string; id: string } | undefined;
    do {
      const page = await pg.listItems(q.id, { limit: 500, after });
      for (const i of page.items) stored.set(i.id, i);
      after = page.last;
    } while (after);
    const items = data.items[q.id] ?? [];
    for (const i of items) ctx.compare('review_items', `${q.id} ${i.id}`, i, stored.get(i.id));
    const leases = new Map(
      (
        await pg.listLeases(
          q.id,
          items.map((i) => i.id),
        )
      ).map((l) => [`${l.item_id} ${l.annotator_id}`, l]),
    );
    for (const l of data.leases[q.id] ?? []) ctx.compare('review_leases', `${q.id} ${l.item_id} ${l.annotator_id}`, l, leases.get(`${l.item_id} ${l.annotator_id}`));
    const labels = new Map((await pg.listLabels(q.id)).map((l) => [l.id, l]));
    for (const l of data.labels[q.id] ?? []) ctx.compare('review_labels', `${q.id} ${l.id}`, l, labels.get(l.id));
  }
}

async function migrateRules(ctx: MigrateContext): Promise<void> {
  const { counts, target } = ctx;
  // The snapshot with its journal replayed, and the enqueues the journal lost recovered from their
  // copies in spans.jsonl (running units waiting again), as a JSON server starts.
  const data = loadRuleState(ctx.dataDir).state.data;
  const rules = Object.values(data.rules).sort(oldestFirst);
  // As a JSON server resumes them at start-up: waiting, held by no worker.
  const units = (ruleId: string) =>
    Object.values(data.jobs)
      .filter((j) => j.rule_id === ruleId)
      .map((j): EvalJob => ({ ...j, state: 'queued', lease_until: null }))
      .sort(oldestFirst);
  for (const r of rules) {
    const counters = data.counters[r.id] ?? {};
    counts.evaluation_rules.source++;
    counts.rule_counters.source += Object.keys(counters).length;
    counts.rule_units.source += units(r.id).length;
    // The counters and units only with the rule, in one transaction: a second run adds nothing to them.
    await inTransaction(target.pool, async (c) => {
      const added = await insertRecordRow(c, 'evaluation_rules', r);
      if (!added.rowCount) return;
      counts.evaluation_rules.copied++;
      const keys = Object.keys(counters);
      const n = await c.query('INSERT INTO evaluation_rule_counts (rule_id, key, n) SELECT $1, k, n FROM unnest($2::text[], $3::float8[]) AS t(k, n) ON CONFLICT DO NOTHING', [
        r.id,
        keys,
        keys.map((k) => counters[k]),
      ]);
      counts.rule_counters.copied += n.rowCount ?? 0;
      for (const j of units(r.id)) {
        const u = await c.query(
          'INSERT INTO evaluation_jobs (id, rule_id, state, created_at, run_after, lease_until, record) VALUES ($1, $2, $3, $4, $5, NULL, $6) ON CONFLICT DO NOTHING',
          [j.id, r.id, j.state, j.created_at, j.run_after, JSON.stringify(j)],
        );
        counts.rule_units.copied += u.rowCount ?? 0;
      }
    });
  }

  const pg = new PgRuleStore(target.pool);
  for (const r of rules) {
    ctx.compare('evaluation_rules', r.id, r, await pg.getRule(r.id));
    const stored = await pg.counters(r.id);
    for (const [key, n] of Object.entries(data.counters[r.id] ?? {})) ctx.compare('rule_counters', `${r.id} ${key}`, n, stored[key]);
    // Read as the worker reads them (PgRuleStore's jobOf): the record with its columns over it.
    const { rows } = await target.pool.query('SELECT id, record, state, lease_until, run_after FROM evaluation_jobs WHERE rule_id = $1', [r.id]);
    const queued = new Map(
      rows.map((row) => [
        row.id as string,
        { ...row.record, state: row.state, lease_until: row.lease_until && new Date(row.lease_until).toISOString(), run_after: new Date(row.run_after).toISOString() },
      ]),
    );
    for (const j of units(r.id)) ctx.compare('rule_units', `${r.id} ${j.id}`, j, queued.get(j.id));
  }
}

async function migrateTraces(ctx: MigrateContext): Promise<void> {
  const { counts, target } = ctx;
  const dir = path.join(ctx.dataDir, 'traces');
  // Per organization and trace, deduplicated as the JSON store does at load (the first copy stays).
  const traces = new Map<string, Map<string, SpanRecord>>();
  // readSpanFile leaves out the rule store's carried enqueue lines (span-carrier.ts): migrateRules has them.
  for (const s of readSpanFile(path.join(dir, 'spans.jsonl')).spans) {
    const key = `${s.org_id}\u0000${s.trace_id}`;
    const spans = traces.get(key) ?? new Map<string, SpanRecord>();
    if (!spans.has(s.span_id)) spans.set(s.span_id, s);
    traces.set(key, spans);
  }
  const evaluations = readLines<SpanEvaluation>(path.join(dir, 'evaluations.jsonl'));
  const pg = new PgTraceStore(target.pool);
  const logEvents = await migrateLogEvents(ctx, pg, dir);
  const byOrg = new Map<string, SpanRecord[]>();
  for (const spans of traces.values()) {
    for (const s of spans.values()) {
      const list = byOrg.get(s.org_id) ?? [];
      list.push(s);
      byOrg.set(s.org_id, list);
    }
  }
  for (const [orgId, spans] of byOrg) {
    counts.trace_spans.source += spans.length;
    for (let i = 0; i < spans.length; i += ctx.batchSize) {
      // No cap here: every span the JSON server held moves (the cap refuses new ones on PostgreSQL).
      const { inserted } = await pg.insertSpans(orgId, spans.slice(i, i + ctx.batchSize), Number.MAX_SAFE_INTEGER);
      counts.trace_spans.copied += inserted;
    }
  }
  const evalKey = (e: SpanEvaluation) => `${e.org_id}\u0000${e.trace_id}\u0000${e.execution_log_id}`;
  const uniqueEvals = [...new Map(evaluations.map((e) => [evalKey(e), e])).values()];
  counts.span_evaluations.source = uniqueEvals.length;
  counts.span_evaluations.copied += await inTransaction(target.pool, (c) =>
    bulk(
      c,
      'trace_evaluations',
      { org_id: 'text', trace_id: 'text', span_id: 'text', execution_log_id: 'text', created_at: 'timestamptz', record: 'json' },
      uniqueEvals.map((e) => [e.org_id, e.trace_id, e.span_id, e.execution_log_id, e.created_at, JSON.stringify(e)]),
    ),
  );

  for (const spans of traces.values()) {
    const first = spans.values().next().value as SpanRecord;
    const stored = new Map((await pg.getTrace(first.org_id, first.trace_id)).map((s) => [s.span_id, s]));
    // A span is read with the GenAI log records sent for it (POST /otel/v1/logs) among its events, on
    // both stores: compare with those added, events in one canonical order.
    for (const s of spans.values()) {
      const expected = { ...s, events: [...s.events, ...(logEvents.get(`${s.org_id}:${s.trace_id}:${s.span_id}`) ?? [])] };
      const got = stored.get(s.span_id);
      ctx.compare('trace_spans', `${s.trace_id} ${s.span_id}`, canonicalEvents(expected), got && canonicalEvents(got));
    }
  }
  const storedEvals = new Map<string, SpanEvaluation>();
  for (const key of new Set(uniqueEvals.map((e) => `${e.org_id}\u0000${e.trace_id}`))) {
    const [orgId, traceId] = key.split('\u0000');
    for (const e of await pg.listEvaluations(orgId, traceId)) storedEvals.set(evalKey(e), e);
  }
  for (const e of uniqueEvals) ctx.compare('span_evaluations', `${e.trace_id} ${e.execution_log_id}`, e, storedEvals.get(evalKey(e)));
}

const canonicalEvents = <S extends SpanRecord>(s: S): S => ({
  ...s,
  events: s.events
    .map((e) => JSON.stringify(e))
    .sort()
    .map((e) => JSON.parse(e)),
});

/**
 * The GenAI log records kept for spans (traces/log-events.jsonl): copied (a record already there is
 * not added twice: the trace store keys them by time, name and content) and counted per organization.
 * Answers each span's records' events, by "org:trace:span", for the spans' check.
 */
async function migrateLogEvents(ctx: MigrateContext, pg: PgTraceStore, dir: string): Promise<Map<string, SpanLogEvent['event'][]>> {
  const { counts } = ctx;
  const byOrg = new Map<string, Map<string, SpanLogEvent>>();
  for (const line of readLines<SpanLogEvent & { org_id: string }>(path.join(dir, 'log-events.jsonl'))) {
    const { org_id, ...event } = line as SpanLogEvent & { org_id: string; key?: string };
    delete (event as { key?: string }).key;
    const list = byOrg.get(org_id) ?? new Map<string, SpanLogEvent>();
    list.set(`${event.trace_id}:${event.span_id}:${logEventKey(event)}`, event);
    byOrg.set(org_id, list);
  }
  const bySpan = new Map<string, SpanLogEvent['event'][]>();
  for (const [orgId, events] of byOrg) {
    const all = [...events.values()];
    counts.trace_log_events.source += all.length;
    for (let i = 0; i < all.length; i += ctx.batchSize) {
      counts.trace_log_events.copied += (await pg.insertLogEvents(orgId, all.slice(i, i + ctx.batchSize), Number.MAX_SAFE_INTEGER)).inserted;
    }
    const stored = await pg.countLogEvents(orgId);
    if (stored < all.length) ctx.compare('trace_log_events', `${orgId}: ${stored} of ${all.length} records`, all.length, stored);
    else counts.trace_log_events.verified += all.length;
    for (const e of all) {
      const key = `${orgId}:${e.trace_id}:${e.span_id}`;
      bySpan.set(key, [...(bySpan.get(key) ?? []), e.event]);
    }
  }
  return bySpan;
}

export async function migrateRooms(ctx: MigrateContext): Promise<void> {
  await migrateReview(ctx);
  await migrateRules(ctx);
  await migrateTraces(ctx);
  const c = ctx.counts;
  ctx.log(
    `Copied ${c.review_queues.copied} review queues (${c.review_items.copied} items, ${c.review_labels.copied} labels), ${c.evaluation_rules.copied} evaluation rules (${c.rule_units.copied} queued units), ${c.trace_spans.copied} spans (${c.span_evaluations.copied} evaluations).`,
  );
}
