// The batch runner of `tribunal eval`: every row of a dataset through a judge with bounded
// concurrency, retries (429 with a shared back-off, 5xx, lost connections) and crash safety.
//
// Crash safety and resume: each finished row is appended to the --out file as soon as it is done
// (so a killed run loses at most the rows in flight), and when the run ends the file is rewritten
// in input order. With resume, the file is read back and every row already scored with the same
// judge and the same row text (a per-row hash) is kept, so no finished row is scored twice.
import { setMaxListeners } from 'node:events';
import fs from 'node:fs';
import { ConnectionError, HttpError, type ApiClient } from './client.ts';
import type { Dataset, DatasetRow, RunInput } from './dataset.ts';
import { EXIT, usageError } from './errors.ts';
import { Progress } from './progress.ts';
import type { ExecutionResult } from '../schemas/core.ts'; // the wire type, from the zod schema (one source of truth)

interface EvaluatorResultLine {
  evaluator_id: string;
  evaluator_name: string;
  evaluator_version?: number;
  score: number | null;
  justification?: string | null;
  error?: string;
}

export interface ResultLine {
  row: number;
  line: number;
  id?: string;
  input_hash: string;
  status: 'ok' | 'skipped' | 'error';
  judge_id?: string;
  execution_log_id?: string;
  score?: number | null;
  cost_usd?: number | null;
  latency_ms?: number;
  evaluator_results?: EvaluatorResultLine[];
  code?: string;
  error?: string;
}

type ExecuteAnswer = ExecutionResult;

/** Why a batch stopped before its end; the first reason wins. */
interface Stop {
  exitCode: number;
  message: string;
}

const MAX_NOTES = 20;
const RETRIES_5XX = 3;
const RETRIES_CONNECTION = 3;

interface BatchOptions {
  outPath: string;
  concurrency: number;
  maxRetries: number;
  resume: boolean;
  quiet: boolean;
  /** Each row may reuse the server's cached result for the same inputs (use_cache). */
  useCache?: boolean;
}

export interface BatchSummary {
  lines: ResultLine[];
  resumed: number;
  scoredNow: number;
  retries: number;
  elapsedMs: number;
  stop?: Stop;
}

export class BatchRunner {
  private readonly lines: Array<ResultLine | undefined>;
  /** Each line's JSON text as appended, so the rewrite at the end does not serialize it again. */
  private readonly texts: Array<string | undefined>;
  private fd = -1;
  private stop?: Stop;
  /** No request starts before this time (shared back-off after a 429). */
  private pauseUntil = 0;
  private retries = 0;
  private notes = 0;
  private hiddenNotes = 0;
  private readonly hardAbort = new AbortController();
  private progress!: Progress;
  /**
   * Settled once every row is checked and the progress is set up. The first requests leave before
   * that (see run()); their answers wait for it, so that what the run prints comes in the same order
   * as if every row had been checked first.
   */
  private ready: Promise<void> = Promise.resolve();

  constructor(
    private readonly api: ApiClient,
    private readonly judge: { id: string; name: string },
    private readonly rows: Dataset,
    private readonly opts: BatchOptions,
  ) {
    this.lines = new Array(rows.size).fill(undefined);
    this.texts = new Array(rows.size).fill(undefined);
    // Every request in flight listens on this one signal (a Ctrl-C twice stops them all).
    setMaxListeners(0, this.hardAbort.signal);
  }

  async run(): Promise<BatchSummary> {
    const started = Date.now();
    const resumed = this.opts.resume ? await this.loadFinished() : 0;
    this.rewrite(); // the file now holds exactly the kept lines; new ones are appended
    this.fd = fs.openSync(this.opts.outPath, 'a');

    // The rows still to score, in input order; a bad one is recorded as skipped on the way.
    const todo: DatasetRow[] = [];
    const bad: DatasetRow[] = [];
    let checked = 0;
    const checkUntil = async (wanted: number) => {
      for (; checked < this.rows.size && todo.length < wanted; checked++) {
        if (this.lines[checked]) continue;
        const row = await this.rows.row(checked);
        if (!row.error) todo.push(row);
        else {
          this.record({ row: row.row, line: row.line, ...(row.id ? { id: row.id } : {}), input_hash: row.hash, status: 'skipped', error: row.error });
          bad.push(row);
        }
      }
    };

    let next = 0;
    let scoredNow = 0;
    const worker = async () => {
      while (!this.stop) {
        const row = todo[next++];
        if (!row) return;
        const line = await this.score(row);
        if (!line) continue; // aborted at once: the row stays unscored
        this.record(line);
        if (line.status === 'ok') scoredNow++;
        this.progress.tick(line.status === 'ok');
      }
    };

    // A head start (issue 33): only the rows the first requests need are checked before they leave;
    // the rest are checked while those are in flight (their answers take a model call). Two turns of
    // the event loop let the requests' connections open and their bytes go out first. No answer is
    // handled before every row is checked (this.ready), so the notes below still come first.
    let begin!: () => void;
    this.ready = new Promise<void>((resolve) => (begin = resolve));
    await checkUntil(this.opts.concurrency);
    const workers = Array.from({ length: Math.min(this.opts.concurrency, todo.length) }, worker);
    if (workers.length) for (let turn = 0; turn < 2; turn++) await new Promise((resolve) => setImmediate(resolve));
    await checkUntil(Number.POSITIVE_INFINITY);

    for (const r of bad) this.noteLimited(`line ${r.line}: ${r.error}; skipped`);
    if (resumed) process.stderr.write(`Resuming: ${resumed} row(s) already scored in ${this.opts.outPath}; ${todo.length} to go.\n`);

    const tty = Boolean(process.stderr.isTTY);
    this.progress = new Progress(todo.length, this.rows.size - todo.length, tty, !this.opts.quiet);
    const onSignal = (signal: NodeJS.Signals) => {
      if (this.stop?.exitCode === EXIT.interrupted) {
        this.hardAbort.abort();
        return;
      }
      this.halt({
        exitCode: EXIT.interrupted,
        message: `interrupted (${signal}); the results so far are in ${this.opts.outPath}: run the same command with --resume to continue.`,
      });
      this.progress.note(`${signal}: finishing the rows in flight (press Ctrl-C again to stop at once)…`);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    begin();

    try {
      await Promise.all(workers);
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      this.progress.finish();
      if (this.hiddenNotes) process.stderr.write(`… and ${this.hiddenNotes} more (see the "error" of each line in ${this.opts.outPath}).\n`);
      fs.closeSync(this.fd);
      this.rewrite();
    }
    return { lines: this.lines.filter((l): l is ResultLine => Boolean(l)), resumed, scoredNow, retries: this.retries, elapsedMs: Date.now() - started, stop: this.stop };
  }

  private halt(stop: Stop): void {
    this.stop ??= stop;
  }

  private noteLimited(line: string): void {
    if (this.notes++ < MAX_NOTES) this.progress ? this.progress.note(line) : process.stderr.write(`${line}\n`);
    else this.hiddenNotes++;
  }

  /** Reads the finished rows of an earlier run of the same judge on the same rows. */
  private async loadFinished(): Promise<number> {
    let text: string;
    try {
      text = fs.readFileSync(this.opts.outPath, 'utf8');
    } catch (err) {
      throw usageError(`cannot read ${this.opts.outPath} to resume (${(err as NodeJS.ErrnoException).code}).`);
    }
    let kept = 0;
    for (const raw of text.split('\n')) {
      if (!raw.trim()) continue;
      let line: ResultLine;
      try {
        line = JSON.parse(raw);
      } catch {
        continue; // the half-written last line of a killed run
      }
      if (!line || typeof line !== 'object' || line.status !== 'ok' || !Number.isInteger(line.row)) continue;
      if (line.judge_id && line.judge_id !== this.judge.id) {
        throw usageError(`${this.opts.outPath} holds results of another judge (${line.judge_id}): resume with that judge, or write to another --out.`);
      }
      const row = line.row >= 1 && line.row <= this.rows.size ? await this.rows.row(line.row - 1) : undefined;
      if (!row || row.hash !== line.input_hash || row.error) continue; // the row changed since: score it again
      if (!this.lines[line.row - 1]) kept++;
      this.lines[line.row - 1] = line;
    }
    return kept;
  }

  private record(line: ResultLine): void {
    const text = JSON.stringify(line);
    this.lines[line.row - 1] = line;
    this.texts[line.row - 1] = text;
    if (this.fd >= 0) fs.writeSync(this.fd, `${text}\n`);
  }

  /** Writes every known line in input order, atomically (temp file + rename). */
  private rewrite(): void {
    const tmp = `${this.opts.outPath}.tmp-${process.pid}`;
    const body = this.lines.flatMap((l, i) => (l ? [this.texts[i] ?? JSON.stringify(l)] : [])).join('\n');
    try {
      fs.writeFileSync(tmp, body ? `${body}\n` : '');
      fs.renameSync(tmp, this.opts.outPath);
    } catch (err) {
      throw usageError(`cannot write --out ${this.opts.outPath} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}).`);
    }
  }

  private async waitForPause(): Promise<void> {
    while (Date.now() < this.pauseUntil && !this.hardAbort.signal.aborted) {
      await new Promise((r) => setTimeout(r, Math.min(1000, this.pauseUntil - Date.now())));
    }
  }

  /** One row through the judge, with retries; undefined when the run was aborted at once. */
  private async score(row: DatasetRow): Promise<ResultLine | undefined> {
    // Made once the answer is back: reading the row's hash loads node:crypto (dataset.ts), which the
    // first requests need not wait for.
    const base = () => ({ row: row.row, line: row.line, ...(row.id ? { id: row.id } : {}), input_hash: row.hash });
    const path = `/v1/judges/${encodeURIComponent(this.judge.id)}/execute/`;
    for (let attempt = 0; ; attempt++) {
      await this.waitForPause();
      if (this.hardAbort.signal.aborted) return undefined;
      try {
        const input = this.opts.useCache ? { ...(row.input as RunInput), use_cache: true } : (row.input as RunInput);
        const answer = await this.api.post<ExecuteAnswer>(path, input, { signal: this.hardAbort.signal });
        await this.ready;
        return {
          ...base(),
          status: 'ok',
          judge_id: this.judge.id,
          execution_log_id: answer.execution_log_id,
          score: answer.score,
          cost_usd: answer.cost_usd,
          latency_ms: answer.latency_ms,
          evaluator_results: answer.evaluator_results.map((r) => ({
            evaluator_id: r.evaluator_id,
            evaluator_name: r.evaluator_name,
            evaluator_version: r.evaluator_version,
            score: r.score,
            justification: r.justification ?? null,
            ...(r.error ? { error: r.error } : {}),
          })),
        };
      } catch (err) {
        await this.ready;
        if ((err as Error).name === 'AbortError') return undefined;
        if (err instanceof HttpError) {
          const status = err.status ?? 0;
          if (status === 429 && attempt < this.opts.maxRetries) {
            const wait = err.retryAfterMs ?? 1000 * 2 ** Math.min(attempt, 5);
            const until = Date.now() + wait + Math.random() * 250;
            if (until > this.pauseUntil + 500) this.progress.note(`rate limited by the server: waiting ${Math.ceil(wait / 1000)} s as it asks (Retry-After)…`);
            this.pauseUntil = Math.max(this.pauseUntil, until);
            this.retries++;
            continue;
          }
          if ((status === 502 || status === 503 || status === 504) && attempt < RETRIES_5XX) {
            this.retries++;
            await new Promise((r) => setTimeout(r, (err.retryAfterMs ?? 1000 * 2 ** attempt) + Math.random() * 250));
            continue;
          }
          if (status === 401 || status === 403) {
            this.halt({ exitCode: err.exitCode, message: `${err.message} (stopped after ${this.done()} rows; --resume continues)` });
            return undefined;
          }
          if (status === 404) {
            this.halt({ exitCode: EXIT.notFound, message: `judge ${this.judge.id} is gone (deleted during the run?): ${err.message}` });
            return undefined;
          }
          this.noteLimited(`line ${row.line}: ${err.message}`);
          return { ...base(), status: 'error', code: err.code ?? `http_${status}`, error: err.message };
        }
        if (err instanceof ConnectionError) {
          if (attempt < RETRIES_CONNECTION && !this.stop) {
            this.retries++;
            await new Promise((r) => setTimeout(r, 500 * 2 ** attempt));
            continue;
          }
          this.halt({
            exitCode: EXIT.connectionLost,
            message: `lost the server during the run: ${err.message} ${this.done()} of ${this.rows.size} rows are done in ${this.opts.outPath}; run the same command with --resume when the server is back.`,
          });
          return undefined;
        }
        throw err;
      }
    }
  }

  private done(): number {
    return this.lines.filter(Boolean).length;
  }
}
