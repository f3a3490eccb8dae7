// tribunal eval --server: the rows of a local file run as server batches (SPEC section 7) instead
// of one execute call per row from here. The server takes at most 1,000 items per batch, so a
// larger file is sent as several batches (started one after the other, run by the server side by
// side); the results come back in input order in the same --out format as `eval`, and the summary,
// the gate and the exit code are eval's own (eval-report.ts).
import fs from 'node:fs';
import { HttpError, type ApiClient } from './client.ts';
import type { DatasetRow } from './dataset.ts';
import { batchResults } from './batch.ts';
import { batchPath, waitForBatches } from './batch-wait.ts';
import { CliError, EXIT, usageError } from './errors.ts';
import type { BatchSummary, ResultLine } from './eval-runner.ts';
import type { BatchRow } from '../schemas/batches.ts'; // the wire type, from the zod schema (one source of truth)

export const ITEMS_PER_BATCH = 1000;

/** Why a row cannot go into a server batch, if it cannot (the server checks the rest and names the line). */
function serverRowError(row: DatasetRow): string | undefined {
  return row.error;
}

/** A refusal of one batch's items, with the item indexes turned back into the file's line numbers. */
function refusal(err: HttpError, chunk: DatasetRow[]): CliError {
  const errors = (err.body as { errors?: Array<{ field: string; message: string }> } | undefined)?.errors ?? [];
  const lines = errors.map((e) => {
    const m = /^items\.(\d+)\.?(.*)$/.exec(e.field);
    const row = m ? chunk[Number(m[1])] : undefined;
    return row ? `line ${row.line}${m![2] ? ` (${m![2]})` : ''}: ${e.message}` : `${e.field}: ${e.message}`;
  });
  return new CliError(err.exitCode, `the server refused the items: ${lines.length ? lines.slice(0, 10).join('; ') : err.message}`, { code: err.code, status: err.status });
}

export async function runOnServer(
  api: ApiClient,
  judge: { id: string; name: string },
  rows: DatasetRow[],
  opts: { outPath: string; quiet: boolean; pollMs: number; tags?: string[]; useCache?: boolean },
): Promise<BatchSummary & { batchIds: string[] }> {
  const started = Date.now();
  const lines: ResultLine[] = new Array(rows.length);
  const todo: DatasetRow[] = [];
  let notes = 0;
  for (const row of rows) {
    const why = serverRowError(row);
    if (!why) {
      todo.push(row);
      continue;
    }
    lines[row.row - 1] = { row: row.row, line: row.line, ...(row.id ? { id: row.id } : {}), input_hash: row.hash, status: 'skipped', error: why };
    if (notes++ < 20) process.stderr.write(`line ${row.line}: ${why}; skipped\n`);
  }
  if (notes > 20) process.stderr.write(`… and ${notes - 20} more (see the "error" of each line in ${opts.outPath}).\n`);

  const chunks: DatasetRow[][] = [];
  for (let i = 0; i < todo.length; i += ITEMS_PER_BATCH) chunks.push(todo.slice(i, i + ITEMS_PER_BATCH));
  const batchIds: string[] = [];
  const path = `/v1/judges/${encodeURIComponent(judge.id)}/batch-execute/`;
  for (const chunk of chunks) {
    // user_id and session_id are the row's own (execute takes them); dataset items have no such field.
    const items = chunk.map(({ input }) => ({
      ...(input!.turns ? { turns: input!.turns } : { response: input!.response! }),
      ...(input!.system_prompt !== undefined ? { system_prompt: input!.system_prompt } : {}),
      ...(input!.request !== undefined ? { request: input!.request } : {}),
      ...(input!.contexts ? { contexts: input!.contexts } : {}),
      ...(input!.expected_output !== undefined ? { expected_output: input!.expected_output } : {}),
      ...(input!.tags ? { tags: input!.tags } : {}),
    }));
    try {
      const answer = await api.post<{ batch_execution_id: string }>(path, { items, ...(opts.tags ? { tags: opts.tags } : {}), ...(opts.useCache ? { use_cache: true } : {}) });
      batchIds.push(answer.batch_execution_id);
    } catch (err) {
      // Started batches would run for nothing: stop them before giving up.
      for (const id of batchIds) await api.post(`${batchPath(id)}cancel/`, {}).catch(() => undefined);
      if (err instanceof HttpError && err.status === 400) throw refusal(err, chunk);
      throw err;
    }
  }
  if (batchIds.length && !opts.quiet) {
    process.stderr.write(`Server batch${batchIds.length > 1 ? `es (${ITEMS_PER_BATCH} rows each)` : ''}: ${batchIds.join(', ')} (Ctrl-C stops waiting, not the batch).\n`);
  }

  const records = await waitForBatches(api, batchIds, { pollMs: opts.pollMs, quiet: opts.quiet });
  let scoredNow = 0;
  for (const [c, id] of batchIds.entries()) {
    const chunk = chunks[c];
    for await (const raw of batchResults(api, id)) {
      const r = raw as unknown as BatchRow;
      const row = chunk[r.index ?? r.position];
      if (!row) continue;
      const base = { row: row.row, line: row.line, ...(row.id ? { id: row.id } : {}), input_hash: row.hash, judge_id: judge.id };
      const evaluator_results = r.evaluator_results.map((e) => ({
        evaluator_id: e.evaluator_id,
        evaluator_name: e.evaluator_name,
        evaluator_version: e.evaluator_version,
        score: e.score,
        justification: e.justification ?? null,
        ...(e.error ? { error: e.error } : {}),
      }));
      if (r.error && r.score === null && !r.evaluator_results.some((e) => e.score !== null)) {
        lines[row.row - 1] = { ...base, status: 'error', code: 'row_failed', error: r.error, ...(r.execution_log_id ? { execution_log_id: r.execution_log_id } : {}) };
      } else {
        scoredNow++;
        lines[row.row - 1] = { ...base, status: 'ok', execution_log_id: r.execution_log_id ?? undefined, score: r.score, evaluator_results };
      }
    }
  }
  // Rows of a cancelled or failed batch that never ran.
  for (const row of todo)
    lines[row.row - 1] ??= {
      row: row.row,
      line: row.line,
      ...(row.id ? { id: row.id } : {}),
      input_hash: row.hash,
      status: 'error',
      code: 'not_run',
      error: 'not run (the batch ended first)',
    };
  try {
    fs.writeFileSync(opts.outPath, lines.map((l) => JSON.stringify(l)).join('\n') + (lines.length ? '\n' : ''));
  } catch (err) {
    throw usageError(`cannot write --out ${opts.outPath} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}).`);
  }
  const ended = records.find((r) => r.status === 'failed' || r.status === 'cancelled');
  const stop = ended
    ? {
        exitCode: ended.status === 'failed' ? EXIT.rejected : EXIT.partial,
        message: `batch ${ended.id} ${ended.status}${ended.error ? `: ${ended.error}` : ''}; the rows it scored are in ${opts.outPath}.`,
      }
    : undefined;
  return { lines, resumed: 0, scoredNow, retries: 0, elapsedMs: Date.now() - started, stop, batchIds };
}
