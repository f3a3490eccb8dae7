// Writing the JSON store's review changes: each change is one line appended to review.journal.jsonl
// and synced before its caller is answered (so what is acknowledged survives a crash), instead of
// review.json rewritten whole per lease and per submit (21.6 MB at 100,000 items, issue 31). Callers
// that arrive while a write is in flight share the next one (group commit). When the journal has
// grown past the snapshot's size (or 4 MiB), and at close, the snapshot is written whole (temp file,
// fsync, rename) with the number of the last change it holds, and the journal is emptied: one
// writer does both in turn, so no line is appended while the journal is being emptied.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { log } from '../log.ts';
import { writeFileDurably } from '../store/json-files.ts';
import { JOURNAL, type JournalScan, SNAPSHOT } from './json-review-state.ts';

const MIN_COMPACT_BYTES = 4 * 2 ** 20;

interface Waiter {
  resolve: () => void;
  reject: (e: unknown) => void;
}

export class ReviewJournal {
  private readonly journalFile: string;
  private readonly snapshotFile: string;
  private handle?: fsp.FileHandle;
  /** Bytes in the journal file now; compared with the snapshot's size to decide a compaction. */
  private bytes: number;
  private snapshotBytes: number;
  private lines: string[] = [];
  private waiters: Waiter[] = [];
  private wantSnapshot = false;
  private running = false;
  private closed = false;

  /**
   * `snapshot` gives the snapshot's text of the state at the moment it is called (it holds every
   * change applied so far, so the lines still waiting are dropped when it is written).
   * `compactBytes` overrides the journal size that triggers a compaction (tests).
   */
  constructor(
    dataDir: string,
    scan: JournalScan,
    private readonly snapshot: () => string,
    private readonly compactBytes?: number,
  ) {
    this.journalFile = path.join(dataDir, JOURNAL);
    this.snapshotFile = path.join(dataDir, SNAPSHOT);
    this.snapshotBytes = fs.existsSync(this.snapshotFile) ? fs.statSync(this.snapshotFile).size : 0;
    this.bytes = scan.whole;
    if (scan.rejected.length) this.setAside(scan.rejected);
    // Before anything is appended: a torn last line is cut off, a whole one gets its newline.
    if (scan.torn) {
      const fd = fs.openSync(this.journalFile, 'r+');
      try {
        fs.ftruncateSync(fd, scan.whole);
        fs.fdatasyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
    } else if (scan.unterminated) this.lines.push('\n');
  }

  /**
   * Copies the lines replay left out to review.journal.jsonl.rejected (once each), before a torn one
   * is cut off; synchronous because the store is opened synchronously, before anything is appended.
   */
  private setAside(rejected: JournalScan['rejected']): void {
    const aside = `${this.journalFile}.rejected`;
    const known = fs.existsSync(aside) ? fs.readFileSync(aside, 'utf8') : '';
    const at = new Date().toISOString();
    for (const r of rejected) {
      const entry = JSON.stringify({ file: this.journalFile, line: r.line, reason: r.reason, text: r.text });
      // The entry without its time is what makes it the same one again at the next start.
      if (!known.includes(entry.slice(0, -1))) fs.appendFileSync(aside, `${entry.slice(0, -1)},"found_at":"${at}"}\n`);
      log.warn(`${this.journalFile}:${r.line}: ${r.reason}; a copy is in ${aside}.`);
    }
  }

  /** Appends one change line; resolves once it is on disk. */
  append(line: string): Promise<void> {
    return this.enqueue(() => this.lines.push(`${line}\n`));
  }

  /** Writes the snapshot whole and empties the journal; resolves once both are on disk. */
  compact(): Promise<void> {
    return this.enqueue(() => (this.wantSnapshot = true));
  }

  /** Compacts, then lets the file go: nothing is written after (the directory may belong to another process). */
  async close(): Promise<void> {
    if (this.closed) return;
    const last = this.compact();
    this.closed = true;
    await last.finally(() => this.handle?.close());
  }

  private enqueue(add: () => void): Promise<void> {
    // After close the directory may belong to another process: never write to it again.
    if (this.closed) return Promise.reject(new Error('the JSON store is closed'));
    return new Promise((resolve, reject) => {
      add();
      this.waiters.push({ resolve, reject });
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    while (this.waiters.length) {
      const batch = this.waiters.splice(0);
      try {
        if (this.wantSnapshot || this.bytes >= (this.compactBytes ?? Math.max(MIN_COMPACT_BYTES, this.snapshotBytes))) await this.writeSnapshot();
        else await this.appendLines();
        for (const w of batch) w.resolve();
      } catch (err) {
        for (const w of batch) w.reject(err);
      }
    }
    this.running = false;
  }

  private async appendLines(): Promise<void> {
    const text = this.lines.join('');
    this.lines = [];
    this.handle ??= await fsp.open(this.journalFile, 'a');
    await this.handle.write(text);
    await this.handle.datasync();
    this.bytes += Buffer.byteLength(text);
  }

  private async writeSnapshot(): Promise<void> {
    // Taken in the same tick: the snapshot holds every change whose line is dropped here.
    this.lines = [];
    this.wantSnapshot = false;
    const text = this.snapshot();
    await writeFileDurably(this.snapshotFile, text);
    this.snapshotBytes = Buffer.byteLength(text);
    // A crash before the journal is emptied only replays lines the snapshot already holds (skipped by number).
    this.handle ??= await fsp.open(this.journalFile, 'a');
    await this.handle.truncate(0);
    await this.handle.datasync();
    this.bytes = 0;
  }
}
