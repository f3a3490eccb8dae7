// Following a server batch from the CLI: polling its status endpoint into the progress bar (plain
// lines without a terminal), the per-evaluator summary, the --fail-under gate and the exit code.
// The batch runs on the server: Ctrl-C or a lost connection stops the waiting, never the batch.
import { ConnectionError, type ApiClient } from './client.ts';
import { CliError, EXIT } from './errors.ts';
import { printJson, table, usd } from './output.ts';
import { formatSeconds, Progress } from './progress.ts';
import type { BatchExecution } from '../schemas/batches.ts'; // the wire type, from the zod schema (one source of truth)

export type BatchRecord = BatchExecution;

/** The provider batches of a provider_batch run, one line (issue 32); null for a live run. */
export function providerBatchLine(r: Pick<BatchRecord, 'mode' | 'provider_batches'>): string | null {
  if (r.mode !== 'provider_batch') return null;
  const batches = r.provider_batches ?? [];
  if (!batches.length) return 'Provider batches: none submitted yet.';
  return `Provider batches: ${batches.map((b) => `${b.id} ${b.status} (${b.requests} request${b.requests === 1 ? '' : 's'})`).join(', ')}.`;
}

export const FINISHED = new Set(['completed', 'failed', 'cancelled']);
export const batchPath = (id: string) => `/v1/judges/batch-executions/${encodeURIComponent(id)}/`;

/** Waits `ms`, or less when `signal` aborts; leaves no listener behind (one sleep per poll). */
const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const onAbort = () => (clearTimeout(t), resolve());
    const t = setTimeout(() => (signal?.removeEventListener('abort', onAbort), resolve()), ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

interface WaitOptions {
  pollMs: number;
  quiet: boolean;
  /** Called with each status read (tests and --json callers may want them). */
  onStatus?: (b: BatchRecord) => void;
}

/**
 * Polls until every batch in `ids` has ended; one progress bar over all of them (eval --server
 * starts one batch per 1,000 rows). Answers the final records in the order of `ids`.
 */
export async function waitForBatches(api: ApiClient, ids: string[], opts: WaitOptions): Promise<BatchRecord[]> {
  const latest = new Map<string, BatchRecord>();
  const read = async (id: string) => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await api.get<BatchRecord>(batchPath(id));
      } catch (err) {
        if (!(err instanceof ConnectionError) || attempt >= 5) throw err;
        await sleep(500 * 2 ** attempt);
      }
    }
  };
  for (const id of ids) latest.set(id, await read(id));
  const total = () => [...latest.values()].reduce((n, b) => n + b.total, 0);
  const progress = new Progress(total(), 0, Boolean(process.stderr.isTTY), !opts.quiet);
  let shownDone = 0;
  let shownFailed = 0;
  const interrupt = new AbortController();
  const onSignal = () => interrupt.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const hint = ids.length === 1 ? `tribunal batch status ${ids[0]}` : `tribunal batch list`;
  try {
    for (;;) {
      const records = [...latest.values()];
      const done = records.reduce((n, b) => n + b.done, 0);
      const failed = records.reduce((n, b) => n + b.failed, 0);
      // The bar counts rows: each newly finished row is one tick (failed ones flagged).
      while (shownFailed < failed) shownFailed++, progress.tick(false);
      while (shownDone < done) shownDone++, progress.tick(true);
      for (const b of records) opts.onStatus?.(b);
      if (records.every((b) => FINISHED.has(b.status))) break;
      await sleep(opts.pollMs, interrupt.signal);
      if (interrupt.signal.aborted) {
        progress.note('stopped waiting; the batch goes on on the server.');
        throw new CliError(EXIT.interrupted, `interrupted: the batch goes on on the server (see: ${hint}; stop it with tribunal batch cancel).`);
      }
      try {
        for (const id of ids) if (!FINISHED.has(latest.get(id)!.status)) latest.set(id, await read(id));
      } catch (err) {
        if (err instanceof ConnectionError) {
          throw new CliError(EXIT.connectionLost, `lost the server while waiting: ${err.message} The batch is kept on the server; follow it with ${hint} when it is back.`);
        }
        throw err;
      }
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    progress.finish();
  }
  return ids.map((id) => latest.get(id)!);
}

/** The per-evaluator statistics of several batches (eval --server's chunks) merged into one. */
export function mergeSummaries(records: BatchRecord[]): BatchRecord['summary'] {
  const by = new Map<string, BatchRecord['summary'][number] & { sum: number }>();
  for (const r of records) {
    for (const s of r.summary) {
      const m = by.get(s.evaluator_id) ?? { ...s, n: 0, mean: null, min: null, max: null, errors: 0, sum: 0 };
      if (s.n && s.mean !== null) {
        m.sum += s.mean * s.n;
        m.n += s.n;
        m.min = m.min === null ? s.min : Math.min(m.min, s.min ?? m.min);
        m.max = m.max === null ? s.max : Math.max(m.max, s.max ?? m.max);
        m.mean = m.sum / m.n;
      }
      m.errors += s.errors;
      by.set(s.evaluator_id, m);
    }
  }
  return [...by.values()].map(({ sum: _sum, ...s }) => s);
}

/** Prints a finished batch (table or --json) and answers its exit code under the gate. */
export function reportBatch(record: BatchRecord, ctx: { json: boolean; failUnder?: number; elapsedMs?: number }): number {
  const below = ctx.failUnder === undefined ? [] : record.summary.filter((e) => e.mean === null || e.mean < ctx.failUnder!);
  const gate =
    ctx.failUnder === undefined ? null : { threshold: ctx.failUnder, passed: below.length === 0 && record.summary.length > 0, below: below.map((e) => e.evaluator_name) };
  const evaluatorErrors = record.summary.reduce((n, e) => n + e.errors, 0);
  let exitCode: number = EXIT.ok;
  if (record.status === 'failed') exitCode = EXIT.rejected;
  else if (gate && !gate.passed) exitCode = EXIT.gate;
  else if (record.status === 'cancelled' || record.failed || evaluatorErrors) exitCode = EXIT.partial;

  if (ctx.json) printJson({ ...record, gate, exit_code: exitCode });
  else {
    const f = (n: number | null) => (n === null ? '-' : n.toFixed(2));
    const took = record.started_at && record.finished_at ? `, ${formatSeconds((Date.parse(record.finished_at) - Date.parse(record.started_at)) / 1000)}` : '';
    console.log(
      `\nBatch ${record.id}: ${record.status}. ${record.done} of ${record.total} row(s) scored${record.failed ? `, ${record.failed} failed` : ''} (${usd(record.cost_usd)}${took}).`,
    );
    if (record.error) console.log(`Reason: ${record.error}`);
    const provider = providerBatchLine(record);
    if (provider) console.log(provider);
    console.log(
      table(
        ['EVALUATOR', 'SCORED', 'MEAN', 'MIN', 'MAX', ...(evaluatorErrors ? ['FAILED'] : [])],
        record.summary.map((e) => [e.evaluator_name, e.n, f(e.mean), f(e.min), f(e.max), ...(evaluatorErrors ? [e.errors] : [])]),
        ['l', 'r', 'r', 'r', 'r', 'r'],
      ),
    );
    if (gate) {
      console.log(
        gate.passed
          ? `Gate passed: every evaluator's mean is at least ${gate.threshold}.`
          : `Gate FAILED: ${below.length ? below.map((e) => `${e.evaluator_name} mean ${f(e.mean)}`).join(', ') : 'no evaluator scored any row'} below ${gate.threshold}.`,
      );
    }
    console.log(`Rows: tribunal batch results ${record.id}`);
  }
  if (record.status === 'failed') throw new CliError(EXIT.rejected, `batch ${record.id} failed: ${record.error ?? 'no reason given'}`);
  if (exitCode === EXIT.partial) {
    const what =
      record.status === 'cancelled'
        ? 'the batch was cancelled'
        : `${record.failed} row(s) were not scored${evaluatorErrors ? `, ${evaluatorErrors} evaluator result(s) failed` : ''}`;
    console.error(`note: ${what}; exit code ${EXIT.partial}.`);
  }
  return exitCode;
}
