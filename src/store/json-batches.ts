// The JSON store's batch runs, kept out of db.json (which is rewritten whole on each change):
//
// - batches/batches.json: the runs themselves (small records), replaced durably on each change.
// - batches/<id>.jsonl: the run's finished rows, one JSON line each, append-only, in the order they
//   finish. A row is acknowledged once its line is fsynced; the run's done/failed/cost counters
//   are recounted from this file when an unfinished run is loaded, so a crash between the row and
//   batches.json loses nothing.
// - batches/<id>.items.jsonl: the items given in the request of an inline run, written once.
// - In memory, per run whose rows were asked for: the place of each row's line by position (12
//   bytes a row), loaded on first use; runs no longer running are dropped from memory first.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import readline from 'node:readline';
import type { DatasetItemInput } from '../schemas.ts';
import { GroupCommit, writeFileDurably } from './json-files.ts';
import { isAfter, newestFirst, StoreConflictError, type BatchExecutionRecord, type BatchFilter, type BatchPatch, type BatchRowQuery, type BatchRowRecord, type Page, type PageQuery } from './types.ts';

const byteLength = (text: string) => Buffer.byteLength(text, 'utf8');
/** Row indexes kept in memory at most (those of running batches are never dropped). */
const CACHED_INDEXES = 16;

class RowIndex {
  /** position -> [offset, length] of its line; absent = not recorded. */
  readonly at = new Map<number, [number, number]>();
  size = 0;
  /** Sorted positions, made when paging asks for them. */
  private sorted?: number[];
  place(position: number, offset: number, length: number) {
    this.at.set(position, [offset, length]);
    this.sorted = undefined;
  }
  positions(): number[] {
    return (this.sorted ??= [...this.at.keys()].sort((a, b) => a - b));
  }
}

export class JsonBatches {
  private batches: Record<string, BatchExecutionRecord> = Object.create(null);
  private readonly rows = new Map<string, RowIndex>();
  private readonly metaCommit = new GroupCommit(() => writeFileDurably(this.metaFile, JSON.stringify({ format: 1, batches: this.batches })));
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(private readonly dir: string) {}

  private get metaFile() {
    return path.join(this.dir, 'batches.json');
  }
  private rowFile(id: string) {
    return path.join(this.dir, `${id}.jsonl`);
  }
  private itemFile(id: string) {
    return path.join(this.dir, `${id}.items.jsonl`);
  }

  async load(): Promise<void> {
    fs.mkdirSync(this.dir, { recursive: true });
    try {
      const parsed = JSON.parse(await fsp.readFile(this.metaFile, 'utf8')) as { batches?: Record<string, BatchExecutionRecord> };
      this.batches = Object.assign(Object.create(null) as Record<string, BatchExecutionRecord>, parsed.batches ?? {});
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new Error(`${this.metaFile} cannot be read (${(err as Error).message}); restore it from a backup.`);
    }
    // Unfinished runs: recount from their rows, which may be ahead of batches.json after a crash.
    for (const b of Object.values(this.batches)) {
      if (b.status !== 'queued' && b.status !== 'running') continue;
      const index = await this.index(b.id);
      b.done = 0;
      b.failed = 0;
      b.cost_usd = 0;
      // A slice of rows at a time: a run of 100,000 rows is never read whole into memory.
      const positions = index.positions();
      for (let i = 0; i < positions.length; i += 1000) for (const row of await this.readRows(b.id, index, positions.slice(i, i + 1000))) this.count(b, row);
    }
  }

  async flush(): Promise<void> {
    await Promise.all([...this.queues.values()]);
    await this.metaCommit.commit();
  }

  private count(b: BatchExecutionRecord, row: BatchRowRecord) {
    if (row.score !== null) b.done++;
    else b.failed++;
    b.cost_usd = b.cost_usd === null || row.cost_usd === null ? null : Math.round((b.cost_usd + row.cost_usd) * 1e9) / 1e9;
  }

  /** One write at a time per run, so offsets and the index agree. */
  private serial<T>(id: string, write: () => Promise<T>): Promise<T> {
    const run = (this.queues.get(id) ?? Promise.resolve()).then(write, write);
    const tail = run.catch(() => {});
    this.queues.set(id, tail);
    void tail.then(() => {
      if (this.queues.get(id) === tail) this.queues.delete(id);
    });
    return run;
  }

  private async index(id: string): Promise<RowIndex> {
    let index = this.rows.get(id);
    if (index) {
      this.rows.delete(id);
      this.rows.set(id, index); // most recently used last
      return index;
    }
    index = new RowIndex();
    const file = this.rowFile(id);
    if (fs.existsSync(file)) {
      let offset = 0;
      let lastStart = 0;
      let lastWhole = true;
      for await (const line of readline.createInterface({ input: fs.createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity })) {
        lastStart = offset;
        lastWhole = false;
        try {
          const row = JSON.parse(line) as { position?: unknown };
          if (typeof row.position === 'number' && !index.at.has(row.position)) index.place(row.position, offset, byteLength(line));
          lastWhole = true;
        } catch {
          /* a torn last line is dealt with below */
        }
        offset += byteLength(line) + 1;
      }
      const { size } = await fsp.stat(file);
      index.size = size;
      if (offset > size) {
        // No newline at the end: a crash mid-append. A torn line was never acknowledged.
        if (lastWhole) await fsp.appendFile(file, '\n');
        else await fsp.truncate(file, lastStart);
        index.size = lastWhole ? size + 1 : lastStart;
      }
    }
    this.rows.set(id, index);
    for (const [other] of this.rows) {
      if (this.rows.size <= CACHED_INDEXES) break;
      const status = this.batches[other]?.status;
      if (other !== id && status !== 'running' && status !== 'queued') this.rows.delete(other);
    }
    return index;
  }

  private async readRows(id: string, index: RowIndex, positions: number[]): Promise<BatchRowRecord[]> {
    if (!positions.length) return [];
    const handle = await fsp.open(this.rowFile(id), 'r');
    try {
      const out: BatchRowRecord[] = [];
      for (const p of positions) {
        const [offset, length] = index.at.get(p)!;
        const bytes = Buffer.alloc(length);
        await handle.read(bytes, 0, length, offset);
        out.push(JSON.parse(bytes.toString('utf8')) as BatchRowRecord);
      }
      return out;
    } finally {
      await handle.close();
    }
  }

  async create(batch: BatchExecutionRecord, items?: DatasetItemInput[]): Promise<void> {
    if (this.batches[batch.id]) throw new StoreConflictError({ kind: 'id_taken', resource: 'batch_execution', id: batch.id });
    if (items?.length) {
      const handle = await fsp.open(this.itemFile(batch.id), 'w');
      try {
        await handle.writeFile(items.map((i) => `${JSON.stringify(i)}\n`).join(''));
        await handle.sync();
      } finally {
        await handle.close();
      }
    }
    this.batches[batch.id] = structuredClone(batch);
    await this.metaCommit.commit();
  }

  get(id: string): BatchExecutionRecord | null {
    const b = this.batches[id];
    return b ? structuredClone(b) : null;
  }

  list(filter: BatchFilter, page: PageQuery): Page<BatchExecutionRecord> {
    const sorted = Object.values(this.batches)
      .filter(
        (b) =>
          b.org_id === filter.org_id &&
          (filter.judge_id === undefined || b.judge_id === filter.judge_id) &&
          (filter.dataset_id === undefined || b.dataset_id === filter.dataset_id) &&
          (filter.status === undefined || b.status === filter.status) &&
          (filter.date_from === undefined || b.created_at >= filter.date_from) &&
          (filter.date_to === undefined || b.created_at <= filter.date_to),
      )
      .sort(newestFirst);
    const start = page.after ? sorted.findIndex((b) => isAfter(b, page.after!)) : 0;
    if (start < 0) return { items: [] };
    const items = sorted.slice(start, start + page.limit).map((b) => structuredClone(b));
    const last = items[items.length - 1];
    return { items, last: start + page.limit < sorted.length && last ? { created_at: last.created_at, id: last.id } : undefined };
  }

  unfinished(): BatchExecutionRecord[] {
    return Object.values(this.batches)
      .filter((b) => b.status === 'queued' || b.status === 'running')
      .sort((a, b) => -newestFirst(a, b))
      .map((b) => structuredClone(b));
  }

  async update(id: string, patch: BatchPatch): Promise<BatchExecutionRecord | null> {
    const b = this.batches[id];
    if (!b) return null;
    const { if_status, ...fields } = patch;
    if (if_status && !if_status.includes(b.status)) return null;
    Object.assign(b, Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)));
    await this.metaCommit.commit();
    return structuredClone(b);
  }

  record(batchId: string, row: BatchRowRecord): Promise<boolean> {
    return this.serial(batchId, async () => {
      const b = this.batches[batchId];
      if (!b) return false;
      const index = await this.index(batchId);
      if (index.at.has(row.position)) return false;
      const line = JSON.stringify(row);
      const start = index.size;
      const handle = await fsp.open(this.rowFile(batchId), 'a');
      try {
        await handle.write(`${line}\n`);
        await handle.datasync();
      } catch (err) {
        await handle.truncate(start).catch(() => {});
        throw err;
      } finally {
        await handle.close();
      }
      index.size = start + byteLength(line) + 1;
      index.place(row.position, start, byteLength(line));
      this.count(b, row);
      // The counters follow in batches.json; the rows file is the truth they are recounted from.
      void this.metaCommit.commit().catch(() => {});
      return true;
    });
  }

  async listRows(batchId: string, query: BatchRowQuery): Promise<{ items: BatchRowRecord[]; last?: number }> {
    if (!this.batches[batchId]) return { items: [] };
    const index = await this.index(batchId);
    const all = index.positions();
    let lo = 0;
    let hi = all.length;
    const after = query.after ?? -1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (all[mid] <= after) lo = mid + 1;
      else hi = mid;
    }
    const positions = all.slice(lo, lo + query.limit);
    const items = await this.readRows(batchId, index, positions);
    return { items, last: lo + query.limit < all.length ? positions[positions.length - 1] : undefined };
  }

  async items(batchId: string, from: number, count: number): Promise<DatasetItemInput[]> {
    const out: DatasetItemInput[] = [];
    const file = this.itemFile(batchId);
    if (!this.batches[batchId] || !fs.existsSync(file)) return out;
    let n = 0;
    // At most 1,000 items, read once per chunk: a stream, never the whole file at once.
    const lines = readline.createInterface({ input: fs.createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity });
    for await (const line of lines) {
      if (n >= from + count) break;
      if (n >= from && line) out.push(JSON.parse(line) as DatasetItemInput);
      n++;
    }
    lines.close();
    return out;
  }

  async deleteOrg(orgId: string): Promise<void> {
    for (const b of Object.values(this.batches)) {
      if (b.org_id !== orgId) continue;
      await this.serial(b.id, async () => {
        delete this.batches[b.id];
        this.rows.delete(b.id);
        await fsp.rm(this.rowFile(b.id), { force: true });
        await fsp.rm(this.itemFile(b.id), { force: true });
      });
    }
    await this.metaCommit.commit();
  }
}
