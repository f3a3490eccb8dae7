// Versioned schema migrations for the PostgreSQL store: src/store/migrations/NNN_name.sql, applied in
// order at start-up. Several instances may start at once, so the whole run holds an advisory lock
// (per schema); each migration commits in one transaction together with its row in
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
  await client.query('SELECT pg_advisory_lock($1, hashtext(coalesce(current_schema(), \'\')))', [LOCK_CLASS]);
  try {
    const schema = (await client.query<{ s: string | null }>('SELECT current_schema() AS s')).rows[0].s;
    if (!schema) throw new Error('PostgreSQL has no current schema: the search_path names no schema that exists. Create it or fix the search_path.');
    await client.query(`CREATE TABLE IF NOT EXISTS tribunal_migrations (
      version     integer PRIMARY KEY,
      name        text NOT NULL,
      checksum    text NOT NULL,
      applied_at  timestamptz NOT NULL DEFAULT now()
    )`);
    const applied = new Map(
      (await client.query<{ version: number; checksum: string; name: string }>('SELECT version, name, checksum FROM tribunal_migrations')).rows.map((r) => [r.version, r]),
    );
    const known = new Set(migrations.map((m) => m.version));
    const newer = [...applied.keys()].filter((v) => !known.has(v));
    if (newer.length) {
      throw new Error(`The database schema is at migration ${Math.max(...newer)}, newer than this Tribunal knows (${Math.max(0, ...known)}); upgrade Tribunal.`);
    }
    const done: number[] = [];
    for (const m of migrations) {
      const row = applied.get(m.version);
      if (row) {
        if (row.checksum !== m.checksum) {
          throw new Error(`Migration ${m.version}_${m.name} was changed after it was applied to this database; migrations are never edited, add a new one.`);
        }
        continue;
      }
      await client.query('BEGIN');
      try {
        await client.query(m.sql);
        await client.query('INSERT INTO tribunal_migrations (version, name, checksum) VALUES ($1, $2, $3)', [m.version, m.name, m.checksum]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw err;
      }
      done.push(m.version);
    }
    return done;
  } finally {
    await client.query('SELECT pg_advisory_unlock($1, hashtext(coalesce(current_schema(), \'\')))', [LOCK_CLASS]).catch(() => {});
  }
}
