// logs.jsonl, the JSON store's file of record for execution logs, with its in-memory index
// (log-index.ts): appends (the store group-commits flush()), reads of a log's line by its offset,
// and the rewrite after a demo-org purge.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { appendAndSync, loadLogFile, syncDir } from './json-files.ts';
import { LogIndex, PENDING, type IndexedLog, type IndexFilter, type ValueField } from './log-index.ts';
import type { ExecutionLogRecord, Page, PageQuery } from './types.ts';

/** Copy size of a rewrite: the kept lines never sit in memory whole. */
const COPY_CHUNK = 4 * 2 ** 20;

export class LogFile {
  /** Lines not yet committed, by log id (without the newline); read from here until they are. */
  private readonly pending = new Map<string, string>();
  /** Ids of pending lines, in append order. */
  private queue: string[] = [];
  private rewriteDue = false;
  /** Bytes in the file; undefined after a failed write, until the next flush asks the file. */
  private size: number | undefined;
  private closed = false;

  private constructor(
    private readonly file: string,
    private handle: fsp.FileHandle,
    size: number,
    private index: LogIndex,
  ) {
    this.size = size;
  }

  static async open(file: string, warn?: (line: string) => void): Promise<LogFile> {
    const index = new LogIndex();
    const { handle, size } = await loadLogFile(file, (record, offset, length) => index.add(record as IndexedLog, offset, length), warn);
    return new LogFile(file, handle, size, index);
  }

  has(id: string): boolean {
    return this.index.has(id);
  }

  /** Indexes the log at once, so that it is listed and read before its line is committed. */
  add(record: ExecutionLogRecord): void {
    this.index.add(record, PENDING, 0);
    this.pending.set(record.id, JSON.stringify(record));
    this.queue.push(record.id);
  }

  get(id: string): ExecutionLogRecord | null {
    const row = this.index.rowOf(id);
    return row === undefined ? null : this.read(row);
  }

  list(filter: IndexFilter, page: PageQuery): Page<ExecutionLogRecord> {
    const rows = this.index.find(filter, page.after, page.limit + 1);
    const items = rows.slice(0, page.limit).map((row) => this.read(row));
    const last = items[items.length - 1];
    return { items, last: rows.length > page.limit && last ? { created_at: last.created_at, id: last.id } : undefined };
  }

  values(orgId: string, field: ValueField, query: { limit: number; after?: string; starts_with?: string }): { values: string[]; more: boolean } {
    return this.index.values(orgId, field, query);
  }

  /**
   * A fresh copy of a log's record. Synchronous on purpose: the offset and the handle it is read
   * through are taken at one moment, so a rewrite (which swaps both) cannot come between them; and an
   * offset is only set once its line is fdatasync'd, so only committed bytes are ever read.
   */
  private read(row: number): ExecutionLogRecord {
    if (this.closed) throw new Error('the JSON store is closed');
    const id = this.index.idOf(row);
    const { offset, length } = this.index.location(row);
    if (offset === PENDING) return JSON.parse(this.pending.get(id)!) as ExecutionLogRecord;
    const bytes = Buffer.allocUnsafe(length);
    let record: ExecutionLogRecord | undefined;
    try {
      if (fs.readSync(this.handle.fd, bytes, 0, length, offset) === length) record = JSON.parse(bytes.toString('utf8')) as ExecutionLogRecord;
    } catch {
      /* reported below */
    }
    if (record?.id !== id)
      throw new Error(
        `${this.file}: the line of execution log ${id} at byte ${offset} no longer holds it (was the file changed by hand?); restart Tribunal to index the file again.`,
      );
    return record;
  }

  /** Drops an organization's logs from the index now; the next flush rewrites the file without them. */
  purgeOrganization(orgId: string): boolean {
    if (!this.index.removeOrg(orgId)) return false;
    for (const id of this.pending.keys()) if (!this.index.has(id)) this.pending.delete(id);
    this.rewriteDue = true;
    return true;
  }

  /** Appends the pending lines and fdatasyncs them; run only by the store's group commit. */
  async flush(): Promise<void> {
    return this.rewriteDue ? this.rewrite() : this.append();
  }

  private async append(): Promise<void> {
    const lines = this.takeQueue();
    if (!lines.length) return;
    const start = this.size ?? (await this.handle.stat()).size;
    // Each line's UTF-8 length once, then the lines encoded straight into one buffer: not joined
    // into one string first (a copy of every line) and measured again after the write.
    const lengths = new Array<number>(lines.length);
    let total = 0;
    for (let i = 0; i < lines.length; i++) total += (lengths[i] = Buffer.byteLength(lines[i]!.line)) + 1;
    const bytes = Buffer.allocUnsafe(total);
    let end = 0;
    for (let i = 0; i < lines.length; i++) {
      end += bytes.write(lines[i]!.line, end, lengths[i]!, 'utf8');
      bytes[end++] = 0x0a;
    }
    try {
      await appendAndSync(this.handle.fd, bytes);
    } catch (err) {
      this.size = undefined;
      throw err;
    }
    let at = start;
    for (let i = 0; i < lines.length; i++) {
      const { id, line } = lines[i]!;
      const length = lengths[i]!;
      const row = this.index.rowOf(id);
      if (row !== undefined && this.pending.get(id) === line) this.index.setLocation(row, at, length);
      this.pending.delete(id);
      at += length + 1;
    }
    this.size = at;
  }

  /** The queued lines still wanted (a purge may have dropped some). */
  private takeQueue(): Array<{ id: string; line: string }> {
    const ids = this.queue;
    this.queue = [];
    const lines: Array<{ id: string; line: string }> = [];
    for (const id of ids) {
      const line = this.pending.get(id);
      if (line !== undefined) lines.push({ id, line });
    }
    return lines;
  }

  /**
   * After a purge: the kept lines (pending ones included) go to a new file that replaces logs.jsonl
   * atomically (temp file, fsync, rename, fsync of the directory); then the index is rebuilt with
   * the new offsets and swapped in with the new handle. Runs inside the log commit, so no append
   * interleaves; reads go on against the old file until the swap.
   */
  private async rewrite(): Promise<void> {
    this.rewriteDue = false;
    const queued = this.takeQueue();
    const rows = this.index.committedRowsInFileOrder();
    const newOffset = new Float64Array(this.index.rowCount).fill(PENDING);
    const newLength = new Uint32Array(this.index.rowCount);
    const tmp = `${this.file}.${process.pid}.tmp`;
    let written = 0;
    let handle: fsp.FileHandle | undefined;
    try {
      const out = await fsp.open(tmp, 'w');
      try {
        // Neighbouring kept lines are copied as one span, a few MB at a time.
        const buf = Buffer.allocUnsafe(COPY_CHUNK);
        for (let i = 0; i < rows.length; ) {
          const spanStart = this.index.location(rows[i]!).offset;
          let spanEnd = spanStart;
          for (; i < rows.length && this.index.location(rows[i]!).offset === spanEnd; i++) {
            const { length } = this.index.location(rows[i]!);
            newOffset[rows[i]!] = written + (spanEnd - spanStart);
            newLength[rows[i]!] = length;
            spanEnd += length + 1;
          }
          for (let pos = spanStart; pos < spanEnd; ) {
            const n = Math.min(COPY_CHUNK, spanEnd - pos);
            const { bytesRead } = await this.handle.read(buf, 0, n, pos);
            if (bytesRead !== n) throw new Error(`${this.file} is shorter than its index while rewriting it; nothing was replaced.`);
            await out.write(buf, 0, n);
            pos += n;
          }
          written += spanEnd - spanStart;
        }
        for (const { id, line } of queued) {
          const length = Buffer.byteLength(line);
          // A purge while the copy ran may have dropped it: the next rewrite leaves it out.
          const row = this.index.rowOf(id);
          if (row !== undefined) (newOffset[row] = written), (newLength[row] = length);
          written += length + 1;
        }
        if (queued.length) await out.write(queued.map((q) => `${q.line}\n`).join(''));
        await out.sync();
      } finally {
        await out.close();
      }
      await fsp.rename(tmp, this.file);
      await syncDir(path.dirname(this.file));
      handle = await fsp.open(this.file, 'a+');
    } catch (err) {
      // Nothing swapped: the old file and index stay in use, and the next flush tries again.
      await fsp.rm(tmp, { force: true });
      this.queue.unshift(...queued.map((q) => q.id));
      this.rewriteDue = true;
      throw err;
    }
    // Offsets and the handle they belong to change in one synchronous step (see read()). Rows
    // appended or purged while the copy ran are pending or gone in the index and stay so.
    this.index = this.index.compact((row) => (row < newOffset.length && newOffset[row]! !== PENDING ? [newOffset[row]!, newLength[row]!] : undefined));
    for (const { id } of queued) this.pending.delete(id);
    const old = this.handle;
    this.handle = handle;
    this.size = written;
    await old.close();
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.handle.close();
  }
}
