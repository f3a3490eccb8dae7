// Where the server's JSON log lines go: stdout, many lines to one write (issue 33). pino's own
// asynchronous destination (SonicBoom) measures the byte length of its whole pending buffer again
// on every line, so with a 4 KiB batch a line cost about 3.7 µs against 0.3 µs here (a loop of
// 100,000 request lines to /dev/null). Lines are joined into one string and written out once it
// holds `batchChars` characters, at least every `everyMs`, and synchronously when the process exits,
// so a line logged just before process.exit (a shutdown's last lines) is not lost. 64 KiB, not 16: a
// flush (the string made a Buffer, a write on the thread pool, its callback) was about 0.5% of the
// "on" server's profile under the observability bench, and the fewer of them measured better there
// (paired rounds, issue 33).
import fs from 'node:fs';

const RETRY_MS = 10;

export class LineBatch {
  private pending = '';
  /** A chunk handed to fs.write and not yet reported written (at most one at a time, so lines keep their order). */
  private writing: Buffer | undefined;
  /** After EPIPE (the reader is gone) lines are dropped, as pino's destination drops them. */
  private closed = false;

  constructor(
    private readonly fd: number,
    private readonly batchChars = 65_536,
    everyMs = 1000,
  ) {
    setInterval(() => this.flush(), everyMs).unref();
    process.on('exit', () => this.flushSync());
  }

  /** pino's DestinationStream: each call is one line, newline included. */
  write(line: string): void {
    if (this.closed) return;
    this.pending += line;
    if (this.pending.length >= this.batchChars) this.flush();
  }

  /** Starts writing what is pending, unless a write is under way (its callback comes back for the rest). */
  flush(): void {
    if (this.writing || this.pending === '' || this.closed) return;
    const chunk = Buffer.from(this.pending);
    this.pending = '';
    this.writeOut(chunk);
  }

  private writeOut(chunk: Buffer): void {
    this.writing = chunk;
    fs.write(this.fd, chunk, 0, chunk.length, null, (err, written) => {
      if (err) {
        // A full non-blocking pipe: try again shortly, as SonicBoom does; a gone reader: stop.
        if (err.code === 'EAGAIN' || err.code === 'EBUSY') return void setTimeout(() => this.writeOut(chunk), RETRY_MS);
        if (err.code === 'EPIPE') this.closed = true;
        // Any other failure drops this chunk: a log write must never fail the server.
        this.writing = undefined;
        return;
      }
      if (written < chunk.length) return this.writeOut(chunk.subarray(written));
      this.writing = undefined;
      if (this.pending.length >= this.batchChars) this.flush();
    });
  }

  /**
   * At exit no callback will come: what is pending is written synchronously. A chunk still being
   * written asynchronously is left to the thread writing it (written again here it could appear
   * twice).
   */
  flushSync(): void {
    if (this.pending === '' || this.closed) return;
    let chunk = Buffer.from(this.pending);
    this.pending = '';
    for (let tries = 0; chunk.length > 0 && tries < 1000; tries++) {
      try {
        chunk = chunk.subarray(fs.writeSync(this.fd, chunk));
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code !== 'EAGAIN' && code !== 'EBUSY') return;
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1); // a full pipe: wait 1 ms
      }
    }
  }
}
