// The JSON store's datasets, kept out of db.json: a dataset may hold 100,000 items, and db.json is
// held in memory and rewritten whole.
//
// - datasets/datasets.json: the datasets themselves (small), replaced durably on each change.
// - datasets/<dataset id>.jsonl: the items, one JSON line each, append-only. An edit appends the
//   item again (the later line wins), a delete appends `{"id":..,"deleted":true}`.
// - In memory, per dataset, only an index: each live item's id, its position (insertion order) and
//   where its latest line lies in the file (offset, length). Items are read from disk a page at a time.
// - Writes go through one queue, and an item enters the index only once its line is on disk (fsync).
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import readline from 'node:readline';
import { appendDurably, GroupCommit, setAside, writeFileDurably } from './json-files.ts';
import { readTableFile } from './json-damage.ts';
import { log } from '../log.ts';
import { matchesGiven, pageNewestFirst } from './json-data.ts';
import { StoreConflictError, type DatasetFilter, type DatasetItemRecord, type DatasetRecord, type ItemPage, type ItemPageQuery, type Page, type PageQuery } from './types.ts';
import type { DatasetStore } from './parts/datasets.ts';

/** Where each live item's latest line is. Positions are dense (one per item ever added), so arrays index by them. */
class ItemIndex {
  readonly ids: Array<string | undefined> = [];
  readonly offsets: number[] = [];
  readonly lengths: number[] = [];
  readonly positions = new Map<string, number>();
  /** Bytes in the file: where the next line goes. */
  size = 0;

  place(id: string, offset: number, length: number): void {
    let at = this.positions.get(id);
    if (at === undefined) {
      at = this.ids.length;
      this.ids.push(id);
      this.positions.set(id, at);
    }
    this.offsets[at] = offset;
    this.lengths[at] = length;
  }

  remove(id: string): void {
    const at = this.positions.get(id);
    if (at === undefined) return;
    this.ids[at] = undefined;
    this.positions.delete(id);
  }
}

const byteLength = (text: string) => Buffer.byteLength(text, 'utf8');

export class DatasetFiles {
  private datasets: Record<string, DatasetRecord> = Object.create(null);
  private readonly indexes = new Map<string, ItemIndex>();
  private readonly metaCommit = new GroupCommit(() => writeFileDurably(this.metaFile, JSON.stringify({ format: 1, datasets: this.datasets })));
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly dir: string) {}

  private get metaFile() {
    return path.join(this.dir, 'datasets.json');
  }
  private itemFile(id: string) {
    return path.join(this.dir, `${id}.jsonl`);
  }

  async load(): Promise<void> {
    fs.mkdirSync(this.dir, { recursive: true });
    // h-harden: missing beside item files, or garbled: the start stops (json-damage.ts).
    this.datasets = await readTableFile<DatasetRecord>(this.dir, 'datasets.json', 'datasets', (f) => f.endsWith('.jsonl'));
    for (const id of Object.keys(this.datasets)) {
      const index = await this.loadItems(this.itemFile(id));
      this.indexes.set(id, index);
      this.datasets[id].item_count = index.positions.size;
    }
  }

  /** Builds the index from the file, streamed; an unterminated last line (a crash mid-append) is cut off. */
  private async loadItems(file: string): Promise<ItemIndex> {
    const index = new ItemIndex();
    let stream: fs.ReadStream;
    try {
      await fsp.access(file);
      stream = fs.createReadStream(file, { encoding: 'utf8' });
    } catch {
      return index;
    }
    let offset = 0;
    let lastStart = 0;
    let lastWhole = false;
    let lineNo = 0;
    // h-harden: a garbled line is skipped, left in place, copied to <file>.rejected and logged.
    const rejected: Array<{ line: number; text: string; reason: string }> = [];
    for await (const line of readline.createInterface({ input: stream, crlfDelay: Infinity })) {
      lineNo++;
      lastStart = offset;
      lastWhole = false;
      try {
        const rec = JSON.parse(line) as { id?: unknown; deleted?: unknown } | null;
        if (typeof rec?.id === 'string') {
          lastWhole = true;
          if (rec.deleted === true) index.remove(rec.id);
          else index.place(rec.id, offset, byteLength(line));
        }
      } catch {
        /* not JSON: rejected below */
      }
      if (!lastWhole && line.trim()) rejected.push({ line: lineNo, text: line, reason: 'not a dataset item, skipped and left in place' });
      offset += byteLength(line) + 1;
    }
    const { size } = await fsp.stat(file);
    // The last line torn by a crash mid-append is cut off below; it was never acknowledged, but is copied aside too.
    if (offset > size && rejected.at(-1)?.line === lineNo) rejected[rejected.length - 1].reason = 'torn last line (a crash mid-append), cut off the file';
    if (rejected.length) await setAside(file, rejected, (l) => log.warn(l));
    index.size = size;
    if (offset > size) {
      // The last line has no newline: a crash mid-append. Whole, it is kept and terminated; torn, it
      // was never acknowledged (acknowledged lines are fsynced with their newline) and is cut off.
      if (lastWhole) await fsp.appendFile(file, '\n');
      else await fsp.truncate(file, lastStart);
      index.size = lastWhole ? size + 1 : lastStart;
    }
    return index;
  }

  /** Runs writes one at a time, so file offsets and the index agree. */
  private serial<T>(write: () => Promise<T>): Promise<T> {
    const run = this.queue.then(write, write);
    this.queue = run.catch(() => {});
    return run;
  }

  private async append(datasetId: string, index: ItemIndex, text: string): Promise<number> {
    const start = index.size;
    await appendDurably(this.itemFile(datasetId), start, text);
    index.size = start + byteLength(text);
    return start;
  }

  private touch(id: string): Promise<void> {
    const dataset = this.datasets[id];
    if (dataset) dataset.updated_at = new Date().toISOString();
    return this.metaCommit.commit();
  }

  async flush(): Promise<void> {
    await this.queue;
    await this.metaCommit.commit();
  }

  async create(dataset: DatasetRecord): Promise<void> {
    if (this.datasets[dataset.id]) throw new StoreConflictError({ kind: 'id_taken', resource: 'dataset', id: dataset.id });
    if (Object.values(this.datasets).some((d) => d.org_id === dataset.org_id && d.name === dataset.name)) {
      throw new StoreConflictError({ kind: 'name_taken', resource: 'dataset', name: dataset.name });
    }
    this.datasets[dataset.id] = { ...dataset, item_count: 0 };
    this.indexes.set(dataset.id, new ItemIndex());
    await this.metaCommit.commit();
  }

  get(id: string): DatasetRecord | null {
    const dataset = this.datasets[id];
    return dataset ? { ...dataset } : null;
  }

  list(filter: DatasetFilter, page: PageQuery): Page<DatasetRecord> {
    const needle = filter.search?.toLowerCase();
    return pageNewestFirst(
      this.datasets,
      (d) =>
        d.org_id === filter.org_id &&
        matchesGiven(filter, d, ['project_id', 'name']) &&
        (!needle || d.name.toLowerCase().includes(needle) || d.description.toLowerCase().includes(needle)),
      page,
    );
  }

  async update(id: string, patch: { name?: string; description?: string; updated_at: string }): Promise<DatasetRecord | null> {
    const dataset = this.datasets[id];
    if (!dataset) return null;
    if (patch.name !== undefined && patch.name !== dataset.name && Object.values(this.datasets).some((d) => d.org_id === dataset.org_id && d.name === patch.name)) {
      throw new StoreConflictError({ kind: 'name_taken', resource: 'dataset', name: patch.name });
    }
    Object.assign(dataset, Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)));
    await this.metaCommit.commit();
    return { ...dataset };
  }

  delete(id: string): Promise<boolean> {
    return this.serial(async () => {
      if (!this.datasets[id]) return false;
      delete this.datasets[id];
      this.indexes.delete(id);
      await this.metaCommit.commit();
      await fsp.rm(this.itemFile(id), { force: true });
      return true;
    });
  }

  async deleteOrg(orgId: string): Promise<void> {
    for (const d of Object.values(this.datasets)) if (d.org_id === orgId) await this.delete(d.id);
  }

  addItems(datasetId: string, items: DatasetItemRecord[]): Promise<boolean> {
    return this.serial(async () => {
      const index = this.indexes.get(datasetId);
      if (!index) return false;
      for (const item of items) {
        if (index.positions.has(item.id)) throw new StoreConflictError({ kind: 'id_taken', resource: 'dataset_item', id: item.id });
      }
      const lines = items.map((item) => JSON.stringify(item));
      let offset = await this.append(datasetId, index, lines.map((l) => `${l}\n`).join(''));
      items.forEach((item, i) => {
        const length = byteLength(lines[i]);
        index.place(item.id, offset, length);
        offset += length + 1;
      });
      this.datasets[datasetId].item_count = index.positions.size;
      await this.touch(datasetId);
      return true;
    });
  }

  private async readLines(datasetId: string, index: ItemIndex, positions: number[]): Promise<DatasetItemRecord[]> {
    if (!positions.length) return [];
    let handle: fsp.FileHandle;
    try {
      handle = await fsp.open(this.itemFile(datasetId), 'r');
    } catch {
      return []; // deleted meanwhile
    }
    try {
      const out: DatasetItemRecord[] = [];
      // Items of a page are usually neighbours in the file: read the span once.
      const from = Math.min(...positions.map((p) => index.offsets[p]));
      const to = Math.max(...positions.map((p) => index.offsets[p] + index.lengths[p]));
      const span = to - from <= 8 * 1024 * 1024;
      const buffer = span ? Buffer.alloc(to - from) : undefined;
      if (buffer) await handle.read(buffer, 0, buffer.length, from);
      for (const p of positions) {
        let bytes: Buffer;
        if (buffer) bytes = buffer.subarray(index.offsets[p] - from, index.offsets[p] - from + index.lengths[p]);
        else {
          bytes = Buffer.alloc(index.lengths[p]);
          await handle.read(bytes, 0, bytes.length, index.offsets[p]);
        }
        out.push(JSON.parse(bytes.toString('utf8')) as DatasetItemRecord);
      }
      return out;
    } finally {
      await handle.close();
    }
  }

  async getItem(datasetId: string, itemId: string): Promise<DatasetItemRecord | null> {
    const index = this.indexes.get(datasetId);
    const at = index?.positions.get(itemId);
    if (!index || at === undefined) return null;
    return (await this.readLines(datasetId, index, [at]))[0] ?? null;
  }

  async listItems(datasetId: string, page: ItemPageQuery): Promise<ItemPage> {
    const index = this.indexes.get(datasetId);
    if (!index) return { items: [] };
    const positions: number[] = [];
    let p = page.after === undefined ? 0 : page.after + 1;
    for (; p < index.ids.length && positions.length < page.limit; p++) if (index.ids[p] !== undefined) positions.push(p);
    while (p < index.ids.length && index.ids[p] === undefined) p++;
    const more = p < index.ids.length;
    const items = await this.readLines(datasetId, index, positions);
    return { items, last: more ? positions[positions.length - 1] : undefined };
  }

  updateItem(datasetId: string, item: DatasetItemRecord): Promise<boolean> {
    return this.serial(async () => {
      const index = this.indexes.get(datasetId);
      if (!index?.positions.has(item.id)) return false;
      const line = JSON.stringify(item);
      index.place(item.id, await this.append(datasetId, index, `${line}\n`), byteLength(line));
      await this.touch(datasetId);
      return true;
    });
  }

  deleteItem(datasetId: string, itemId: string): Promise<boolean> {
    return this.serial(async () => {
      const index = this.indexes.get(datasetId);
      if (!index?.positions.has(itemId)) return false;
      await this.append(datasetId, index, `${JSON.stringify({ id: itemId, deleted: true })}\n`);
      index.remove(itemId);
      this.datasets[datasetId].item_count = index.positions.size;
      await this.touch(datasetId);
      return true;
    });
  }
}

/** The dataset part of the JSON store, over its files (made and loaded by init). */
export function jsonDatasets(files: () => DatasetFiles): DatasetStore {
  return {
    createDataset: (d) => files().create(d),
    getDataset: async (id) => files().get(id),
    listDatasets: async (filter, page) => files().list(filter, page),
    updateDataset: (id, patch) => files().update(id, patch),
    deleteDataset: (id) => files().delete(id),
    addDatasetItems: (id, items) => files().addItems(id, items),
    getDatasetItem: (id, itemId) => files().getItem(id, itemId),
    listDatasetItems: (id, page) => files().listItems(id, page),
    updateDatasetItem: (id, item) => files().updateItem(id, item),
    deleteDatasetItem: (id, itemId) => files().deleteItem(id, itemId),
  };
}
