// The JSON store's files on disk: db.json (written whole, durably) and logs.jsonl (append-only).
// Start-up reads them defensively: a file that is not what Tribunal wrote stops the start with one
// line that says what to do, and nothing is ever truncated or overwritten that was not just written.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { log } from '../log.ts';

/** A data file that cannot be used as it is; the message is one line an operator can act on. */
export class DataFileError extends Error {
  constructor(message: string) {
    super(message);
    // main.ts prints the message of a plain Error without a stack.
    this.name = 'Error';
  }
}

const TABLES = ['organizations', 'api_keys', 'projects', 'evaluators', 'evaluator_versions', 'judges', 'judge_versions'] as const;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Checks db.json's shape before anything trusts it; answers why not, or null when it is usable. */
export function dbShapeProblem(data: unknown): string | null {
  if (!isRecord(data)) return `it holds ${data === null ? 'null' : Array.isArray(data) ? 'an array' : typeof data}, not an object`;
  if (data.format !== 1) return `its "format" is ${JSON.stringify(data.format)}, not 1`;
  for (const table of TABLES) {
    const rows = data[table];
    if (!isRecord(rows)) return `its "${table}" is ${rows === undefined ? 'missing' : JSON.stringify(rows)?.slice(0, 40)}, not an object`;
    for (const [id, row] of Object.entries(rows)) {
      const versioned = table.endsWith('_versions');
      if (versioned ? !Array.isArray(row) || !row.every(isRecord) : !isRecord(row)) return `its "${table}"."${id}" is not ${versioned ? 'a list of records' : 'a record'}`;
    }
  }
  return null;
}

/** lowdb adapter that survives power loss: write a temp file, fsync it, rename, fsync the directory. */
export class DurableJsonFile<T> {
  constructor(private readonly file: string) {}

  async read(): Promise<T | null> {
    let text: string;
    try {
      text = await fsp.readFile(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw new DataFileError(`Cannot read ${this.file}: ${(err as Error).message}`);
    }
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (err) {
      throw new DataFileError(`${this.file} is not valid JSON (${(err as Error).message}); restore it from a backup. Tribunal did not start and changed nothing.`);
    }
    const problem = dbShapeProblem(data);
    if (problem) throw new DataFileError(`${this.file} is not a Tribunal database: ${problem}; restore it from a backup. Tribunal did not start and changed nothing.`);
    return data as T;
  }

  async write(data: T): Promise<void> {
    await writeFileDurably(this.file, JSON.stringify(data));
  }
}

/** Replaces `file` whole so that a crash leaves the old or the new content: temp file, fsync, rename, fsync the directory. */
export async function writeFileDurably(file: string, content: string): Promise<void> {
  const tmp = `${file}.${process.pid}.tmp`;
  const handle = await fsp.open(tmp, 'w');
  try {
    await handle.writeFile(content);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await fsp.rename(tmp, file);
  await syncDir(path.dirname(file));
}

/**
 * Appends `text` to a file of lines and syncs it. `start` is the file's size before: on a failed
 * write the file is cut back to it, so nothing half-written stays behind to be misread as a line.
 */
export async function appendDurably(file: string, start: number, text: string): Promise<void> {
  const handle = await fsp.open(file, 'a');
  try {
    await appendToHandle(handle, start, text);
  } finally {
    await handle.close();
  }
}

/** appendDurably through a handle the caller keeps open (opened with 'a'): write, fdatasync, cut back on failure. */
export async function appendToHandle(handle: fsp.FileHandle, start: number, text: string): Promise<void> {
  try {
    await handle.write(text);
    await handle.datasync();
  } catch (err) {
    await handle.truncate(start).catch(() => {});
    throw err;
  }
}

/**
 * Writes all of `bytes` at the end of the file (opened for appending) and fdatasyncs it. The write(2)
 * is made at once, on the loop (a commit's few kilobytes only reach the page cache, as the journal
 * writes its lines): an asynchronous write cost a thread-pool round trip per commit, about 50 µs of
 * CPU on a slow machine (issue 33). The fdatasync, which waits on the disk, runs on the thread pool.
 */
export function appendAndSync(fd: number, bytes: Buffer): Promise<void> {
  try {
    for (let at = 0; at < bytes.length; ) at += fs.writeSync(fd, bytes, at, bytes.length - at);
  } catch (err) {
    return Promise.reject(err);
  }
  return new Promise((resolve, reject) => fs.fdatasync(fd, (err) => (err ? reject(err) : resolve())));
}

export async function syncDir(dir: string): Promise<void> {
  const handle = await fsp.open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Temp files of a db.json write that a crash interrupted. Only called while holding the data
 * directory's lock, so no live writer can own one.
 */
export function removeStaleTempFiles(dataDir: string): string[] {
  const stale = fs.readdirSync(dataDir).filter((name) => /^(db\.json|logs\.jsonl)\.\d+\.tmp$/.test(name));
  for (const name of stale) fs.rmSync(path.join(dataDir, name), { force: true });
  // h-harden: the same for datasets/datasets.json and batches/batches.json (written the same way).
  for (const sub of ['datasets', 'batches']) {
    let names: string[] = [];
    try {
      names = fs.readdirSync(path.join(dataDir, sub));
    } catch {
      continue;
    }
    for (const name of names.filter((n) => new RegExp(`^${sub}\\.json\\.\\d+\\.tmp$`).test(n))) {
      fs.rmSync(path.join(dataDir, sub, name), { force: true });
      stale.push(path.join(sub, name));
    }
  }
  return stale;
}

/** A db.json that is missing while logs exist means the database was lost, not that it is new. */
export function assertDbBesideLogs(dataDir: string): void {
  if (fs.existsSync(path.join(dataDir, 'db.json'))) return;
  let size = 0;
  try {
    size = fs.statSync(path.join(dataDir, 'logs.jsonl')).size;
  } catch {
    return;
  }
  if (size > 0) {
    throw new DataFileError(
      `${path.join(dataDir, 'db.json')} is missing but logs.jsonl beside it holds ${size} bytes of execution logs; restore db.json from a backup (or move logs.jsonl aside to start empty). Tribunal did not start and changed nothing.`,
    );
  }
}

/** A log line must at least carry what the store indexes and filters on. */
export function isLogRecord(v: unknown): boolean {
  return isRecord(v) && typeof v.id === 'string' && typeof v.org_id === 'string' && typeof v.created_at === 'string' && Array.isArray(v.tags) && Array.isArray(v.evaluator_results);
}

export interface LoadedLogFile {
  /** The handle to append to (and read committed lines from), positioned after the last kept byte. */
  handle: fsp.FileHandle;
  /** Bytes of the file after the load: every line in it is whole and terminated. */
  size: number;
}

/** Read size of the start-up scan: the file is never held in memory whole. */
const SCAN_CHUNK = 4 * 2 ** 20;

/**
 * Reads logs.jsonl in chunks, handing each good record to `onRecord` with the byte offset and length
 * of its line (without the newline). A bad line in the middle (garbage, `null`, a record without id)
 * is skipped with a warning naming file and line, left where it is, and copied to
 * logs.jsonl.rejected for repair: the lines after it are loaded as usual. Only an unterminated last
 * line (a crash mid-append) is cut off the file, after being copied aside too; if it parses it is
 * kept and terminated instead.
 */
export async function loadLogFile(
  file: string,
  onRecord: (record: unknown, offset: number, length: number) => void,
  warn: (line: string) => void = (line) => log.warn(line),
): Promise<LoadedLogFile> {
  const handle = await fsp.open(file, 'a+');
  try {
    const size = (await handle.stat()).size;
    const rejected: Array<{ line: number; text: string; reason: string }> = [];
    let lineNo = 0;
    /** Answers whether the line held a good record. */
    const take = (data: Buffer, start: number, end: number, fileOffset: number, terminated: boolean): boolean => {
      lineNo++;
      const line = data.toString('utf8', start, end);
      if (!line.trim()) return true;
      let parsed: unknown;
      let ok = false;
      try {
        parsed = JSON.parse(line);
        ok = isLogRecord(parsed);
      } catch {
        /* not JSON */
      }
      if (ok) onRecord(parsed, fileOffset, end - start);
      else if (terminated) rejected.push({ line: lineNo, text: line, reason: 'not an execution log record, skipped and left in place' });
      else rejected.push({ line: lineNo, text: line, reason: 'torn last line (a crash mid-append), cut off the file' });
      return ok;
    };
    const chunk = Buffer.allocUnsafe(SCAN_CHUNK);
    let carry = Buffer.alloc(0);
    let carryAt = 0;
    for (let pos = 0; pos < size; ) {
      const { bytesRead } = await handle.read(chunk, 0, Math.min(SCAN_CHUNK, size - pos), pos);
      if (!bytesRead) break;
      const data = carry.length ? Buffer.concat([carry, chunk.subarray(0, bytesRead)]) : chunk.subarray(0, bytesRead);
      const dataAt = carry.length ? carryAt : pos;
      pos += bytesRead;
      let start = 0;
      for (let nl = data.indexOf(0x0a); nl >= 0; nl = data.indexOf(0x0a, start)) {
        take(data, start, nl, dataAt + start, true);
        start = nl + 1;
      }
      // Copied: `chunk` is reused by the next read.
      carry = Buffer.from(data.subarray(start));
      carryAt = dataAt + start;
    }
    const tailWhole = carry.length ? take(carry, 0, carry.length, carryAt, false) : true;
    // Set aside before anything is cut, so that a crash in between loses nothing.
    if (rejected.length) await setAside(file, rejected, warn);
    let kept = size;
    if (carry.length) {
      if (tailWhole) {
        // The record arrived whole, only its newline did not: keep it rather than drop it.
        await handle.write('\n');
        kept = size + 1;
      } else {
        // Counted on the raw bytes: a torn multi-byte character decodes to a different length.
        await handle.truncate(carryAt);
        kept = carryAt;
      }
      await handle.datasync();
    }
    return { handle, size: kept };
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/** Copies rejected lines to `<file>.rejected` (once each: a restart does not copy them again). */
export async function setAside(file: string, rejected: Array<{ line: number; text: string; reason: string }>, warn: (line: string) => void): Promise<void> {
  const asideFile = `${file}.rejected`;
  let already = '';
  try {
    already = await fsp.readFile(asideFile, 'utf8');
  } catch {
    /* none yet */
  }
  const known = new Set(
    already
      .split('\n')
      .filter(Boolean)
      .map((l) => {
        try {
          const entry = JSON.parse(l) as { line: number; text: string };
          return `${entry.line}\u0000${entry.text}`;
        } catch {
          return '';
        }
      }),
  );
  const fresh = rejected.filter((r) => !known.has(`${r.line}\u0000${r.text}`));
  if (fresh.length) {
    const at = new Date().toISOString();
    await fsp.appendFile(asideFile, fresh.map((r) => `${JSON.stringify({ file, line: r.line, reason: r.reason, found_at: at, text: r.text })}\n`).join(''));
  }
  for (const r of rejected) warn(`${file}:${r.line}: ${r.reason}; a copy is in ${asideFile}.`);
}

type Waiter = { resolve: () => void; reject: (e: unknown) => void };

/** Runs `write` once for any number of callers that asked while a previous write was in flight. */
export class GroupCommit {
  private waiting: Waiter[] = [];
  /** commitWithin's callers: taken by the next write, but never a reason to start one before their timer. */
  private riding: Waiter[] = [];
  private running = false;
  /** The riders' timer, while one is set, and its delay. */
  private later: NodeJS.Timeout | undefined;
  private laterMs = 0;
  constructor(private readonly write: () => Promise<void>) {}

  commit(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      if (!this.running) void this.drain();
    });
  }

  /**
   * commit(), for a caller no one waits on promptly (issue 33: a span rule's execution log and
   * evaluation link): it starts no write of its own but rides the next one, started by a commit() or,
   * failing that, `ms` after the first such caller. Resolves, like commit(), once a write begun after
   * it has ended: it shares the fdatasync with more callers and only waits longer.
   */
  commitWithin(ms: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.riding.push({ resolve, reject });
      this.armRiders(ms);
    });
  }

  /** A write for the riders `ms` from now, unless a timer is set already (or a write takes them first). */
  private armRiders(ms: number): void {
    this.laterMs = ms;
    this.later ??= setTimeout(() => {
      this.later = undefined;
      // A write under way sets the timer again when it ends, if riders are left.
      if (!this.running && this.riding.length) void this.drain();
    }, ms);
  }

  private async drain(): Promise<void> {
    this.running = true;
    // Only callers of commit() keep writes going back to back: riders alone would make it a sync per
    // write again. Those that came during the last write wait for their timer, set anew below.
    do {
      const batch = this.waiting.splice(0).concat(this.riding.splice(0));
      try {
        await this.write();
        for (const w of batch) w.resolve();
      } catch (err) {
        for (const w of batch) w.reject(err);
      }
    } while (this.waiting.length);
    this.running = false;
    if (this.riding.length) this.armRiders(this.laterMs);
  }
}
