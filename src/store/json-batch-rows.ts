// The line format of a JSON-store batch run's rows file (batches/<id>.jsonl): the scores prefix, a
// tab, the whole row; the in-memory index of where each position's line is (json-batches.ts); and
// the write side's group commit: rows that finish while a write is under way go in the next one;
// and reading an inline run's items file.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import readline from 'node:readline';
import type { DatasetItemInput } from '../schemas.ts';
import { appendAndSync } from './json-files.ts';
import type { BatchRowRecord, BatchRowScores } from './types.ts';
import { rowScores } from './types.ts';

export const byteLength = (text: string) => Buffer.byteLength(text, 'utf8');
/** Row indexes kept in memory at most (those of running batches are never dropped). */
export const CACHED_INDEXES = 16;
/** Reading a page: lines closer than this share one read, and one read covers at most MAX_READ bytes. */
export const MAX_GAP = 64 * 1024;
export const MAX_READ = 8 * 1024 * 1024;
export const TAB = 0x09;

/** The whole row of a line (after the tab; a line without one is the row alone). */
export function parseRow(line: Buffer): BatchRowRecord {
  const tab = line.indexOf(TAB);
  return JSON.parse(line.toString('utf8', tab + 1)) as BatchRowRecord;
}

// A result is [id, name, score], [id, name, score, 1] when not applicable, or [id, name, score, 0|1,
// confidence] when it has a confidence (lines written before confidence was kept have no fifth element).
type ResultTuple = [string, string, number | null] | [string, string, number | null, 1] | [string, string, number | null, 0 | 1, number];
export type ScoresLine = [number, string | null, number | null, string | null, number | null, string | null, ResultTuple[]];

function encodeResult(r: BatchRowScores['evaluator_results'][number]): ResultTuple {
  if (r.confidence !== undefined) return [r.evaluator_id, r.evaluator_name, r.score, r.not_applicable ? 1 : 0, r.confidence];
  return r.not_applicable ? [r.evaluator_id, r.evaluator_name, r.score, 1] : [r.evaluator_id, r.evaluator_name, r.score];
}

function decodeResult(r: ResultTuple): BatchRowScores['evaluator_results'][number] {
  // Fields set in place, not spread from a temporary object per result: every row of a run is decoded.
  const result: BatchRowScores['evaluator_results'][number] = { evaluator_id: r[0], evaluator_name: r[1], score: r[2] };
  if (r[3] === 1) result.not_applicable = true;
  if (r.length === 5) result.confidence = r[4];
  return result;
}

/** A row's line in its run's rows file (without the newline): the scores, a tab, the whole row. */
export const rowLine = (row: BatchRowRecord): string => lineOf(scoresLine(rowScores(row)), row);

/** The same, from the row's scores already cut (the writer keeps them too: cut once, not twice). */
export const lineOf = (scores: ScoresLine, row: BatchRowRecord): string => `${JSON.stringify(scores)}\t${JSON.stringify(row)}`;

/** The scores prefix of a row's line. */
export function encodeScores(row: BatchRowRecord): string {
  return JSON.stringify(scoresLine(rowScores(row)));
}

/** The scores prefix of a row, before JSON. */
export function scoresLine(s: BatchRowScores): ScoresLine {
  return [s.position, s.item_id, s.index, s.execution_log_id, s.score, s.error, s.evaluator_results.map(encodeResult)];
}

export function decodeScores([position, item_id, index, execution_log_id, score, error, results]: ScoresLine): BatchRowScores {
  return {
    position,
    item_id,
    index,
    execution_log_id,
    score,
    error,
    evaluator_results: results.map(decodeResult),
  };
}

/** The scores of a line: the part before the tab, or cut from the whole row on a line without one. */
export function parseScores(line: Buffer): BatchRowScores {
  const tab = line.indexOf(TAB);
  return tab < 0 ? rowScores(JSON.parse(line.toString('utf8')) as BatchRowRecord) : decodeScores(JSON.parse(line.toString('utf8', 0, tab)) as ScoresLine);
}

/**
 * The position of a line, or null when the line is not a whole row (a torn write, or a torn write
 * and the next line run together). A line with a tab must hold exactly one, parsable scores before
 * it, `{` after it, and end with `}` (the whole row after the tab is parsed only when read); a line
 * without a tab (the older format) must parse whole. `keep`, when given, is handed the scores of a
 * whole row (parsed here anyway), as they are in the line's prefix.
 */
export function positionOf(line: Buffer, keep?: (scores: ScoresLine) => void): number | null {
  try {
    const tab = line.indexOf(TAB);
    let position: unknown;
    let scores: unknown;
    if (tab < 0) {
      const row = JSON.parse(line.toString('utf8')) as BatchRowRecord;
      position = row.position;
      if (keep && typeof position === 'number' && Number.isInteger(position)) {
        try {
          scores = scoresLine(rowScores(row));
        } catch {
          return position; // an odd old row: indexed as before, its scores not kept (read from the file)
        }
      }
    } else {
      if (line.indexOf(TAB, tab + 1) >= 0 || line[tab + 1] !== 0x7b || line[line.length - 1] !== 0x7d) return null;
      scores = JSON.parse(line.toString('utf8', 0, tab)) as unknown;
      position = Array.isArray(scores) && scores.length === 7 ? scores[0] : null;
    }
    if (typeof position !== 'number' || !Number.isInteger(position)) return null;
    if (keep) keep(scores as ScoresLine);
    return position;
  } catch {
    return null;
  }
}

/** The lines of a file as bytes with their offsets, read a megabyte at a time; `ended`: a newline follows. */
export async function* linesOf(file: string): AsyncGenerator<{ line: Buffer; start: number; ended: boolean }> {
  let carry: Buffer | undefined; // the unfinished line of the chunks before
  let base = 0; // file offset of chunk[0]
  for await (const chunk of fs.createReadStream(file, { highWaterMark: 1024 * 1024 }) as AsyncIterable<Buffer>) {
    let from = 0;
    let nl = chunk.indexOf(0x0a);
    if (carry && nl >= 0) {
      // Only the line that spans chunks is copied.
      const line = Buffer.concat([carry, chunk.subarray(0, nl)]);
      if (line.length) yield { line, start: base - carry.length, ended: true };
      carry = undefined;
      from = nl + 1;
      nl = chunk.indexOf(0x0a, from);
    }
    for (; nl >= 0; nl = chunk.indexOf(0x0a, from)) {
      if (nl > from) yield { line: chunk.subarray(from, nl), start: base + from, ended: true };
      from = nl + 1;
    }
    if (from < chunk.length) carry = carry ? Buffer.concat([carry, chunk.subarray(from)]) : chunk.subarray(from);
    base += chunk.length;
  }
  if (carry?.length) yield { line: carry, start: base - carry.length, ended: false };
}

/** Items `from`..`from + count - 1` of an inline run's items file (one JSON item a line). */
export async function readItems(file: string, from: number, count: number): Promise<DatasetItemInput[]> {
  const out: DatasetItemInput[] = [];
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

export class RowIndex {
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

/**
 * How long a batch run's write (its row's log, the row) waits for others to share its fdatasync on
 * the JSON store (issue 33; PostgreSQL's group commit holds the same writes, postgres/group-commit.ts).
 * A row's answer comes this much later, which a run with dozens of rows in flight does not feel (a row
 * takes its model's latency, and holds no model slot while it is written); each fdatasync saved is
 * a syscall and a journal commit of this process's CPU. Only while writes come together (BusyHold):
 * writes made one after another, each awaited, are never held.
 */
export const BATCH_HOLD_MS = 50;
/** How long writes are held after two were last seen waiting together. */
const BUSY_FOR_MS = 1000;

/** Whether to hold a write: only within BUSY_FOR_MS of a write that found another still waiting. */
export class BusyHold {
  private until = 0;

  /** The hold for a write given now; `othersWaiting`: another write was given and is not yet on disk. */
  hold(othersWaiting: boolean): number {
    const now = Date.now();
    if (othersWaiting) this.until = now + BUSY_FOR_MS;
    return now < this.until ? BATCH_HOLD_MS : 0;
  }
}

/**
 * Items added per key while that key's write is under way wait, and go together in its next write:
 * one write (and one fdatasync) for a group, not one per item. `write` answers one result per item;
 * when it throws, every item of the group is rejected with its error. While items come together
 * (BusyHold), the first item of a group waits BATCH_HOLD_MS for others before the group is written.
 */
export class GroupQueues<T, R> {
  private readonly waiting = new Map<string, Array<{ item: T; resolve: (r: R) => void; reject: (err: unknown) => void }>>();
  private readonly busy = new BusyHold();

  constructor(private readonly write: (key: string, items: T[]) => Promise<R[]>) {}

  add(key: string, item: T): Promise<R> {
    return new Promise((resolve, reject) => {
      const waiting = this.waiting.get(key);
      const hold = this.busy.hold(waiting !== undefined);
      if (waiting) return void waiting.push({ item, resolve, reject });
      this.waiting.set(key, [{ item, resolve, reject }]);
      if (hold > 0) setTimeout(() => void this.drain(key), hold);
      else void this.drain(key);
    });
  }

  /** The key's writer loop, present in `waiting` while it runs. */
  private async drain(key: string): Promise<void> {
    for (let group = this.waiting.get(key)!.splice(0); group.length; group = this.waiting.get(key)!.splice(0)) {
      try {
        const results = await this.write(
          key,
          group.map((w) => w.item),
        );
        group.forEach((w, i) => w.resolve(results[i]));
      } catch (err) {
        for (const w of group) w.reject(err);
      }
    }
    this.waiting.delete(key);
  }
}

/** How long a rows file stays open without an append. */
const IDLE_MS = 1000;

/** A rows file kept open for appends. */
interface OpenRows {
  handle: fsp.FileHandle;
  /** When the last append started or ended (Date.now()). */
  used: number;
  /** An append is under way: the file is not closed under it. */
  busy: boolean;
  idle?: NodeJS.Timeout;
}

/**
 * Rows files open for appends while rows come (not opened and closed per write), each closed once a
 * second has passed without one (one timer per open file, not one set and cleared per append).
 *
 * An append is write(2) made at once, then fdatasync on the thread pool (json-files.ts appendAndSync):
 * an asynchronous write cost a thread-pool round trip and a FileHandle request per group.
 */
export class RowAppenders {
  private readonly files = new Map<string, OpenRows>();

  /** Appends `text` and fdatasyncs; on a failure the file is cut back to `start` (nothing half-written stays) and its handle let go. */
  async append(file: string, start: number, text: string): Promise<void> {
    let open = this.files.get(file);
    if (!open) {
      open = { handle: await fsp.open(file, 'a'), used: 0, busy: false };
      this.files.set(file, open);
    }
    open.used = Date.now();
    open.busy = true;
    const { fd } = open.handle;
    try {
      await appendAndSync(fd, Buffer.from(text, 'utf8'));
    } catch (err) {
      await open.handle.truncate(start).catch(() => {});
      await this.close(file);
      throw err;
    } finally {
      open.busy = false;
    }
    open.used = Date.now();
    open.idle ??= this.closeWhenIdle(file, open, IDLE_MS);
  }

  /** Closes the file once IDLE_MS have passed since its last append, looking again when it was used meanwhile. */
  private closeWhenIdle(file: string, open: OpenRows, ms: number): NodeJS.Timeout {
    return setTimeout(() => {
      if (this.files.get(file) !== open) return;
      const left = open.busy ? IDLE_MS : open.used + IDLE_MS - Date.now();
      if (left > 0) open.idle = this.closeWhenIdle(file, open, left);
      else void this.close(file);
    }, ms).unref();
  }

  async close(file: string): Promise<void> {
    const open = this.files.get(file);
    if (!open) return;
    this.files.delete(file);
    clearTimeout(open.idle);
    await open.handle.close().catch(() => {});
  }

  closeAll(): Promise<unknown> {
    return Promise.all([...this.files.keys()].map((file) => this.close(file)));
  }
}
