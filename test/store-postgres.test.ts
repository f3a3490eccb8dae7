// The Store contract on PostgreSQL (a fresh schema per store), and what only it has: versioned
// migrations applied once under an advisory lock, even when several instances start together.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pg from 'pg';
import { PostgresStore } from '../src/store/postgres-store.ts';
import { loadMigrations, migrateSchema } from '../src/store/migrate-schema.ts';
import { syncPresets, loadPresets } from '../src/domain/presets.ts';
import { loadCheckPresets } from '../src/checks/presets.ts'; // h-checks: the check and code presets are seeded too
import { createTestSchema, openTestPostgresStore } from './helpers/postgres.ts';
import { defineStoreContract, evaluator, log, org } from './store-contract.ts';

defineStoreContract('PostgreSQL', { makeStore: () => openTestPostgresStore() });

describe('PostgreSQL schema and start-up', () => {
  it('applies the migrations once, even when eight instances start at the same time', async () => {
    const schema = await createTestSchema();
    const stores = Array.from({ length: 8 }, () => new PostgresStore({ connectionString: schema.url, poolMax: 2 }));
    try {
      await Promise.all(stores.map((s) => s.init()));
      const { rows } = await stores[0].sql('SELECT version, name FROM tribunal_migrations ORDER BY version');
      assert.deepEqual(
        rows.map((r) => r.version),
        loadMigrations().map((m) => m.version),
      );
      // Presets seeded by all of them at once: each exactly once.
      await Promise.all(stores.map((s) => syncPresets(s)));
      const { rows: presets } = await stores[0].sql('SELECT count(*)::int AS n FROM evaluators WHERE is_preset');
      assert.equal(presets[0].n, loadPresets().length + loadCheckPresets().length);
      const { rows: versions } = await stores[0].sql("SELECT count(*)::int AS n FROM evaluator_versions WHERE id LIKE 'preset\\_%'");
      assert.equal(versions[0].n, loadPresets().length + loadCheckPresets().length);
    } finally {
      await Promise.all(stores.map((s) => s.close()));
      await schema.drop();
    }
  });

  it('keeps data across a reopen and does not migrate again', async () => {
    const schema = await createTestSchema();
    try {
      const first = new PostgresStore({ connectionString: schema.url, poolMax: 2 });
      await first.init();
      const o = org();
      const l = log(o.id);
      await first.createOrganization(o);
      await first.appendExecutionLog(l);
      const { rows: before } = await first.sql('SELECT version, applied_at FROM tribunal_migrations ORDER BY version');
      await first.close();

      const second = new PostgresStore({ connectionString: schema.url, poolMax: 2 });
      await second.init();
      try {
        assert.deepEqual(await second.getOrganization(o.id), o);
        assert.deepEqual(await second.getExecutionLog(l.id), l);
        const { rows: afterRows } = await second.sql('SELECT version, applied_at FROM tribunal_migrations ORDER BY version');
        assert.deepEqual(afterRows, before);
      } finally {
        await second.close();
      }
    } finally {
      await schema.drop();
    }
  });

  it('refuses to start when an applied migration was edited', async () => {
    const schema = await createTestSchema();
    const client = new pg.Client({ connectionString: schema.url });
    await client.connect();
    try {
      const migrations = loadMigrations();
      assert.deepEqual(
        await migrateSchema(client, migrations),
        migrations.map((m) => m.version),
      );
      assert.deepEqual(await migrateSchema(client, migrations), [], 'nothing left to apply');
      const edited = migrations.map((m, i) => (i === 0 ? { ...m, checksum: 'changed' } : m));
      await assert.rejects(migrateSchema(client, edited), /was changed after it was applied/);
      // A failing migration leaves nothing behind: its statements and its row roll back together.
      const broken = [...migrations, { version: 999, name: 'broken', sql: 'CREATE TABLE half_done (x int); SELECT no_such_function();', checksum: 'x' }];
      await assert.rejects(migrateSchema(client, broken), /no_such_function/);
      const { rows } = await client.query("SELECT to_regclass('half_done') AS t, (SELECT count(*)::int FROM tribunal_migrations WHERE version = 999) AS n");
      assert.deepEqual(rows[0], { t: null, n: 0 });
    } finally {
      await client.end();
      await schema.drop();
    }
  });

  it('stores filtered fields as real columns with indexes', async () => {
    const store = await openTestPostgresStore();
    try {
      const { rows } = await store.sql(`SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'execution_logs'`);
      const types = Object.fromEntries(rows.map((r) => [r.column_name, r.data_type]));
      assert.equal(types.score, 'double precision');
      assert.equal(types.cost_usd, 'double precision');
      assert.equal(types.created_at, 'timestamp with time zone');
      assert.equal(types.tags, 'ARRAY');
      assert.equal(types.evaluator_ids, 'ARRAY');
      assert.equal(types.evaluator_results, 'json');
      const { rows: indexes } = await store.sql(`SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'execution_logs'`);
      const defs = indexes.map((i) => i.indexdef).join('\n');
      for (const cols of ['org_id, created_at DESC, id DESC', 'judge_id, created_at DESC, id DESC', 'project_id, created_at DESC, id DESC', 'org_id, score', 'org_id, cost_usd']) {
        assert.ok(defs.includes(`(${cols})`), `an index on (${cols})`);
      }
      assert.match(defs, /\(org_id, created_at DESC, id DESC\) INCLUDE \(judge_id, project_id, score, cost_usd\)/, 'the covering index of migration 4');
      // Arrays that grow with the input stay out of every btree, whose rows must fit a third of a page.
      assert.doesNotMatch(defs, /btree[^\n]*(tags|evaluator_ids)/);
      assert.match(defs, /gin \(tags\)/);
      assert.match(defs, /gin \(evaluator_ids\)/);
      // A record with a field the schema does not know keeps it (a newer release's field).
      const e = { ...evaluator('org_a'), tags: ['future field'] } as ReturnType<typeof evaluator>;
      await store.createEvaluator(e);
      assert.deepEqual(await store.getEvaluator(e.id), e);
    } finally {
      await store.close();
    }
  });
});
