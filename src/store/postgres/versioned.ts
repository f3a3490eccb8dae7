// Evaluators and judges in PostgreSQL (migrations/001_initial.sql): the latest version is a row of
// real columns (filtered and sorted), every version a JSON snapshot in <kind>_versions, written in
// the same transaction. One helper keeps both; each resource gives its columns and filter.
import type { ConflictReason, Page, PageQuery } from '../types.ts';
import type { Versioned } from '../parts/versioned.ts';
import { json, PageSql, placeholders, toPage, type Row } from './codecs.ts';
import type { PgConnection, Queryable } from './connection.ts';

export interface VersionedTable<R, F> {
  kind: 'evaluator' | 'judge';
  /** Insert and update order (id first, extra last), matching `values`. */
  columns: readonly string[];
  values(record: R): unknown[];
  fromRow(row: Row): R;
  /** The filter's WHERE clauses (visibility included). */
  where(q: PageSql, filter: F): void;
}

type VersionedRecord = { id: string; name: string; version: number; created_at: string };

export class PgVersioned<R extends VersionedRecord, F> implements Versioned<R, F> {
  private readonly table: string;
  private readonly versions: string;

  constructor(
    private readonly db: PgConnection,
    private readonly t: VersionedTable<R, F>,
  ) {
    this.table = `${t.kind}s`;
    this.versions = `${t.kind}_versions`;
  }

  /** A unique violation as the caller is told it: the name is taken, or else the id. */
  conflict(r: R) {
    return (c: string): ConflictReason =>
      c === `${this.table}_unique_name` ? { kind: 'name_taken', resource: this.t.kind, name: r.name } : { kind: 'id_taken', resource: this.t.kind, id: r.id };
  }

  private insertLatest(c: Queryable, r: R) {
    return c.query(`INSERT INTO ${this.table} (${this.t.columns.join(', ')}) VALUES (${placeholders(this.t.columns.length)})`, this.t.values(r));
  }

  async create(r: R): Promise<void> {
    await this.db.transaction(async (c) => {
      await this.insertLatest(c, r);
      await c.query(`INSERT INTO ${this.versions} (id, version, record) VALUES ($1, $2, $3)`, [r.id, r.version, json(r)]);
    }, this.conflict(r));
  }
  get(id: string) {
    return this.db.one(`SELECT * FROM ${this.table} WHERE id = $1`, [id], this.t.fromRow);
  }
  getVersion(id: string, version: number) {
    return this.db.one(`SELECT record FROM ${this.versions} WHERE id = $1 AND version = $2`, [id, version], (r) => r.record as R);
  }
  async listVersions(id: string) {
    const { rows } = await this.db.query(`SELECT record FROM ${this.versions} WHERE id = $1 ORDER BY version DESC`, [id]);
    return rows.map((r) => r.record as R);
  }
  async list(filter: F, page: PageQuery): Promise<Page<R>> {
    const q = new PageSql();
    this.t.where(q, filter);
    return toPage((await this.db.query(q.sql(this.table, page), q.params)).rows, page, this.t.fromRow);
  }
  async update(next: R, expectedVersion: number): Promise<boolean> {
    const values = this.t.values(next);
    const sets = this.t.columns
      .slice(1)
      .map((col, i) => `${col} = $${i + 2}`)
      .join(', ');
    return this.db.transaction(async (c) => {
      const updated = await c.query(`UPDATE ${this.table} SET ${sets} WHERE id = $1 AND version = $${values.length + 1}`, [...values, expectedVersion]);
      if (updated.rowCount !== 1) return { rollback: false };
      await c.query(`INSERT INTO ${this.versions} (id, version, record) VALUES ($1, $2, $3) ON CONFLICT (id, version) DO UPDATE SET record = excluded.record`, [
        next.id,
        next.version,
        json(next),
      ]);
      return true;
    }, this.conflict(next));
  }
  async delete(id: string): Promise<boolean> {
    return this.db.transaction(async (c) => {
      const deleted = await c.query(`DELETE FROM ${this.table} WHERE id = $1`, [id]);
      await c.query(`DELETE FROM ${this.versions} WHERE id = $1`, [id]);
      return deleted.rowCount === 1;
    });
  }

  /**
   * Bulk import (tribunal migrate --from json): the record with its whole version history. One whose
   * id exists keeps its latest version; only versions it lacks are added.
   */
  importWithHistory(latest: R, versions: R[]): Promise<{ latest: boolean; versions: number }> {
    return this.db.transaction(async (c) => {
      const exists = await c.query(`SELECT 1 FROM ${this.table} WHERE id = $1`, [latest.id]);
      if (!exists.rowCount) await this.insertLatest(c, latest);
      let added = 0;
      for (const v of versions.length ? versions : [latest]) {
        const r = await c.query(`INSERT INTO ${this.versions} (id, version, record) VALUES ($1, $2, $3) ON CONFLICT (id, version) DO NOTHING`, [v.id, v.version, json(v)]);
        added += r.rowCount ?? 0;
      }
      return { latest: !exists.rowCount, versions: added };
    }, this.conflict(latest));
  }
}
