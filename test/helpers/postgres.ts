// PostgreSQL for tests: each call gets a fresh schema in the local `test` database (127.0.0.1:5432,
// trust auth, user postgres), dropped again on close. Schemas are cheap to make, so every test file
// and every test server has its own and tests never see each other's rows.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { PostgresStore, type PostgresStoreOptions } from '../../src/store/postgres-store.ts';

export const TEST_PG_BASE = process.env.TRIBUNAL_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A connection URL whose search_path is `schema`. */
export function urlWithSchema(schema: string, base = TEST_PG_BASE): string {
  const url = new URL(base);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: TEST_PG_BASE });
  client.on('error', () => {});
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => {});
  }
}

export interface TestSchema {
  schema: string;
  /** DATABASE_URL for this schema. */
  url: string;
  drop(): Promise<void>;
}

/** Makes an empty schema; `drop()` removes it and everything in it. */
export async function createTestSchema(prefix = 'trb_test'): Promise<TestSchema> {
  const schema = `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  await admin((c) => c.query(`CREATE SCHEMA ${schema}`));
  let dropped = false;
  return {
    schema,
    url: urlWithSchema(schema),
    async drop() {
      if (dropped) return;
      dropped = true;
      // The batch queue's schema beside it (src/batch/pg-jobs.ts), when a batch ran.
      await admin((c) => c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE; DROP SCHEMA IF EXISTS ${schema}_queue CASCADE`));
    },
  };
}

/** A migrated PostgresStore on a fresh schema; closing it drops the schema. */
export async function openTestPostgresStore(opts: Partial<PostgresStoreOptions> = {}): Promise<PostgresStore & { schema: string; url: string }> {
  const test = await createTestSchema();
  const store = new PostgresStore({ connectionString: test.url, poolMax: 4, ...opts });
  try {
    await store.init();
  } catch (err) {
    await test.drop();
    throw err;
  }
  const close = store.close.bind(store);
  return Object.assign(store, {
    schema: test.schema,
    url: test.url,
    async close() {
      await close();
      await test.drop();
    },
  });
}
