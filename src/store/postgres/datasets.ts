// The PostgreSQL store's datasets and items (migrations/006_datasets.sql). Items are JSON documents
// in insertion order (`seq`); item_count moves with each write in the same transaction.
import type { DatasetFilter, DatasetItemRecord, DatasetRecord, ItemPage, ItemPageQuery, Page, PageQuery } from '../types.ts';
import { extraOf, iso, json, PageSql, placeholders, toPage, type Row } from './codecs.ts';
import type { PgConnection } from './connection.ts';
import type { DatasetStore } from '../parts/datasets.ts';

const DATASET_COLUMNS = ['id', 'org_id', 'project_id', 'name', 'description', 'item_count', 'created_at', 'updated_at'] as const;

function datasetFromRow(r: Row): DatasetRecord {
  return {
    ...(r.extra ?? {}),
    id: r.id,
    org_id: r.org_id,
    project_id: r.project_id,
    name: r.name,
    description: r.description,
    item_count: Number(r.item_count),
    created_at: iso(r.created_at)!,
    updated_at: iso(r.updated_at)!,
  };
}

/** Rows per INSERT: 3 parameters each, well under PostgreSQL's 65,535. */
const INSERT_ROWS = 1000;

export const pgDatasets = (db: PgConnection): DatasetStore => ({
  async createDataset(d: DatasetRecord): Promise<void> {
    await db.write(
      `INSERT INTO datasets (${DATASET_COLUMNS.join(', ')}, extra) VALUES (${placeholders(9)})`,
      [d.id, d.org_id, d.project_id, d.name, d.description, 0, d.created_at, d.updated_at, extraOf(d, DATASET_COLUMNS)],
      (c) => (c === 'datasets_org_name_key' ? { kind: 'name_taken', resource: 'dataset', name: d.name } : { kind: 'id_taken', resource: 'dataset', id: d.id }),
    );
  },

  getDataset(id: string) {
    return db.one('SELECT * FROM datasets WHERE id = $1', [id], datasetFromRow);
  },

  async listDatasets(f: DatasetFilter, page: PageQuery): Promise<Page<DatasetRecord>> {
    const q = new PageSql();
    q.where.push(`org_id = ${q.p(f.org_id)}`);
    if (f.project_id !== undefined) q.where.push(`project_id = ${q.p(f.project_id)}`);
    if (f.name !== undefined) q.where.push(`name = ${q.p(f.name)}`);
    if (f.search) {
      const like = q.p(`%${f.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
      q.where.push(`(name ILIKE ${like} OR description ILIKE ${like})`);
    }
    return toPage((await db.query(q.sql('datasets', page), q.params)).rows, page, datasetFromRow);
  },

  async updateDataset(id: string, patch: { name?: string; description?: string; updated_at: string }): Promise<DatasetRecord | null> {
    const { rows } = await db.query(
      'UPDATE datasets SET name = COALESCE($2, name), description = COALESCE($3, description), updated_at = $4 WHERE id = $1 RETURNING *',
      [id, patch.name ?? null, patch.description ?? null, patch.updated_at],
      { idempotent: false, conflict: () => ({ kind: 'name_taken', resource: 'dataset', name: patch.name ?? '' }) },
    );
    return rows[0] ? datasetFromRow(rows[0]) : null;
  },

  async deleteDataset(id: string): Promise<boolean> {
    // Items go with it (ON DELETE CASCADE).
    return ((await db.write('DELETE FROM datasets WHERE id = $1', [id])).rowCount ?? 0) > 0;
  },

  async addDatasetItems(datasetId: string, items: DatasetItemRecord[]): Promise<boolean> {
    return db.transaction(
      async (c) => {
        // The row lock also orders concurrent adds to one dataset, so each add's items stay together.
        const found = await c.query('SELECT 1 FROM datasets WHERE id = $1 FOR UPDATE', [datasetId]);
        if (!found.rowCount) return { rollback: false };
        for (let i = 0; i < items.length; i += INSERT_ROWS) {
          const chunk = items.slice(i, i + INSERT_ROWS);
          const values = chunk.map((_, r) => `($${r * 2 + 2}, $1, $${r * 2 + 3})`).join(', ');
          // Multi-row VALUES are inserted in order, so seq follows the order given.
          await c.query(`INSERT INTO dataset_items (id, dataset_id, record) VALUES ${values}`, [datasetId, ...chunk.flatMap((item) => [item.id, json(item)])]);
        }
        await c.query('UPDATE datasets SET item_count = item_count + $2, updated_at = $3 WHERE id = $1', [datasetId, items.length, new Date().toISOString()]);
        return true;
      },
      () => ({ kind: 'id_taken', resource: 'dataset_item', id: items[0]?.id ?? '' }),
    );
  },

  getDatasetItem(datasetId: string, itemId: string) {
    return db.one('SELECT record FROM dataset_items WHERE dataset_id = $1 AND id = $2', [datasetId, itemId], (r) => r.record as DatasetItemRecord);
  },

  async listDatasetItems(datasetId: string, page: ItemPageQuery): Promise<ItemPage> {
    const { rows } = await db.query('SELECT seq, record FROM dataset_items WHERE dataset_id = $1 AND seq > $2 ORDER BY seq LIMIT $3', [datasetId, page.after ?? 0, page.limit + 1]);
    const kept = rows.slice(0, page.limit);
    return { items: kept.map((r) => r.record as DatasetItemRecord), last: rows.length > page.limit ? Number(kept[kept.length - 1].seq) : undefined };
  },

  async updateDatasetItem(datasetId: string, item: DatasetItemRecord): Promise<boolean> {
    return db.transaction(async (c) => {
      const r = await c.query('UPDATE dataset_items SET record = $3 WHERE dataset_id = $1 AND id = $2', [datasetId, item.id, json(item)]);
      if (!r.rowCount) return { rollback: false };
      await c.query('UPDATE datasets SET updated_at = $2 WHERE id = $1', [datasetId, new Date().toISOString()]);
      return true;
    });
  },

  async deleteDatasetItem(datasetId: string, itemId: string): Promise<boolean> {
    return db.transaction(async (c) => {
      const r = await c.query('DELETE FROM dataset_items WHERE dataset_id = $1 AND id = $2', [datasetId, itemId]);
      if (!r.rowCount) return { rollback: false };
      await c.query('UPDATE datasets SET item_count = item_count - 1, updated_at = $2 WHERE id = $1', [datasetId, new Date().toISOString()]);
      return true;
    });
  },
});
