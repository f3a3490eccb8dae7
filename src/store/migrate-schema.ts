// Versioned schema migrations for the PostgreSQL store: src/store/migrations/NNN_name.sql, applied in
// order at start-up. Several instances may start at once, so each step holds an advisory lock (per
// schema) for its transaction; each migration commits in one transaction together with its row in
// tribunal_migrations, so it is applied exactly once, and a crash leaves it either done or not.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));
/** First half of the advisory lock key ("trib"); the second half is the schema's hash. */
const LOCK_CLASS = 0x74726962;

export interface Migration {
  version: number;
  name: string;
  sql: string;
  checksum: string;
}

export function loadMigrations(dir = MIGRATIONS_DIR): Migration[] {
  const migrations = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .map((file) => {
      const match = /^(\d+)_([\w-]+)\.sql$/.exec(file);
      if (!match) throw new Error(`Migration file ${file} must be named NNN_name.sql`);
      const sql = fs.readFileSync(path.join(dir, file), 'utf8');
      return { version: Number(match[1]), name: match[2], sql, checksum: createHash('sha256').update(sql).digest('hex') };
    })
    .sort((a, b) => a.version - b.version);
  migrations.forEach((m, i) => {
    if (i > 0 && migrations[i - 1].version === m.version) throw new Error(`Two migrations have version ${m.version}`);
  });
  return migrations;
}

/** Applies the pending migrations; answers the versions it applied (none when up to date). */
export async function migrateSchema(client: pg.ClientBase, migrations = loadMigrations()): Promise<number[]> {
  // Every step is a transaction that first takes a transaction-scoped advisory lock, so instances
  // starting together take turns, and no lock outlives its transaction (nothing is left on the
  // connection, which also suits a transaction-pooling proxy in front of PostgreSQL).
  const inTransaction = async <T>(fn: () => Promise<T>): Promise<T> => {
    await client.query('BEGIN');
    try {
      await client.query("SELECT pg_advisory_xact_lock($1, hashtext(coalesce(current_schema(), '')))", [LOCK_CLASS]);
      const result = await fn();
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    }
  };

  const applied = await inTransaction(async () => {
    const schema = (await client.query<{ s: string | null }>('SELECT current_schema() AS s')).rows[0].s;
    if (!schema) throw new Error('PostgreSQL has no current schema: the search_path names no schema that exists. Create it or fix the search_path.');
    await client.query(`CREATE TABLE IF NOT EXISTS tribunal_migrations (
      version     integer PRIMARY KEY,
      name        text NOT NULL,
      checksum    text NOT NULL,
      applied_at  timestamptz NOT NULL DEFAULT now()
    )`);
    return new Map(
      (await client.query<{ version: number; checksum: string; name: string }>('SELECT version, name, checksum FROM tribunal_migrations')).rows.map((r) => [r.version, r]),
    );
  });
  const known = new Set(migrations.map((m) => m.version));
  const newer = [...applied.keys()].filter((v) => !known.has(v));
  if (newer.length) {
    throw new Error(`The database schema is at migration ${Math.max(...newer)}, newer than this Tribunal knows (${Math.max(0, ...known)}); upgrade Tribunal.`);
  }
  for (const m of migrations) {
    const row = applied.get(m.version);
    if (row && row.checksum !== m.checksum) {
      throw new Error(`Migration ${m.version}_${m.name} was changed after it was applied to this database; migrations are never edited, add a new one.`);
    }
  }
  const done: number[] = [];
  for (const m of migrations) {
    if (applied.has(m.version)) continue;
    const ran = await inTransaction(async () => {
      // Another instance may have applied it while we waited for the lock.
      const again = await client.query('SELECT 1 FROM tribunal_migrations WHERE version = $1', [m.version]);
      if (again.rowCount) return false;
      await client.query(m.sql);
      await client.query('INSERT INTO tribunal_migrations (version, name, checksum) VALUES ($1, $2, $3)', [m.version, m.name, m.checksum]);
      return true;
    });
    if (ran) done.push(m.version);
  }
  return done;
}
