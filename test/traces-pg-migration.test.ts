// Migration 031 (issue 28): spans stored before it (record as json) stay, each record its exact text,
// readable by every read path of the span store, counted, pruned; new spans and retries beside them.
// PostgreSQL only (TRIBUNAL_TEST_STORE=postgres).
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { loadMigrations, migrateSchema } from '../src/store/migrate-schema.ts';
import { PgTraceStore } from '../src/store/postgres/traces.ts';
import { normalizeRequest } from '../src/traces/normalize.ts';
import { openTestPostgresStore } from './helpers/postgres.ts';

/** Spans as the receiver makes them from an OTLP/JSON request: trace 1 (a root and a child), trace 2. */
function sentSpans(startSecond: number) {
  const nanos = (s: number) => String(BigInt(Date.UTC(2026, 0, 1, 0, 0, s)) * 1_000_000n);
  const otlpSpan = (trace: number, span: number, parent: number | null, name: string, attributes: unknown[]) => ({
    traceId: trace.toString(16).padStart(32, '0'),
    spanId: span.toString(16).padStart(16, '0'),
    ...(parent ? { parentSpanId: parent.toString(16).padStart(16, '0') } : {}),
    name,
    startTimeUnixNano: nanos(startSecond),
    endTimeUnixNano: nanos(startSecond + 1),
    attributes,
  });
  const request = {
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'old-svc' } }] },
        scopeSpans: [
          {
            spans: [
              otlpSpan(1, 1, null, 'root', [{ key: 'k', value: { stringValue: 'v "q"' } }]),
              otlpSpan(1, 2, 1, 'child\nline', [{ key: 'n', value: { intValue: '7' } }]),
              otlpSpan(2, 1, null, 'other', []),
            ],
          },
        ],
      },
    ],
  };
  return normalizeRequest(request, new Date(Date.UTC(2026, 0, 1, 0, 0, startSecond + 2)).toISOString()).spans;
}

it('migration 031 keeps every span stored before it, its count and its reads', { skip: process.env.TRIBUNAL_TEST_STORE !== 'postgres' }, async () => {
  const store = await openTestPostgresStore({ migrate: false });
  const db = await store.pool.connect();
  try {
    const all = loadMigrations();
    await migrateSchema(
      db,
      all.filter((m) => m.version < 31),
    );
    // Stored as the receiver did before 031: the record a json value, taken from one JSON array.
    const before = sentSpans(40);
    await db.query(
      `INSERT INTO trace_spans (org_id, trace_id, span_id, parent_span_id, name, service_name, status_code, start_time, end_time, start_nanos, received_at, record)
       SELECT 'org_old', r->>'trace_id', r->>'span_id', r->>'parent_span_id', r->>'name', r->>'service_name', r->'status'->>'code',
              (r->>'start_time')::timestamptz, (r->>'end_time')::timestamptz, (r->>'start_time_unix_nano')::numeric, (r->>'received_at')::timestamptz, r
       FROM json_array_elements($1::json) r`,
      [JSON.stringify(before.map((s) => ({ org_id: 'org_old', ...s })))],
    );
    await db.query(`INSERT INTO trace_span_counts (org_id, spans) VALUES ('org_old', 3)`);
    const textBefore = (await db.query('SELECT span_id, record::text AS t FROM trace_spans ORDER BY trace_id, span_id')).rows;

    assert.deepEqual(await migrateSchema(db, all), [31, ...all.filter((m) => m.version > 31).map((m) => m.version)]);
    const { rows: cols } = await db.query(
      `SELECT data_type FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'trace_spans' AND column_name = 'record'`,
    );
    assert.equal(cols[0].data_type, 'text');
    assert.deepEqual((await db.query('SELECT span_id, record AS t FROM trace_spans ORDER BY trace_id, span_id')).rows, textBefore, 'each record kept as its exact text');
    // lz4 for new records where the server has it (PostgreSQL 14+ built with lz4), the default elsewhere.
    const lz4 = await db.query('CREATE TEMP TABLE lz4_probe (x text COMPRESSION lz4)').then(
      () => true,
      () => false,
    );
    if (lz4) {
      const { rows } = await db.query(`SELECT attcompression::text AS c FROM pg_attribute WHERE attrelid = 'trace_spans'::regclass AND attname = 'record'`);
      assert.equal(rows[0].c, 'l');
    }

    const ts = new PgTraceStore(store.pool);
    const [root, child, other] = before;
    assert.deepEqual(await ts.getTrace('org_old', root.trace_id), [
      { org_id: 'org_old', ...root },
      { org_id: 'org_old', ...child },
    ]);
    assert.deepEqual(await ts.getSpan('org_old', other.trace_id, other.span_id), { org_id: 'org_old', ...other });
    assert.deepEqual(
      (await ts.listSpans('org_old', { limit: 10 })).map((s) => s.name),
      ['root', 'child\nline', 'other'],
    );
    assert.deepEqual(
      (await ts.listTraces({ org_id: 'org_old', attribute: { key: 'k', value: 'v "q"' } }, { limit: 10 })).items.map((t) => t.trace_id),
      [root.trace_id],
    );
    assert.equal(await ts.countSpans('org_old'), 3);
    // A retry of an old span is skipped, a new one stored beside them; retention removes the old ones.
    const later = sentSpans(50);
    const more = await ts.insertSpans('org_old', [other, { ...later[2], span_id: 'ffffffffffffffff' }], 100);
    assert.deepEqual([more.inserted, more.duplicates], [1, 1]);
    assert.equal(await ts.countSpans('org_old'), 4);
    assert.equal(await ts.prune(new Date(Date.UTC(2026, 0, 1, 0, 0, 45)).toISOString()), 3);
    assert.equal(await ts.countSpans('org_old'), 1);
  } finally {
    db.release();
    await store.close();
  }
});
