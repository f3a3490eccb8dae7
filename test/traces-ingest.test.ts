// The span store's ingest path (issue 28, migration 031), on the store TRIBUNAL_TEST_STORE names:
// repeats inside one batch and across batches are each stored once and counted; the attribute filter
// finds keys whatever characters they hold; listSpans pages through spans of one arrival in id order.
// On PostgreSQL also: migration 031 keeps every span stored before it, readable by every read path.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { loadMigrations, migrateSchema } from '../src/store/migrate-schema.ts';
import type { Store } from '../src/store/types.ts';
import { traceStoreOf } from '../src/traces/store.ts';
import type { Span } from '../src/traces/types.ts';
import { createTestSchema } from './helpers/postgres.ts';
import { openTestStore, tempDir } from './helpers/server.ts';

const PG = process.env.TRIBUNAL_TEST_STORE === 'postgres';
const hex = (n: number, len: number) => n.toString(16).padStart(len, '0');
const at = (second: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString();
const span = (t: number, s: number, extra: Partial<Span> = {}): Span => ({
  trace_id: hex(t + 1, 32),
  span_id: hex(s + 1, 16),
  parent_span_id: null,
  name: 'op',
  kind: 'internal',
  service_name: 'svc',
  start_time: at(t),
  end_time: at(t),
  start_time_unix_nano: String(BigInt(Date.parse(at(t))) * 1_000_000n + BigInt(s)),
  end_time_unix_nano: String(BigInt(Date.parse(at(t))) * 1_000_000n + BigInt(s)),
  status: { code: 'unset', message: null },
  attributes: { n: s },
  resource_attributes: { 'service.name': 'svc' },
  events: [],
  scope: { name: null, version: null },
  received_at: at(t),
  ...extra,
});

let store: Store;
let dir: string;
before(async () => {
  dir = tempDir();
  store = await openTestStore(dir);
});
after(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('span ingest', () => {
  it('stores a span named twice in one batch once, and a retry mixing stored and new spans', async () => {
    const ts = await traceStoreOf(store);
    const twice = await ts.insertSpans('org_dup', [span(0, 0), span(0, 1), span(0, 0, { name: 'again' })], 100);
    assert.deepEqual([twice.inserted, twice.duplicates, twice.refused], [2, 1, 0]);
    assert.deepEqual(
      twice.stored.map((s) => s.span_id),
      [hex(1, 16), hex(2, 16)],
    );
    const retry = await ts.insertSpans('org_dup', [span(0, 1), span(0, 2), span(0, 2)], 100);
    assert.deepEqual([retry.inserted, retry.duplicates, retry.refused], [1, 2, 0]);
    assert.deepEqual(
      retry.stored.map((s) => s.span_id),
      [hex(3, 16)],
    );
    assert.equal(await ts.countSpans('org_dup'), 3, 'the count follows the rows, repeats not counted');
    const stored = await ts.getTrace('org_dup', hex(1, 32));
    assert.deepEqual(
      stored.map((s) => [s.span_id, s.name]),
      [
        [hex(1, 16), 'op'],
        [hex(2, 16), 'op'],
        [hex(3, 16), 'op'],
      ],
      'the first of the repeats is kept',
    );
  });

  it('reads back a span as it was sent, characters JSON escapes included', async () => {
    const ts = await traceStoreOf(store);
    const odd = span(1, 0, {
      name: 'line\nbreak\ttab "quoted" \\ back',
      attributes: { 'gen_ai.prompt': 'a\nb\r\nc\u0001', 'quote"key': 'v"1', 'back\\slash': ['x', { y: '\n' }], 'é ключ': 'ü' },
    });
    assert.equal((await ts.insertSpans('org_odd', [odd, span(1, 1)], 100)).inserted, 2);
    const back = await ts.getSpan('org_odd', odd.trace_id, odd.span_id);
    assert.deepEqual(back, { org_id: 'org_odd', ...odd });
    for (const [key, value] of [
      ['quote"key', 'v"1'],
      ['back\\slash', undefined],
      ['é ключ', 'ü'],
      ['gen_ai.prompt', 'a\nb\r\nc\u0001'],
    ] as const) {
      const found = await ts.listTraces({ org_id: 'org_odd', attribute: { key, ...(value === undefined ? {} : { value }) } }, { limit: 10 });
      assert.deepEqual(
        found.items.map((t) => t.trace_id),
        [odd.trace_id],
        `the attribute ${JSON.stringify(key)}`,
      );
    }
    assert.equal((await ts.listTraces({ org_id: 'org_odd', attribute: { key: 'quote"key', value: 'v"2' } }, { limit: 10 })).items.length, 0);
    // A key that only appears inside another value is not the attribute.
    assert.equal((await ts.listTraces({ org_id: 'org_odd', attribute: { key: 'y' } }, { limit: 10 })).items.length, 0);
  });

  it('pages through the spans of one arrival in id order', async () => {
    const ts = await traceStoreOf(store);
    // One request of 7 spans of 3 traces (one received_at), sent out of order, then a later one.
    const arrival = at(10);
    const first = [5, 1, 3, 0, 6, 2, 4].map((i) => span(20 + (i % 3), i, { received_at: arrival }));
    await ts.insertSpans('org_page', first, 100);
    await ts.insertSpans('org_page', [span(30, 0, { received_at: at(11) })], 100);
    const seen: string[] = [];
    let cursor: { received_at: string; key: string } | undefined;
    for (;;) {
      const page = await ts.listSpans('org_page', { limit: 3, ...(cursor ? { after: cursor } : {}) });
      if (!page.length) break;
      for (const s of page) seen.push(`${s.trace_id}:${s.span_id}`);
      const last = page[page.length - 1];
      cursor = { received_at: last.received_at, key: `${last.trace_id}:${last.span_id}` };
    }
    const expected = [...first.map((s) => `${s.trace_id}:${s.span_id}`).sort(), `${hex(31, 32)}:${hex(1, 16)}`];
    assert.deepEqual(seen, expected);
    const period = await ts.listSpans('org_page', { from: at(11), to: at(12), limit: 10 });
    assert.deepEqual(
      period.map((s) => s.trace_id),
      [hex(31, 32)],
    );
  });
});

describe('migration 031 on spans stored before it', { skip: !PG }, () => {
  it('keeps every stored span, its count and its reads', async () => {
    const schema = await createTestSchema();
    const client = new pg.Client({ connectionString: schema.url });
    await client.connect();
    try {
      const all = loadMigrations();
      await migrateSchema(
        client,
        all.filter((m) => m.version < 31),
      );
      // Spans as the receiver stored them before 031: the record a json value, inserted from one JSON array.
      const before = [span(40, 0, { attributes: { k: 'v "q"', nested: { a: [1, 2] } } }), span(40, 1, { parent_span_id: hex(1, 16), name: 'child\nline' }), span(41, 0)];
      const records = JSON.stringify(before.map((s) => ({ org_id: 'org_old', ...s })));
      await client.query(
        `INSERT INTO trace_spans (org_id, trace_id, span_id, parent_span_id, name, service_name, status_code, start_time, end_time, start_nanos, received_at, record)
         SELECT 'org_old', r->>'trace_id', r->>'span_id', r->>'parent_span_id', r->>'name', r->>'service_name', r->'status'->>'code',
                (r->>'start_time')::timestamptz, (r->>'end_time')::timestamptz, (r->>'start_time_unix_nano')::numeric, (r->>'received_at')::timestamptz, r
         FROM json_array_elements($1::json) r`,
        [records],
      );
      await client.query(`INSERT INTO trace_span_counts (org_id, spans) VALUES ('org_old', 3)`);
      const textBefore = (await client.query('SELECT span_id, record::text AS t FROM trace_spans ORDER BY span_id')).rows;
      assert.deepEqual(await migrateSchema(client, all), [31, ...all.filter((m) => m.version > 31).map((m) => m.version)]);
      const { rows: cols } = await client.query(
        `SELECT data_type FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'trace_spans' AND column_name = 'record'`,
      );
      assert.equal(cols[0].data_type, 'text');
      assert.deepEqual((await client.query('SELECT span_id, record AS t FROM trace_spans ORDER BY span_id')).rows, textBefore, 'each record kept as its exact text');
      // lz4 for new records where the server has it (PostgreSQL 14+ built with lz4), the default elsewhere.
      const lz4 = await client.query('CREATE TEMP TABLE lz4_probe (x text COMPRESSION lz4)').then(
        () => true,
        () => false,
      );
      if (lz4) {
        const { rows } = await client.query(`SELECT attcompression::text AS c FROM pg_attribute WHERE attrelid = 'trace_spans'::regclass AND attname = 'record'`);
        assert.equal(rows[0].c, 'l');
      }

      const { PgTraceStore } = await import('../src/store/postgres/traces.ts');
      const pool = new pg.Pool({ connectionString: schema.url, max: 2 });
      try {
        const ts = new PgTraceStore(pool);
        assert.deepEqual(await ts.getTrace('org_old', hex(41, 32)), [
          { org_id: 'org_old', ...before[0] },
          { org_id: 'org_old', ...before[1] },
        ]);
        assert.deepEqual(
          (await ts.listSpans('org_old', { limit: 10 })).map((s) => s.span_id),
          [hex(1, 16), hex(2, 16), hex(1, 16)],
        );
        assert.deepEqual(
          (await ts.listTraces({ org_id: 'org_old', attribute: { key: 'k', value: 'v "q"' } }, { limit: 10 })).items.map((t) => t.trace_id),
          [hex(41, 32)],
        );
        assert.equal(await ts.countSpans('org_old'), 3);
        // New spans beside the old ones, a retry of an old one skipped.
        const more = await ts.insertSpans('org_old', [before[2], span(42, 0)], 100);
        assert.deepEqual([more.inserted, more.duplicates], [1, 1]);
        assert.equal(await ts.countSpans('org_old'), 4);
        assert.equal(await ts.prune(at(42)), 3, 'retention removes the old spans as before');
      } finally {
        await pool.end();
      }
    } finally {
      await client.end();
      await schema.drop();
    }
  });
});
