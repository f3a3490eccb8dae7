// Writing the JSON store's review changes: each change is one line appended to review.journal.jsonl
// instead of review.json rewritten whole per lease and per submit (21.6 MB at 100,000 items, issue 31).
//
// A line is written (write(2), synchronously) in the same tick as the change is applied in memory,
// so the file holds the changes in their order and a process crash loses nothing written. A durable
// change (labels, skips, queue edits: everything but a lease) is answered after an fdatasync that
// began after its line was written; callers that arrive while one is in flight share the next (group
// commit). A lease is answered once written, and synced with the next durable change or within
// 200 ms: like PostgreSQL's leases (synchronous_commit off), an OS crash may forget a lease of the
// last moment, which only hands that item out again.
//
// Compaction (when the journal has grown past the snapshot's size, at least 4 MiB, and at close): the
// journal is renamed to review.journal.jsonl.old and a new one started (synchronously, between two
// changes), then the snapshot (which holds every change so far and its number) is written whole
// (temp file, fsync, rename) and the old journal removed. A crash at any step replays the old journal
// then the new one, skipping the lines the snapshot already holds (by number).
import fs from 'node:fs';
import path from 'node:path';
import { log } from '../log.ts';
import { GroupCommit, syncDir, writeFileDurably } from '../store/json-files.ts';
import { JOURNAL, type JournalScan, OLD_JOURNAL, SNAPSHOT } from './json-review-state.ts';

const MIN_COMPACT_BYTES = 4 * 2 ** 20;
/** How long a written lease may wait for its sync when no durable change comes. */
const LEASE_SYNC_MS = 200;

export class ReviewJournal {
  private readonly dir: string;
  private readonly journalFile: string;
  private fd: number;
  /** Bytes in the journal file now; compared with the snapshot's size to decide a compaction. */
  private bytes: number;
  private snapshotBytes: number;
  /** The directory changed (a journal renamed or made) and is not synced yet. */
  private dirDirty = false;
  private readonly sync: GroupCommit;
  private compacting?: Promise<void>;
  private leaseTimer?: NodeJS.Timeout;
  private closed = false;

  /**
   * `snapshot` gives the snapshot's text of the state at the moment it is called (every change
   * applied so far). `compactBytes` overrides the journal size that triggers a compaction (tests).
   */
  constructor(
    dataDir: string,
    scan: JournalScan,
    private readonly snapshot: () => string,
    private readonly compactBytes?: number,
  ) {
    this.dir = dataDir;
    this.journalFile = path.join(dataDir, JOURNAL);
    const snapshotFile = path.join(dataDir, SNAPSHOT);
    this.snapshotBytes = fs.existsSync(snapshotFile) ? fs.statSync(snapshotFile).size : 0;
    if (scan.rejected.length) this.setAside(scan.rejected);
    this.dirDirty = !fs.existsSync(this.journalFile);
    this.fd = fs.openSync(this.journalFile, 'a');
    // Before anything is appended: a torn last line is cut off, a whole one gets its newline.
    if (scan.torn) {
      fs.ftruncateSync(this.fd, scan.whole);
      fs.fdatasyncSync(this.fd);
    } else if (scan.unterminated) fs.writeSync(this.fd, '\n');
    this.bytes = fs.fstatSync(this.fd).size;
    this.sync = new GroupCommit(async () => {
      const dirty = this.dirDirty;
      this.dirDirty = false;
      await new Promise<void>((resolve, reject) => fs.fdatasync(this.fd, (err) => (err ? reject(err) : resolve())));
      if (dirty) await syncDir(this.dir);
    });
    // A journal left by a compaction that a crash interrupted: its lines are replayed; compact again.
    if (fs.existsSync(path.join(dataDir, OLD_JOURNAL))) void this.compact().catch((err) => log.warn(`review journal: ${err.message}`));
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

  /** Writes one change line now; resolves once it is on disk (`durable`) or at once (a lease). */
  append(line: string, durable: boolean): Promise<void> {
    // After close the directory may belong to another process: never write to it again.
    if (this.closed) return Promise.reject(new Error('the JSON store is closed'));
    const text = `${line}\n`;
    fs.writeSync(this.fd, text);
    this.bytes += Buffer.byteLength(text);
    if (!this.compacting && this.bytes >= (this.compactBytes ?? Math.max(MIN_COMPACT_BYTES, this.snapshotBytes))) {
      void this.compact().catch((err) => log.warn(`review journal: compaction failed (${err.message}); the journal keeps growing and is replayed at start`));
    }
    if (durable) return this.sync.commit();
    this.leaseTimer ??= setTimeout(() => {
      this.leaseTimer = undefined;
      if (!this.closed) this.sync.commit().catch((err) => log.warn(`review journal: ${err.message}`));
    }, LEASE_SYNC_MS).unref();
    return Promise.resolve();
  }

  /** Starts a new journal, writes the snapshot whole and removes the old journal; resolves once all is on disk. */
  compact(): Promise<void> {
    this.compacting ??= this.rotateAndSnapshot().finally(() => (this.compacting = undefined));
    return this.compacting;
  }

  private async rotateAndSnapshot(): Promise<void> {
    const old = path.join(this.dir, OLD_JOURNAL);
    // Synchronously, between two changes: the snapshot text holds every line of the renamed journal.
    // An old journal still there (a compaction that failed) holds lines the snapshot holds too.
    if (!fs.existsSync(old)) fs.renameSync(this.journalFile, old);
    const oldFd = this.fd;
    this.fd = fs.openSync(this.journalFile, 'a');
    this.bytes = 0;
    this.dirDirty = true;
    const text = this.snapshot();
    // The old journal's lines that were only written (leases) are synced with it before it goes.
    await new Promise<void>((resolve, reject) => fs.fdatasync(oldFd, (err) => (err ? reject(err) : resolve())));
    fs.closeSync(oldFd);
    await writeFileDurably(path.join(this.dir, SNAPSHOT), text);
    this.snapshotBytes = Buffer.byteLength(text);
    fs.rmSync(old, { force: true });
    await syncDir(this.dir);
  }

  /** Compacts, then lets the file go: nothing is written after (the directory may belong to another process). */
  async close(): Promise<void> {
    if (this.closed) return;
    clearTimeout(this.leaseTimer);
    await this.compacting?.catch(() => {});
    await this.compact();
    await this.sync.commit();
    this.closed = true;
    fs.closeSync(this.fd);
  }
}
