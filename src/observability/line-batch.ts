// Where the server's JSON log lines go: stdout, many lines to one write (issue 33). pino's own
// asynchronous destination (SonicBoom) measures the byte length of its whole pending buffer again
// on every line, so with a 4 KiB batch a line cost about 3.7 µs against 0.3 µs here (a loop of
// 100,000 request lines to /dev/null). Each line is encoded at once into a buffer of `batchBytes`,
// which is written out when the next line does not fit, at least every `everyMs`, and
// synchronously when the process exits, so a line logged just before process.exit (a shutdown's
// last lines) is not lost. Encoded at once, not joined into a pending string: a line held as a
// string until its batch was written (a few hundred requests later) outlived the young
// generation's collections, so it was copied and promoted with every request's log line, and the
// old generation collected it later. 64 KiB, not 16: a flush was about 0.5% of the "on" server's
// profile under the observability bench, and the fewer of them measured better there (issue 33).
import fs from 'node:fs';

const RETRY_MS = 10;

export class LineBatch {
  /** The batch being filled, and how many of its bytes hold lines. */
  private buffer: Buffer;
  private used = 0;
  /** Sealed batches waiting to be written, in order; the first is being written when `writing`. */
  private readonly queue: Buffer[] = [];
  /** The queue's first chunk is handed to fs.write and not yet reported written (one at a time, so lines keep their order). */
  private writing = false;
  /** After EPIPE (the reader is gone) lines are dropped, as pino's destination drops them. */
  private closed = false;

  constructor(
    private readonly fd: number,
    private readonly batchBytes = 65_536,
    everyMs = 1000,
  ) {
    this.buffer = Buffer.allocUnsafeSlow(batchBytes);
    setInterval(() => this.flush(), everyMs).unref();
    process.on('exit', () => this.flushSync());
  }

  /** pino's DestinationStream: each call is one line, newline included. */
  write(line: string): void {
    if (this.closed) return;
    const free = this.buffer.length - this.used;
    // UTF-8 takes at most 3 bytes a UTF-16 unit; the exact length is counted only near the end.
    if (line.length * 3 > free) {
      const bytes = Buffer.byteLength(line);
      if (bytes > free) this.seal();
      if (bytes > this.buffer.length) {
        this.queue.push(Buffer.from(line)); // longer than a whole batch: a chunk of its own
        return this.writeNext();
      }
    }
    this.used += this.buffer.write(line, this.used);
    if (this.used === this.buffer.length) this.seal();
    if (this.queue.length > 0) this.writeNext();
  }

  /** Starts writing what is held, unless a write is under way (its callback comes back for the rest). */
  flush(): void {
    if (this.closed) return;
    this.seal();
    this.writeNext();
  }

  /** The batch being filled joins the queue, and an empty one takes its place. */
  private seal(): void {
    if (this.used === 0) return;
    this.queue.push(this.buffer.subarray(0, this.used));
    this.buffer = Buffer.allocUnsafeSlow(this.batchBytes);
    this.used = 0;
  }

  private writeNext(): void {
    if (this.writing || this.closed) return;
    const chunk = this.queue[0];
    if (chunk) this.writeOut(chunk);
  }

  private writeOut(chunk: Buffer): void {
    this.writing = true;
    fs.write(this.fd, chunk, 0, chunk.length, null, (err, written) => {
      if (err) {
        // A full non-blocking pipe: try again shortly, as SonicBoom does; a gone reader: stop.
        if (err.code === 'EAGAIN' || err.code === 'EBUSY') return void setTimeout(() => this.writeOut(chunk), RETRY_MS);
        if (err.code === 'EPIPE') {
          // The reader is gone: this chunk and every line waiting are dropped, and none is taken after.
          this.closed = true;
          this.queue.length = 1;
          this.used = 0;
        }
        // Any other failure drops this chunk: a log write must never fail the server.
      } else if (written < chunk.length) {
        return this.writeOut(chunk.subarray(written));
      }
      this.writing = false;
      this.queue.shift();
      this.writeNext();
    });
  }

  /**
   * At exit no callback will come: what is held is written synchronously. A chunk still being
   * written asynchronously is left to the thread writing it (written again here it could appear
   * twice).
   */
  flushSync(): void {
    if (this.closed) return;
    this.seal();
    const waiting = this.writing ? this.queue.splice(1) : this.queue.splice(0);
    for (let chunk of waiting) {
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
}
