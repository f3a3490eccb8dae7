// The PostgreSQL store's attachments (migrations/018_files.sql): bytea rows keyed by organization and
// id. Lists and metadata reads never select the bytes.
import type { FileRecord, FileStore } from '../file-types.ts';
import type { Page, PageQuery } from '../types.ts';
import { iso } from './codecs.ts';

type Query = (sql: string, params: unknown[]) => Promise<{ rows: Array<Record<string, any>>; rowCount: number | null }>;

const META = 'org_id, id, name, content_type, bytes, sha256, created_at';

const fromRow = (r: Record<string, any>): FileRecord => ({
  id: r.id,
  org_id: r.org_id,
  name: r.name,
  content_type: r.content_type,
  bytes: Number(r.bytes),
  sha256: r.sha256,
  created_at: iso(r.created_at) as string,
});

export class PgFiles implements FileStore {
  constructor(
    private readonly query: Query,
    private readonly write: Query,
  ) {}

  async put(f: FileRecord, data: Buffer) {
    // One statement: of two uploads of the same bytes at once, one inserts and the other reads it.
    const { rows } = await this.write(`INSERT INTO files (${META}, data) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (org_id, id) DO NOTHING RETURNING ${META}`, [
      f.org_id,
      f.id,
      f.name,
      f.content_type,
      f.bytes,
      f.sha256,
      f.created_at,
      data,
    ]);
    if (rows[0]) return { record: fromRow(rows[0]), created: true };
    const existing = await this.get(f.org_id, f.id);
    if (!existing) throw new Error(`file ${f.id} was neither inserted nor found`);
    return { record: existing, created: false };
  }
  async get(orgId: string, id: string) {
    const { rows } = await this.query(`SELECT ${META} FROM files WHERE org_id = $1 AND id = $2`, [orgId, id]);
    return rows[0] ? fromRow(rows[0]) : null;
  }
  async read(orgId: string, id: string) {
    const { rows } = await this.query('SELECT data FROM files WHERE org_id = $1 AND id = $2', [orgId, id]);
    return rows[0] ? (rows[0].data as Buffer) : null;
  }
  async list(orgId: string, page: PageQuery): Promise<Page<FileRecord>> {
    const params: unknown[] = [orgId, page.limit + 1];
    let after = '';
    if (page.after) {
      params.push(page.after.created_at, page.after.id);
      after = 'AND (created_at, id) < ($3::timestamptz, $4::text)';
    }
    const { rows } = await this.query(`SELECT ${META} FROM files WHERE org_id = $1 ${after} ORDER BY created_at DESC, id DESC LIMIT $2`, params);
    const items = rows.slice(0, page.limit).map(fromRow);
    const last = items[items.length - 1];
    return { items, last: rows.length > page.limit && last ? { created_at: last.created_at, id: last.id } : undefined };
  }
  async delete(orgId: string, id: string) {
    const { rowCount } = await this.write('DELETE FROM files WHERE org_id = $1 AND id = $2', [orgId, id]);
    return (rowCount ?? 0) > 0;
  }
  async usage(orgId: string) {
    const { rows } = await this.query('SELECT count(*)::int AS count, coalesce(sum(bytes), 0)::bigint AS bytes FROM files WHERE org_id = $1', [orgId]);
    return { count: Number(rows[0]?.count ?? 0), bytes: Number(rows[0]?.bytes ?? 0) };
  }
}
