// A JSON store's journal of changes beside its snapshot: each change is one line appended to
// <name>.journal.jsonl instead of the snapshot rewritten whole per change (review queues: review.json
// rewritten per lease and per submit, 21.6 MB at 100,000 items, issue 31; evaluation rules:
// traces/rules.json rewritten per enqueue, claim and finish, issue 33).
//
// Lines are written in the order of their changes. A durable change's line waits in memory for the
// group commit: the changes of one turn of the event loop, and those that arrive while an fdatasync
// is in flight, are written with one write(2) and synced with the next one, and answered after it
// (a crash before loses only changes not yet answered). A change its store calls not durable (a review lease) is written at once, with
// the lines before it, answered then, and synced with the next durable change or within
// 200 ms: like PostgreSQL's leases (synchronous_commit off), an OS crash may forget a lease of the
// last moment, which only hands that item out again. A change its store calls `carried` (the rule
// queue's claims and finishes) is not even written at once: its line waits in memory for the next
// commit (a durable change's, or the 200 ms one) and costs no system call of its own; a crash of the
// process may forget it too, which the store's recovery must make harmless (json-eval-rules.ts). A
// change its store calls `written` (a span rule's enqueue, whose exact copy the spans file's commit
// makes durable: span-carrier.ts) is written when that commit writes the copy (writePending, which
// the spans file calls before its write), synced with the next commit or within 200 ms, and answered
// only then: its store keeps the copy's line until this journal holds it on disk.
//
// Compaction (when the journal has grown past the snapshot's size, at least 4 MiB, and at close): the
// journal is renamed to <journal>.old and a new one started (synchronously, between two
// changes), then the snapshot (which holds every change so far and its number) is written whole
// (temp file, fsync, rename) and the old journal removed. A crash at any step replays the old journal
// then the new one, skipping the lines the snapshot already holds (by number).
import fs from 'node:fs';
import path from 'node:path';
import { log } from '../log.ts';
import { GroupCommit, syncDir, writeFileDurably } from './json-files.ts';

const MIN_COMPACT_BYTES = 4 * 2 ** 20;
/** How long a line written without a sync may wait for it when no durable change comes. */
const LAZY_SYNC_MS = 200;

/** A journal's files, in one directory: the snapshot, the journal, and the journal a compaction started from. */
export interface JournalFiles {
  dir: string;
  /** e.g. review.json */
  snapshot: string;
  /** e.g. review.journal.jsonl; `${journal}.old` during a compaction */
  journal: string;
}

export interface JournalScan {
  /** Bytes of the journal that hold whole lines (a torn last line starts here). */
  whole: number;
  /** Lines that were not changes (kept in place, reported). */
  rejected: Array<{ line: number; text: string; reason: string }>;
  /** Whether the file ends in a torn line, to be cut off at `whole`. */
  torn: boolean;
  /** Whether its last line is whole but lacks the newline (written before the next append). */
  unterminated: boolean;
}

/** A numbered change line: `s`, the change's number, and the change itself. */
export type Numbered<C> = C & { s: number };

/**
 * Replays a journal file over a state, changing no file: `apply` gets each change numbered after
 * `after`, in file order. A last line without its newline (a crash mid-append) is applied if it parses
 * whole and otherwise left out (reported as torn, to be cut off when the journal is opened). `what`
 * names a change in the reasons ("a review change").
 */
export function replayJournal<C>(file: string, after: number, isChange: (v: unknown) => v is Numbered<C>, apply: (change: C, seq: number) => void, what: string): JournalScan {
  const scan: JournalScan = { whole: 0, rejected: [], torn: false, unterminated: false };
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return scan;
    throw err;
  }
  let start = 0;
  for (let lineNo = 1; start < bytes.length; lineNo++) {
    const nl = bytes.indexOf(0x0a, start);
    const end = nl < 0 ? bytes.length : nl;
    const text = bytes.toString('utf8', start, end);
    let change: unknown;
    try {
      change = text.trim() ? JSON.parse(text) : undefined;
    } catch {
      /* not JSON */
    }
    if (nl < 0 && !isChange(change)) {
      scan.rejected.push({ line: lineNo, text, reason: 'torn last line (a crash mid-append), cut off the journal' });
      scan.torn = true;
      break;
    }
    if (nl < 0) scan.unterminated = true;
    if (isChange(change)) {
      const { s, ...rest } = change;
      if (s > after) apply(rest as C, s);
    } else if (text.trim()) scan.rejected.push({ line: lineNo, text, reason: `not ${what}, skipped and left in place` });
    start = nl < 0 ? bytes.length : nl + 1;
  }
  scan.whole = start;
  return scan;
}

/** Replays the journal a compaction left (if any), then the current one; answers the current one's scan. */
export function replayJournals<C>(
  files: JournalFiles,
  after: number,
  isChange: (v: unknown) => v is Numbered<C>,
  apply: (change: C, seq: number) => void,
  what: string,
): JournalScan {
  replayJournal(path.join(files.dir, `${files.journal}.old`), after, isChange, apply, what);
  return replayJournal(path.join(files.dir, files.journal), after, isChange, apply, what);
}

export class Journal {
  private readonly dir: string;
  private readonly journalFile: string;
  private readonly oldJournalFile: string;
  private readonly snapshotFile: string;
  private fd: number;
  /** Bytes in the journal file now; compared with the snapshot's size to decide a compaction. */
  private bytes: number;
  private snapshotBytes: number;
  /** The directory changed (a journal renamed or made) and is not synced yet. */
  private dirDirty = false;
  private readonly sync: GroupCommit;
  private compacting?: Promise<void>;
  /** Lines of durable changes not written yet (the next commit writes them). */
  private unwritten = '';
  private lazyTimer?: NodeJS.Timeout;
  private closed = false;
  /** The commit this turn of the event loop's durable changes wait for, started at the turn's end. */
  private turnCommit?: Promise<void>;
  /** While a compaction syncs the journal it renamed: the lines written there before it are durable after it. */
  private oldSynced?: Promise<void>;

  /**
   * `snapshot` gives the snapshot's text of the state at the moment it is called (every change
   * applied so far). `compactBytes` overrides the journal size that triggers a compaction (tests).
   */
  constructor(
    files: JournalFiles,
    scan: JournalScan,
    private readonly snapshot: () => string,
    private readonly compactBytes?: number,
  ) {
    this.dir = files.dir;
    this.journalFile = path.join(files.dir, files.journal);
    this.oldJournalFile = `${this.journalFile}.old`;
    this.snapshotFile = path.join(files.dir, files.snapshot);
    this.snapshotBytes = fs.existsSync(this.snapshotFile) ? fs.statSync(this.snapshotFile).size : 0;
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
      this.writeOut();
      const dirty = this.dirDirty;
      this.dirDirty = false;
      const oldSynced = this.oldSynced;
      await new Promise<void>((resolve, reject) => fs.fdatasync(this.fd, (err) => (err ? reject(err) : resolve())));
      if (dirty) await syncDir(this.dir);
      // Lines a compaction wrote out to the renamed journal (its first step) are on disk only once it is synced.
      if (oldSynced) await oldSynced;
    });
    // A journal left by a compaction that a crash interrupted: its lines are replayed; compact again.
    if (fs.existsSync(this.oldJournalFile)) void this.compact().catch((err) => log.warn(`${this.journalFile}: ${err.message}`));
  }

  /**
   * Copies the lines replay left out to <journal>.rejected (once each), before a torn one is cut off;
   * synchronous because the stores are opened synchronously, before anything is appended.
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

  /** Whether lines are still taken (not closed). */
  get open(): boolean {
    return !this.closed;
  }

  /**
   * Appends one change line, in order with every other; resolves once it is on disk (`durable` true),
   * or at once: written now and synced within 200 ms (false), or written and synced by the next
   * commit, at the latest within 200 ms ('carried'); or written by writePending (or the next commit)
   * and resolved once a commit begun after it has synced it, the next one or one started 200 ms
   * later ('written').
   */
  append(line: string, durable: boolean | 'carried' | 'written'): Promise<void> {
    // After close the directory may belong to another process: never write to it again.
    if (this.closed) return Promise.reject(new Error('the JSON store is closed'));
    const text = `${line}\n`;
    this.unwritten += text;
    if (durable === false) this.writeOut();
    this.bytes += Buffer.byteLength(text);
    if (!this.compacting && this.bytes >= (this.compactBytes ?? Math.max(MIN_COMPACT_BYTES, this.snapshotBytes))) {
      void this.compact().catch((err) => log.warn(`${this.journalFile}: compaction failed (${err.message}); the journal keeps growing and is replayed at start`));
    }
    if (durable === true) return this.commitAtTurnEnd();
    if (durable === 'written') return this.sync.commitWithin(LAZY_SYNC_MS);
    this.lazyTimer ??= setTimeout(() => {
      this.lazyTimer = undefined;
      if (!this.closed) this.sync.commit().catch((err) => log.warn(`${this.journalFile}: ${err.message}`));
    }, LAZY_SYNC_MS).unref();
    return Promise.resolve();
  }

  /**
   * The durable changes of one turn of the event loop share one commit, started once the turn's I/O
   * callbacks have run (setImmediate): the OTLP exports read in one turn enqueue with one fdatasync,
   * where the first would start its own at once and the rest share the next (issue 33).
   */
  private commitAtTurnEnd(): Promise<void> {
    this.turnCommit ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      this.turnCommit = undefined;
      return this.sync.commit();
    });
    return this.turnCommit;
  }

  /**
   * Writes the lines waiting (with one write(2)), called by the spans file as its commit writes the
   * copies of `written` lines (span-carrier.ts): an OTLP export's enqueue is written before its spans'
   * fdatasync ends, so a crash of the process alone never needs the copy in spans.jsonl. One write per
   * spans commit, which takes the exports of every turn that came while the last one synced, where a
   * write at the end of each turn made one per turn (issue 33).
   */
  writePending(): void {
    if (!this.closed) this.writeOut();
  }

  /** Writes the lines waiting, in order, with one write(2). */
  private writeOut(): void {
    if (!this.unwritten) return;
    const text = this.unwritten;
    this.unwritten = '';
    fs.writeSync(this.fd, text);
  }

  /** Starts a new journal, writes the snapshot whole and removes the old journal; resolves once all is on disk. */
  compact(): Promise<void> {
    this.compacting ??= this.rotateAndSnapshot().finally(() => (this.compacting = undefined));
    return this.compacting;
  }

  private async rotateAndSnapshot(): Promise<void> {
    const old = this.oldJournalFile;
    // Synchronously, between two changes: the snapshot text holds every line of the renamed journal.
    // An old journal still there (a compaction that failed) holds lines the snapshot holds too.
    this.writeOut();
    if (!fs.existsSync(old)) fs.renameSync(this.journalFile, old);
    const oldFd = this.fd;
    this.fd = fs.openSync(this.journalFile, 'a');
    this.bytes = 0;
    this.dirDirty = true;
    const text = this.snapshot();
    // The old journal's lines that were only written (not durable) are synced with it before it goes;
    // a commit under way until then waits for this too (its lines may be among them).
    const oldSynced = new Promise<void>((resolve, reject) => fs.fdatasync(oldFd, (err) => (err ? reject(err) : resolve())));
    this.oldSynced = oldSynced;
    try {
      await oldSynced;
    } finally {
      if (this.oldSynced === oldSynced) this.oldSynced = undefined;
    }
    fs.closeSync(oldFd);
    await writeFileDurably(this.snapshotFile, text);
    this.snapshotBytes = Buffer.byteLength(text);
    fs.rmSync(old, { force: true });
    await syncDir(this.dir);
  }

  /** Compacts, then lets the file go: nothing is written after (the directory may belong to another process). */
  async close(): Promise<void> {
    if (this.closed) return;
    clearTimeout(this.lazyTimer);
    await this.compacting?.catch(() => {});
    await this.turnCommit?.catch(() => {});
    await this.compact();
    await this.sync.commit();
    this.closed = true;
    fs.closeSync(this.fd);
  }
}
