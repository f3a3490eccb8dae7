// The JSON store's batch runs, kept out of db.json (which is rewritten whole on each change):
//
// - batches/batches.json: the runs themselves (small records), replaced durably on each change.
// - batches/<id>.jsonl: the run's finished rows, one line each, append-only, in the order they
//   finish. A row is acknowledged once its line is fsynced. The rows that finish while a write is
//   under way go together in the next write and fdatasync (group commit), through a handle kept
//   open while rows come (closed after a second without one); the run's done/failed/cost counters
//   are recounted from this file when an unfinished run is loaded, so a crash between the row and
//   batches.json loses nothing. A line is the row's scores (`rowScores`, as a JSON array: a
//   couple of hundred bytes, and arrays parse about three times faster than objects), a tab, then
//   the whole row; JSON never writes a raw tab, so the first one splits the two, and reading every
//   row's scores (an experiment, a summary) never parses the justifications. Lines written before
//   the scores prefix existed (no tab) are the whole row, and still read.
// - batches/<id>.items.jsonl: the items given in the request of an inline run, written once.
// - In memory, per run whose rows were asked for: the place of each row's line by position,
//   loaded on first use; runs no longer running are dropped from memory first. A page of rows is
//   read in one positioned read per stretch of the file it covers, not one read per row.
// - In memory too, the scores of ended runs whose index is kept, parsed once while indexing
//   (json-batch-scores.ts): a compare answers from them without reading the file again.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { DatasetItemInput } from '../schemas.ts';
import { GroupCommit, setAside, writeFileDurably } from './json-files.ts';
import { readTableFile } from './json-damage.ts';
import { log } from '../log.ts';
import { createdWithin, matchesGiven, pageNewestFirst } from './json-data.ts';
import {
  newestFirst,
  StoreConflictError,
  type BatchExecutionRecord,
  type BatchFilter,
  type BatchPatch,
  type BatchRowQuery,
  type BatchRowRecord,
  type BatchRowScores,
  rowScores,
  type Page,
  type PageQuery,
} from './types.ts';

import { byteLength, CACHED_INDEXES, GroupQueues, linesOf, MAX_GAP, MAX_READ, parseRow, parseScores, positionOf, RowAppenders, RowIndex, rowLine } from './json-batch-rows.ts';
import { lineOf, readItems, scoresLine, type ScoresLine } from './json-batch-rows.ts';
import { KeptScores } from './json-batch-scores.ts';
import { BatchTally, type BatchCounts } from './batch-tally.ts';

// The row format is json-batch-rows.ts's; tests write lines through this module.
export { rowLine };

const isEnded = (status: BatchExecutionRecord['status']) => status !== 'queued' && status !== 'running';

/** How soon batches.json follows the counters of rows recorded after their run ended. */
const COUNTERS_EVERY_MS = 1000;

export class BatchFiles {
  private batches: Record<string, BatchExecutionRecord> = Object.create(null);
  private readonly rows = new Map<string, RowIndex>();
  private readonly kept = new KeptScores();
  /** Each live run's counts and summary, added to with its counters as rows are recorded: a status read reads no row (batch/summary.ts). */
  private readonly tallies = new Map<string, BatchTally>();
  private readonly metaCommit = new GroupCommit(() => writeFileDurably(this.metaFile, JSON.stringify({ format: 1, batches: this.batches })));
  private readonly queues = new Map<string, Promise<unknown>>();
  /** Rows files open for appends while rows come. */
  private readonly appenders = new RowAppenders();
  /** The rows recorded while a run's write is under way or within BATCH_HOLD_MS of the first, written together next (one fdatasync). */
  private readonly rowGroups = new GroupQueues<BatchRowRecord, boolean>((id, rows) => this.serial(id, () => this.writeGroup(id, rows)));

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
    // h-harden: missing beside row files, or garbled: the start stops (json-damage.ts).
    this.batches = await readTableFile<BatchExecutionRecord>(
      this.dir,
      'batches.json',
      'batches',
      // Row files: a run's rows come after the run is in batches.json. An inline run's items file is
      // written just before it, so a crash in between leaves one without a lost batches.json.
      (f) => f.endsWith('.jsonl') && !f.endsWith('.items.jsonl'),
    );
    // Unfinished runs: recount from their rows, which may be ahead of batches.json after a crash.
    for (const b of Object.values(this.batches)) {
      const unfinished = b.status === 'queued' || b.status === 'running';
      const index = await this.index(b.id);
      // h-harden: a finished run whose row file lost lines (set aside as damaged) is recounted from
      // the rows there are and says so, rather than read "completed 1500/1500" with rows missing.
      // One whose counters are behind its rows (a row in flight at its end recorded just before a
      // crash, its counters not yet in batches.json) is recounted too.
      const lost = unfinished ? 0 : b.done + b.failed - index.at.size;
      if (!unfinished && lost === 0) continue;
      if (lost < 0) this.metaChanged = true;
      if (lost > 0) {
        b.error = `${lost} row(s) of this run were lost to damage on disk (see ${this.rowFile(b.id)}.rejected); counts are of the rows kept`;
        this.metaChanged = true;
      }
      b.done = 0;
      b.failed = 0;
      b.cost_usd = 0;
      const tally = unfinished ? new BatchTally() : undefined;
      // A slice of rows at a time: a run of 100,000 rows is never read whole into memory.
      const positions = index.positions();
      for (let i = 0; i < positions.length; i += 1000) for (const row of await this.readRows(b.id, index, positions.slice(i, i + 1000))) this.count(b, row, tally);
      if (tally) this.tallies.set(b.id, tally);
    }
    if (this.metaChanged) await this.metaCommit.commit();
  }

  /** Set when load corrected a run: batches.json is written once loading is done. */
  private metaChanged = false;
  private countersTimer: NodeJS.Timeout | null = null;

  /** Writes batches.json with the counters of the rows recorded, within COUNTERS_EVERY_MS. */
  private countersLater(): void {
    this.countersTimer ??= setTimeout(() => {
      this.countersTimer = null;
      void this.metaCommit.commit().catch(() => {});
    }, COUNTERS_EVERY_MS).unref();
  }

  async flush(): Promise<void> {
    await Promise.all([...this.queues.values()]);
    if (this.countersTimer) clearTimeout(this.countersTimer);
    this.countersTimer = null;
    await this.appenders.closeAll();
    await this.metaCommit.commit();
  }

  private count(b: BatchExecutionRecord, row: BatchRowRecord, tally = this.tallies.get(b.id)) {
    tally?.add(row); // the same rows as the counters, at the same moment
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
      let last: { start: number; whole: boolean; text: Buffer } | undefined;
      // h-harden: a garbled line is skipped, left in place, copied to <file>.rejected and logged.
      const rejected: Array<{ line: number; text: string; reason: string }> = [];
      let lineNo = 0;
      // An ended run's scores are kept from this reading; a running run's change too often to keep.
      const status = this.batches[id]?.status;
      let keep: ((scores: ScoresLine) => void) | undefined;
      if (status && status !== 'running' && status !== 'queued') {
        this.kept.start(id);
        keep = (scores) => this.kept.add(id, scores);
      }
      for await (const { line, start, ended } of linesOf(file)) {
        lineNo++;
        const position = positionOf(line, keep);
        if (position !== null && !index.at.has(position)) index.place(position, start, line.length);
        if (position === null && ended) rejected.push({ line: lineNo, text: line.toString('utf8'), reason: 'not a batch row, skipped and left in place' });
        last = { start, whole: ended, text: line };
      }
      if (rejected.length) await setAside(file, rejected, (l) => log.warn(l));
      const { size } = await fsp.stat(file);
      index.size = size;
      if (last && !last.whole) {
        // No newline at the end: a crash mid-append. A torn line was never acknowledged.
        let whole = true;
        try {
          parseRow(last.text);
        } catch {
          whole = false;
        }
        if (whole) await fsp.appendFile(file, '\n');
        else {
          await fsp.truncate(file, last.start);
          const torn = positionOf(last.text) ?? -1;
          if (index.at.get(torn)?.[0] === last.start) {
            index.at.delete(torn);
            this.kept.delete(id, torn);
          }
        }
        index.size = whole ? size + 1 : last.start;
      }
    }
    this.rows.set(id, index);
    for (const [other] of this.rows) {
      if (this.rows.size <= CACHED_INDEXES) break;
      const status = this.batches[other]?.status;
      if (other === id || status === 'running' || status === 'queued') continue;
      this.rows.delete(other);
      this.kept.drop(other);
    }
    return index;
  }

  private readRows(id: string, index: RowIndex, positions: number[]): Promise<BatchRowRecord[]> {
    return this.readLines(id, index, positions, parseRow);
  }

  /**
   * A buffer the last page read left behind, reused by the next: a page of rows is a megabyte or
   * more, and a new buffer of that size for every page costs more (fresh memory, collected later)
   * than copying the bytes into it. A read that finds it taken (reads of two runs at once) makes its own.
   */
  private spare?: Buffer;

  /** The lines of these positions, each given to `parse` (which keeps no view of the bytes), in the order asked; one read per stretch of the file. */
  private async readLines<T>(id: string, index: RowIndex, positions: number[], parse: (line: Buffer) => T): Promise<T[]> {
    if (!positions.length) return [];
    let buffer = this.spare ?? Buffer.allocUnsafe(0);
    this.spare = undefined;
    const places = positions.map((p, i) => ({ i, at: index.at.get(p)! }));
    // Rows are mostly written in position order: sort only when the file order differs.
    if (places.some((place, k) => k > 0 && place.at[0] < places[k - 1].at[0])) places.sort((x, y) => x.at[0] - y.at[0]);
    const out = new Array<T>(positions.length);
    const handle = await fsp.open(this.rowFile(id), 'r');
    try {
      for (let k = 0; k < places.length; ) {
        // A stretch: following lines while the gaps between them stay small and the read bounded.
        const from = places[k].at[0];
        let j = k + 1;
        let to = from + places[k].at[1];
        while (j < places.length && places[j].at[0] - to <= MAX_GAP && places[j].at[0] + places[j].at[1] - from <= MAX_READ) to = places[j].at[0] + places[j++].at[1];
        if (buffer.length < to - from) buffer = Buffer.allocUnsafe(Math.max(to - from, Math.min(MAX_READ, buffer.length * 2)));
        const bytes = buffer.subarray(0, to - from);
        const { bytesRead } = await handle.read(bytes, 0, bytes.length, from);
        if (bytesRead !== bytes.length) throw new Error(`${this.rowFile(id)} is shorter than its index: the file was changed under the server`);
        for (; k < j; k++) out[places[k].i] = parse(bytes.subarray(places[k].at[0] - from, places[k].at[0] - from + places[k].at[1]));
      }
      return out;
    } finally {
      if (buffer.length <= MAX_READ) this.spare = buffer;
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
    if (!isEnded(batch.status)) this.tallies.set(batch.id, new BatchTally());
    await this.metaCommit.commit();
  }

  get(id: string): BatchExecutionRecord | null {
    const b = this.batches[id];
    return b ? structuredClone(b) : null;
  }

  /** The status alone, without the copy get() makes: asked before every row and model call of a run. */
  status(id: string): BatchExecutionRecord['status'] | null {
    return this.batches[id]?.status ?? null;
  }

  /** A live run's done, failed and summary as of its rows recorded so far; null when not tallied. */
  counts(id: string): BatchCounts | null {
    return this.tallies.get(id)?.counts() ?? null;
  }

  list(filter: BatchFilter, page: PageQuery): Page<BatchExecutionRecord> {
    return pageNewestFirst(this.batches, (b) => b.org_id === filter.org_id && matchesGiven(filter, b, ['judge_id', 'dataset_id', 'status']) && createdWithin(filter, b), page);
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
    if (isEnded(b.status)) this.tallies.delete(id);
    await this.metaCommit.commit();
    return structuredClone(b);
  }

  /** Answers true once the row's line is fsynced, false when its position is recorded already. */
  record(batchId: string, row: BatchRowRecord): Promise<boolean> {
    return this.batches[batchId] ? this.rowGroups.add(batchId, row) : Promise.resolve(false);
  }

  /** Appends the rows of a group not recorded yet in one write and one fdatasync; answers, per row, whether it was recorded. */
  private async writeGroup(batchId: string, rows: BatchRowRecord[]): Promise<boolean[]> {
    const b = this.batches[batchId];
    if (!b) return rows.map(() => false);
    const index = await this.index(batchId);
    // Each new row's scores are cut once: for its line, and for the kept scores of an ended run.
    const fresh: Array<{ row: BatchRowRecord; scores: ScoresLine; line: string } | null> = [];
    const positions = new Set<number>();
    for (const row of rows) {
      if (index.at.has(row.position) || positions.has(row.position)) fresh.push(null);
      else {
        positions.add(row.position);
        const scores = scoresLine(rowScores(row));
        fresh.push({ row, scores, line: lineOf(scores, row) });
      }
    }
    if (!positions.size) return rows.map(() => false);
    const start = index.size;
    await this.appenders.append(this.rowFile(batchId), start, fresh.map((f) => (f === null ? '' : `${f.line}\n`)).join(''));
    let at = start;
    for (const f of fresh) {
      if (f === null) continue;
      const length = byteLength(f.line);
      index.place(f.row.position, at, length);
      this.kept.add(batchId, f.scores); // a row in flight at a kept run's end
      at += length + 1;
      this.count(b, f.row);
    }
    index.size = at;
    // The rows file is the truth the counters are recounted from (load), and every change of a run's
    // status commits batches.json with the counters so far: a running run's rows do not write it
    // (load recounts an unfinished run); a row recorded after its run ended follows within a second.
    if (isEnded(b.status)) this.countersLater();
    return fresh.map((f) => f !== null);
  }

  listRows(batchId: string, query: BatchRowQuery): Promise<{ items: BatchRowRecord[]; last?: number }> {
    return this.page(batchId, query, parseRow);
  }

  listRowScores(batchId: string, query: BatchRowQuery): Promise<{ items: BatchRowScores[]; last?: number }> {
    return this.page(batchId, query, parseScores, (positions) => this.kept.page(batchId, positions));
  }

  /** A page of rows by position, from `memory` when it has them, else read from the file and parsed. */
  private async page<T>(batchId: string, query: BatchRowQuery, parse: (line: Buffer) => T, memory?: (at: number[]) => T[] | undefined): Promise<{ items: T[]; last?: number }> {
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
    const items = memory?.(positions) ?? (await this.readLines(batchId, index, positions, parse));
    return { items, last: lo + query.limit < all.length ? positions[positions.length - 1] : undefined };
  }

  async items(batchId: string, from: number, count: number): Promise<DatasetItemInput[]> {
    const file = this.itemFile(batchId);
    return this.batches[batchId] && fs.existsSync(file) ? readItems(file, from, count) : [];
  }

  async deleteOrg(orgId: string): Promise<void> {
    for (const b of Object.values(this.batches)) {
      if (b.org_id !== orgId) continue;
      await this.serial(b.id, async () => {
        delete this.batches[b.id];
        this.rows.delete(b.id);
        this.kept.drop(b.id);
        this.tallies.delete(b.id);
        await this.appenders.close(this.rowFile(b.id));
        await fsp.rm(this.rowFile(b.id), { force: true });
        await fsp.rm(this.itemFile(b.id), { force: true });
      });
    }
    await this.metaCommit.commit();
  }
}
