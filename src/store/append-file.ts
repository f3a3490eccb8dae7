// A file of JSON lines kept open for appending, its appends group-committed: lines given while a
// write is in flight wait for the next one, which writes them all and fdatasyncs once; each caller
// is answered when its lines are on disk (the OTLP receiver's 200 means the spans are stored). A
// failed write is cut back off the file, so no half line stays to be misread. The trace store's
// spans, evaluations and log events use it (issue 33: they were appended unsynced, reopening the
// file per call). A rewrite (retention, a purge) runs in the same queue, so no append interleaves.
// A line no caller waits on promptly (an evaluation link, json-traces.ts) can be carried instead:
// it costs no fdatasync of its own, it waits for the file's next commit, at the latest CARRY_MS later.
// The appends of one turn of the event loop share one commit, started once the turn's I/O callbacks
// have run (as journal.ts does for the rules' enqueues): the OTLP exports read in one turn are written
// and synced together, where the first would start its own commit at once and the rest share the next.
import fs from 'node:fs';
import { appendAndSync, GroupCommit, writeFileDurably } from './json-files.ts';

/** How long a carried line may wait for a commit to come before it starts one. */
export const CARRY_MS = 100;

export class AppendFile {
  private fd: number | undefined;
  /** Bytes in the file, where a failed write is cut back to; undefined until opened or after a failure. */
  private size: number | undefined;
  private pending: string[] = [];
  /** A rewrite asked for: the text the whole file is to hold, read when the rewrite runs. */
  private rewriteWith: (() => string) | undefined;
  private readonly commit: GroupCommit;
  private closed = false;
  /** The commit this turn's appends wait for, started at the turn's end. */
  private turnCommit?: Promise<void>;
  /**
   * Called as each append's write starts, before the file's write(2): the rules journal writes its
   * lines whose copies this write carries (span-carrier.ts). If it throws, nothing is written.
   */
  beforeWrite?: () => void;

  constructor(private readonly file: string) {
    this.commit = new GroupCommit(() => this.write());
  }

  /** Appends `text` (whole lines, each ending in a newline); resolves once it is on disk. */
  append(text: string): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the JSON store is closed'));
    this.pending.push(text);
    this.turnCommit ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      this.turnCommit = undefined;
      return this.commit.commit();
    });
    return this.turnCommit;
  }

  /**
   * Appends `text` like append(), but starts no commit of its own: the lines ride along with the
   * next commit of the file (an append's), or the one started CARRY_MS after the first of them was
   * given. Resolves, as append() does, only once the write that took them is fdatasync'd: a caller
   * that must not act before its line is durable still waits for it, it only waits longer and shares
   * the sync with more lines (issue 33: one fdatasync per evaluation link cost CPU under load).
   */
  appendCarried(text: string): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the JSON store is closed'));
    this.pending.push(text);
    return this.commit.commitWithin(CARRY_MS);
  }

  /**
   * Replaces the file with `content()` (temp file, fsync, rename, directory fsync), read when the
   * rewrite runs: it must hold every line appended so far, so the lines still waiting are dropped.
   */
  rewrite(content: () => string): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the JSON store is closed'));
    this.rewriteWith = content;
    return this.commit.commit();
  }

  private async write(): Promise<void> {
    if (this.rewriteWith) return this.replace(this.rewriteWith);
    if (!this.pending.length) return;
    const text = this.pending.length === 1 ? this.pending[0]! : this.pending.join('');
    this.pending = [];
    this.beforeWrite?.();
    this.fd ??= fs.openSync(this.file, 'a');
    const start = (this.size ??= fs.fstatSync(this.fd).size);
    const bytes = Buffer.from(text);
    try {
      await appendAndSync(this.fd, bytes);
      this.size = start + bytes.length;
    } catch (err) {
      this.size = undefined;
      try {
        fs.ftruncateSync(this.fd, start);
      } catch {
        /* the file is unusable: the next write reads its size again */
      }
      throw err;
    }
  }

  private async replace(content: () => string): Promise<void> {
    this.rewriteWith = undefined;
    this.pending = [];
    await writeFileDurably(this.file, content());
    // The old descriptor points at the replaced file: the next append opens the new one.
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
    this.size = undefined;
  }

  /** Lets the file go once what was given is on disk; nothing is written after. */
  async close(): Promise<void> {
    if (this.closed) return;
    await this.turnCommit?.catch(() => {});
    await this.commit.commit().catch(() => {});
    this.closed = true;
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
  }
}
