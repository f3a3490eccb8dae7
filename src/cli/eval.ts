// tribunal eval: run every row of a dataset through a judge with bounded concurrency.
//
// Crash safety and resume: each finished row is appended to the --out file as soon as it is done
// (so a killed run loses at most the rows in flight), and when the run ends the file is rewritten
// in input order. --resume reads the file back and skips every row already scored with the same
// judge and the same row text (a per-row hash), so no finished row is scored twice.
import { setMaxListeners } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { num, runCommand, str, type Command } from './command.ts';
import { ConnectionError, HttpError, resolveId, type ApiClient } from './client.ts';
import { formatFor, parseDataset, type DatasetRow, type RunInput } from './dataset.ts';
import { CliError, EXIT, usageError } from './errors.ts';
import { printJson, table } from './output.ts';
import { formatSeconds, Progress } from './progress.ts';

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

interface ExecuteAnswer {
  execution_log_id: string;
  evaluator_results: Array<EvaluatorResultLine & Record<string, unknown>>;
  score: number | null;
  cost_usd: number | null;
  latency_ms: number;
}

/** Why a batch stopped before its end; the first reason wins. */
interface Stop {
  exitCode: number;
  message: string;
}

const MAX_NOTES = 20;
const RETRIES_5XX = 3;
const RETRIES_CONNECTION = 3;

export const evalCommand: Command = {
  summary: 'score every row of a JSONL or CSV dataset with a judge',
  help: `Usage: tribunal eval --judge <id or name> --input <data.jsonl|data.csv> --out <results.jsonl> [options]

Runs each row (fields: response (required), request, contexts, expected_output, tags, user_id, id)
through the judge, writes one result line per row to --out in input order (with the execution log
id), and ends with the mean, minimum and pass rate of each evaluator. Bad rows (invalid JSON,
missing response) are reported with their line number and skipped.

  --judge <id|name>        the judge to run (id or exact name)
  --input <path>           dataset: .jsonl/.ndjson (one JSON object a line) or .csv (header row;
                           contexts and tags as a JSON array or |-separated)
  --format <jsonl|csv>     dataset format when the extension does not say
  --out <path>             results file (JSON Lines)
  --concurrency <n>        rows in flight at once (default 8)
  --fail-under <0..1>      exit 1 when any evaluator's mean score is below this (a CI gate); also
                           the pass threshold of the summary (default pass threshold 0.5)
  --resume                 continue an interrupted run: skip rows already scored in --out
  --force                  overwrite an existing --out instead of refusing
  --max-retries <n>        retries of a row after rate limiting (429, default 10)
  --quiet                  no progress output`,
  options: {
    judge: { type: 'string' },
    input: { type: 'string' },
    format: { type: 'string' },
    out: { type: 'string' },
    concurrency: { type: 'string' },
    'fail-under': { type: 'string' },
    resume: { type: 'boolean' },
    force: { type: 'boolean' },
    'max-retries': { type: 'string' },
    quiet: { type: 'boolean' },
  },
  async run({ values, json, client }) {
    const judgeRef = str(values.judge);
    const inputPath = str(values.input);
    const outPath = str(values.out);
    if (!judgeRef) throw usageError('--judge <id or name> is required (see tribunal eval --help).');
    if (!inputPath) throw usageError('--input <data.jsonl|data.csv> is required.');
    if (!outPath) throw usageError('--out <results.jsonl> is required.');
    const concurrency = num(values.concurrency, 'concurrency', { min: 1, max: 1024, integer: true }) ?? 8;
    const failUnder = num(values['fail-under'], 'fail-under', { min: 0, max: 1 });
    const maxRetries = num(values['max-retries'], 'max-retries', { min: 0, max: 1000, integer: true }) ?? 10;
    if (values.resume && values.force) throw usageError('give --resume or --force, not both.');
    const format = formatFor(inputPath, str(values.format));
    if (values.format !== undefined && format !== values.format) throw usageError('--format must be jsonl or csv.');
    if (!format) throw usageError(`cannot tell the format of ${inputPath} from its name: use a .jsonl or .csv file, or pass --format jsonl|csv.`);
    if (path.resolve(inputPath) === path.resolve(outPath)) throw usageError('--out must not be the --input file.');

    let text: string;
    try {
      text = fs.readFileSync(inputPath, 'utf8');
    } catch (err) {
      throw usageError(`cannot read --input ${inputPath} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}).`);
    }
    const rows = parseDataset(text, format);
    if (!rows.length) throw usageError(`${inputPath} holds no rows.`);

    const outExists = fs.existsSync(outPath) && fs.statSync(outPath).size > 0;
    if (outExists && !values.resume && !values.force) {
      throw usageError(`${outPath} already exists: pass --resume to continue that run, or --force to start over.`);
    }

    const api = client();
    const judgeId = await resolveId(api, 'judge', judgeRef);
    const judge = await api.get<{ id: string; name: string; evaluators: Array<{ id: string; name: string }> }>(`/v1/judges/${encodeURIComponent(judgeId)}/`);

    const runner = new BatchRunner(api, judge, rows, { outPath, concurrency, maxRetries, resume: Boolean(values.resume) && outExists, quiet: Boolean(values.quiet) });
    const summary = await runner.run();
    return report(summary, { json, failUnder, inputPath, outPath, judge });
  },
};

export const evalBatch = (argv: string[]) => runCommand('eval', evalCommand, argv);

interface BatchOptions {
  outPath: string;
  concurrency: number;
  maxRetries: number;
  resume: boolean;
  quiet: boolean;
}

interface BatchSummary {
  lines: ResultLine[];
  resumed: number;
  scoredNow: number;
  retries: number;
  elapsedMs: number;
  stop?: Stop;
}

class BatchRunner {
  private readonly lines: Array<ResultLine | undefined>;
  private fd = -1;
  private stop?: Stop;
  /** No request starts before this time (shared back-off after a 429). */
  private pauseUntil = 0;
  private retries = 0;
  private notes = 0;
  private hiddenNotes = 0;
  private readonly hardAbort = new AbortController();
  private progress!: Progress;

  constructor(
    private readonly api: ApiClient,
    private readonly judge: { id: string; name: string },
    private readonly rows: DatasetRow[],
    private readonly opts: BatchOptions,
  ) {
    this.lines = new Array(rows.length).fill(undefined);
    // Every request in flight listens on this one signal (a Ctrl-C twice stops them all).
    setMaxListeners(0, this.hardAbort.signal);
  }

  async run(): Promise<BatchSummary> {
    const started = Date.now();
    const resumed = this.opts.resume ? this.loadFinished() : 0;
    this.rewrite(); // the file now holds exactly the kept lines; new ones are appended
    this.fd = fs.openSync(this.opts.outPath, 'a');

    const todo: DatasetRow[] = [];
    for (const row of this.rows) {
      if (this.lines[row.row - 1]) continue;
      if (row.error) this.record({ row: row.row, line: row.line, ...(row.id ? { id: row.id } : {}), input_hash: row.hash, status: 'skipped', error: row.error });
      else todo.push(row);
    }
    const bad = this.rows.filter((r) => r.error);
    for (const r of bad) this.noteLimited(`line ${r.line}: ${r.error}; skipped`);
    if (resumed) process.stderr.write(`Resuming: ${resumed} row(s) already scored in ${this.opts.outPath}; ${todo.length} to go.\n`);

    const tty = Boolean(process.stderr.isTTY);
    this.progress = new Progress(todo.length, this.rows.length - todo.length, tty, !this.opts.quiet);
    const onSignal = (signal: NodeJS.Signals) => {
      if (this.stop?.exitCode === EXIT.interrupted) {
        this.hardAbort.abort();
        return;
      }
      this.halt({ exitCode: EXIT.interrupted, message: `interrupted (${signal}); the results so far are in ${this.opts.outPath}: run the same command with --resume to continue.` });
      this.progress.note(`${signal}: finishing the rows in flight (press Ctrl-C again to stop at once)…`);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);

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
    try {
      await Promise.all(Array.from({ length: Math.min(this.opts.concurrency, todo.length) }, worker));
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
    if (this.notes++ < MAX_NOTES) (this.progress ? this.progress.note(line) : process.stderr.write(`${line}\n`));
    else this.hiddenNotes++;
  }

  /** Reads the finished rows of an earlier run of the same judge on the same rows. */
  private loadFinished(): number {
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
      const row = this.rows[line.row - 1];
      if (!row || row.hash !== line.input_hash || row.error) continue; // the row changed since: score it again
      if (!this.lines[line.row - 1]) kept++;
      this.lines[line.row - 1] = line;
    }
    return kept;
  }

  private record(line: ResultLine): void {
    this.lines[line.row - 1] = line;
    if (this.fd >= 0) fs.writeSync(this.fd, `${JSON.stringify(line)}\n`);
  }

  /** Writes every known line in input order, atomically (temp file + rename). */
  private rewrite(): void {
    const tmp = `${this.opts.outPath}.tmp-${process.pid}`;
    const body = this.lines
      .filter((l): l is ResultLine => Boolean(l))
      .map((l) => JSON.stringify(l))
      .join('\n');
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
    const base = { row: row.row, line: row.line, ...(row.id ? { id: row.id } : {}), input_hash: row.hash };
    const path = `/v1/judges/${encodeURIComponent(this.judge.id)}/execute/`;
    for (let attempt = 0; ; attempt++) {
      await this.waitForPause();
      if (this.hardAbort.signal.aborted) return undefined;
      try {
        const answer = await this.api.post<ExecuteAnswer>(path, row.input as RunInput, { signal: this.hardAbort.signal });
        return {
          ...base,
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
          return { ...base, status: 'error', code: err.code ?? `http_${status}`, error: err.message };
        }
        if (err instanceof ConnectionError) {
          if (attempt < RETRIES_CONNECTION && !this.stop) {
            this.retries++;
            await new Promise((r) => setTimeout(r, 500 * 2 ** attempt));
            continue;
          }
          this.halt({
            exitCode: EXIT.connectionLost,
            message: `lost the server during the run: ${err.message} ${this.done()} of ${this.rows.length} rows are done in ${this.opts.outPath}; run the same command with --resume when the server is back.`,
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

interface EvaluatorStats {
  evaluator_id: string;
  evaluator_name: string;
  scored: number;
  failed: number;
  mean: number | null;
  min: number | null;
  pass_rate: number | null;
}

function stats(lines: ResultLine[], order: Array<{ id: string; name: string }>, threshold: number) {
  const by = new Map<string, { name: string; scores: number[]; failed: number }>();
  for (const e of order) by.set(e.id, { name: e.name, scores: [], failed: 0 });
  const overall: number[] = [];
  for (const l of lines) {
    if (l.status !== 'ok') continue;
    if (typeof l.score === 'number') overall.push(l.score);
    for (const r of l.evaluator_results ?? []) {
      let s = by.get(r.evaluator_id);
      if (!s) by.set(r.evaluator_id, (s = { name: r.evaluator_name, scores: [], failed: 0 }));
      if (typeof r.score === 'number') s.scores.push(r.score);
      else s.failed++;
    }
  }
  const summarize = (scores: number[]) => ({
    mean: scores.length ? scores.reduce((a, b) => a + b, 0) / scores.length : null,
    min: scores.length ? Math.min(...scores) : null,
    pass_rate: scores.length ? scores.filter((s) => s >= threshold).length / scores.length : null,
  });
  const evaluators: EvaluatorStats[] = [...by].map(([id, s]) => ({ evaluator_id: id, evaluator_name: s.name, scored: s.scores.length, failed: s.failed, ...summarize(s.scores) }));
  return { evaluators, overall: { scored: overall.length, ...summarize(overall) } };
}

function report(
  summary: BatchSummary,
  ctx: { json: boolean; failUnder?: number; inputPath: string; outPath: string; judge: { id: string; name: string; evaluators: Array<{ id: string; name: string }> } },
): number {
  const threshold = ctx.failUnder ?? 0.5;
  const { evaluators, overall } = stats(summary.lines, ctx.judge.evaluators, threshold);
  const count = (s: ResultLine['status']) => summary.lines.filter((l) => l.status === s).length;
  const scored = count('ok');
  const skipped = count('skipped');
  const failed = count('error');
  const below = ctx.failUnder === undefined ? [] : evaluators.filter((e) => e.mean === null || e.mean < ctx.failUnder!);
  const evaluatorErrors = evaluators.reduce((n, e) => n + e.failed, 0);
  const gate = ctx.failUnder === undefined ? null : { threshold: ctx.failUnder, passed: below.length === 0, below: below.map((e) => e.evaluator_name) };

  let exitCode: number = EXIT.ok;
  if (summary.stop) exitCode = summary.stop.exitCode;
  else if (gate && !gate.passed) exitCode = EXIT.gate;
  else if (skipped || failed || evaluatorErrors) exitCode = EXIT.partial;

  if (ctx.json) {
    printJson({
      judge: { id: ctx.judge.id, name: ctx.judge.name },
      input: ctx.inputPath,
      out: ctx.outPath,
      rows: summary.lines.length,
      scored,
      scored_now: summary.scoredNow,
      resumed: summary.resumed,
      skipped,
      failed,
      retries: summary.retries,
      elapsed_s: summary.elapsedMs / 1000,
      pass_threshold: threshold,
      evaluators,
      overall,
      gate,
      stopped: summary.stop?.message ?? null,
      exit_code: exitCode,
    });
  } else {
    const f = (n: number | null) => (n === null ? '-' : n.toFixed(2));
    const pct = (n: number | null) => (n === null ? '-' : `${(n * 100).toFixed(1)}%`);
    console.log(
      `\nJudge ${ctx.judge.name} (${ctx.judge.id}): ${scored} row(s) scored${summary.resumed ? ` (${summary.resumed} from the earlier run)` : ''}` +
        `${skipped ? `, ${skipped} bad row(s) skipped` : ''}${failed ? `, ${failed} refused by the server` : ''}.`,
    );
    console.log(
      table(
        ['EVALUATOR', 'SCORED', 'MEAN', 'MIN', `PASS (>= ${threshold})`, ...(evaluatorErrors ? ['FAILED'] : [])],
        [
          ...evaluators.map((e) => [e.evaluator_name, e.scored, f(e.mean), f(e.min), pct(e.pass_rate), ...(evaluatorErrors ? [e.failed] : [])]),
          ['(row mean)', overall.scored, f(overall.mean), f(overall.min), pct(overall.pass_rate), ...(evaluatorErrors ? [''] : [])],
        ],
        ['l', 'r', 'r', 'r', 'r', 'r'],
      ),
    );
    const rate = summary.scoredNow && summary.elapsedMs ? `, ${(summary.scoredNow / (summary.elapsedMs / 1000)).toFixed(1)} rows/s` : '';
    console.log(`Results: ${ctx.outPath}  (${formatSeconds(summary.elapsedMs / 1000)}${rate}${summary.retries ? `, ${summary.retries} retries` : ''})`);
    if (gate) {
      console.log(
        gate.passed
          ? `Gate passed: every evaluator's mean is at least ${gate.threshold}.`
          : `Gate FAILED: ${below.map((e) => `${e.evaluator_name} mean ${f(e.mean)}`).join(', ')} below ${gate.threshold}.`,
      );
    }
  }
  if (summary.stop) throw new CliError(summary.stop.exitCode, summary.stop.message);
  if (exitCode === EXIT.partial) {
    const parts = [skipped ? `${skipped} bad` : '', failed ? `${failed} refused by the server` : '', evaluatorErrors ? `${evaluatorErrors} evaluator result(s) failed` : ''].filter(Boolean);
    const rowsNotScored = skipped + failed;
    console.error(`note: ${rowsNotScored ? `${rowsNotScored} row(s) were not scored` : 'some evaluators failed'} (${parts.join(', ')}; see "error" in ${ctx.outPath}); exit code ${EXIT.partial}.`);
  }
  return exitCode;
}
