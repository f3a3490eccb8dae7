// Batch progress on stderr: a redrawn bar with rate and time left on a terminal, plain lines
// (every tenth of the work, or every 15 s) otherwise, so that CI logs stay readable.
export class Progress {
  private readonly started = Date.now();
  private done = 0;
  private failed = 0;
  private lastDraw = 0;
  private lastPlain = Date.now();
  private lastDecile = 0;
  private finished = false;

  /**
   * @param total rows this run will attempt
   * @param offset rows already finished before this run (resumed), shown in the count
   */
  constructor(
    private readonly total: number,
    private readonly offset: number,
    private readonly tty: boolean,
    private readonly enabled = true,
  ) {}

  tick(ok: boolean): void {
    this.done++;
    if (!ok) this.failed++;
    if (!this.enabled) return;
    const now = Date.now();
    if (this.tty) {
      if (now - this.lastDraw >= 100 || this.done === this.total) this.draw(now);
      return;
    }
    const decile = Math.floor((this.done / Math.max(1, this.total)) * 10);
    if (decile > this.lastDecile || now - this.lastPlain >= 15_000) {
      this.lastDecile = decile;
      this.lastPlain = now;
      process.stderr.write(`progress: ${this.describe(now)}\n`);
    }
  }

  /** Something to say between redraws (a bad row, a retry): clears the bar, writes, redraws. */
  note(line: string): void {
    if (this.enabled && this.tty && !this.finished) process.stderr.write('\r\x1b[2K');
    process.stderr.write(`${line}\n`);
    if (this.enabled && this.tty && !this.finished && this.done) this.draw(Date.now());
  }

  finish(): void {
    if (!this.enabled || this.finished) return;
    this.finished = true;
    if (this.tty) {
      this.draw(Date.now());
      process.stderr.write('\n');
    } else if (this.lastDecile < 10) {
      process.stderr.write(`progress: ${this.describe(Date.now())}\n`);
    }
  }

  private rate(now: number): number {
    const secs = (now - this.started) / 1000;
    return secs > 0 ? this.done / secs : 0;
  }

  private describe(now: number): string {
    const rate = this.rate(now);
    const left = this.total - this.done;
    const eta = rate > 0 ? formatSeconds(left / rate) : '?';
    const shown = this.offset + this.done;
    const all = this.offset + this.total;
    const pct = all ? Math.floor((shown / all) * 100) : 100;
    return `${shown}/${all} rows (${pct}%), ${rate.toFixed(1)} rows/s, ${left ? `about ${eta} left` : `done in ${formatSeconds((now - this.started) / 1000)}`}${this.failed ? `, ${this.failed} failed` : ''}`;
  }

  private draw(now: number): void {
    this.lastDraw = now;
    const all = this.offset + this.total;
    const shown = this.offset + this.done;
    const width = 24;
    const filled = all ? Math.round((shown / all) * width) : width;
    const rate = this.rate(now);
    const left = this.total - this.done;
    const eta = left === 0 ? formatSeconds((now - this.started) / 1000) : rate > 0 ? `ETA ${formatSeconds(left / rate)}` : 'ETA ?';
    const pct = all ? Math.floor((shown / all) * 100) : 100;
    const bar = `${'█'.repeat(filled)}${'░'.repeat(width - filled)}`;
    process.stderr.write(`\r\x1b[2K${bar} ${shown}/${all} ${String(pct).padStart(3)}%  ${rate.toFixed(1)} rows/s  ${eta}${this.failed ? `  ${this.failed} failed` : ''}`);
  }
}

export function formatSeconds(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  return h ? `${h}:${String(m).padStart(2, '0')}:${String(sec).padStart(2, '0')}` : `${m}:${String(sec).padStart(2, '0')}`;
}
