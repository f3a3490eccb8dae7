// tribunal eval: the command (flags, input file, judge lookup). The batch itself runs in
// eval-runner.ts (concurrency, retries, crash-safe results file, --resume); the summary, the gate
// and the exit code come from eval-report.ts.
import fs from 'node:fs';
import path from 'node:path';
import { num, runCommand, str, type Command } from './command.ts';
import { resolveId, type ApiClient } from './client.ts';
import type { DatasetFormat } from './dataset.ts';
import { usageError } from './errors.ts';
import { report } from './eval-report.ts';
import { BatchRunner } from './eval-runner.ts';

const evalCommand: Command = {
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
  --quiet                  no progress output
  --server                 run the rows as batches on the server (at most 1,000 rows each; the
                           server's model concurrency applies, and a batch survives a restart of
                           the server); --resume, --concurrency and --max-retries do not apply
  --use-cache              each row may reuse the server's cached result for the same inputs
                           (use_cache: no model call, cost 0, marked cached)
  --tags <a,b>             with --server: labels added to every row's execution log
  --poll-interval <s>      with --server: seconds between status reads (default 1)`,
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
    server: { type: 'boolean' },
    'use-cache': { type: 'boolean' },
    tags: { type: 'string' },
    'poll-interval': { type: 'string' },
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
    if (values.server) {
      const moot = (['resume', 'concurrency', 'max-retries'] as const).filter((f) => values[f] !== undefined);
      if (moot.length) throw usageError(`--${moot[0]} does not apply to --server (the server runs the rows; follow a batch with tribunal batch status).`);
    } else if (values.tags !== undefined || values['poll-interval'] !== undefined) throw usageError('--tags and --poll-interval go with --server.');
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
    const outExists = fs.existsSync(outPath) && fs.statSync(outPath).size > 0;
    if (outExists && !values.resume && !values.force) {
      throw usageError(`${outPath} already exists: pass --resume to continue that run, or --force to start over.`);
    }

    // The judge is looked up while the rows are counted, its answer awaited after them (so an empty
    // file still reports first, as does a bad --url, which client() raises inside the lookup): the
    // batch's first requests leave that much sooner. An empty file cancels the lookup. The rows are
    // checked later, by the batch (dataset.ts: only those its first requests need before they leave).
    const lookup = new AbortController();
    const judgeLookup = (async () => lookUpJudge(client(), judgeRef, lookup.signal))();
    judgeLookup.catch(() => undefined); // awaited below; not an unhandled rejection meanwhile
    // Two turns of the event loop first: the lookup's connection opens (a poll phase) and its request
    // leaves before reading the file (synchronous; a CSV file is checked whole) holds the loop.
    for (let turn = 0; turn < 2; turn++) await new Promise((resolve) => setImmediate(resolve));
    // The row checks' module (zod and the execution input's schemas, node:crypto for the row hashes)
    // is loaded only now, while the lookup is in flight (issue 33): compiling and setting it up took
    // 20-35 ms of the command's start, which the lookup's round trip then waited behind.
    const { allRows, openDataset } = await import('./dataset.ts');
    const rows = await openDataset(text, format);
    if (!rows.size) {
      lookup.abort();
      throw usageError(`${inputPath} holds no rows.`);
    }
    const api = client();
    const judge = await judgeLookup;

    if (values.server) {
      // Loaded only here: the server-side path brings the batch commands' modules with it.
      const { runOnServer } = await import('./eval-server.ts');
      const pollMs = (num(values['poll-interval'], 'poll-interval', { min: 0.05, max: 600 }) ?? 1) * 1000;
      const tags = str(values.tags)
        ?.split(',')
        .map((t) => t.trim())
        .filter(Boolean);
      const summary = await runOnServer(api, judge, await allRows(rows), {
        outPath,
        quiet: Boolean(values.quiet),
        pollMs,
        tags: tags?.length ? tags : undefined,
        useCache: Boolean(values['use-cache']),
      });
      return report(summary, { json, failUnder, inputPath, outPath, judge });
    }
    const runner = new BatchRunner(api, judge, rows, {
      outPath,
      concurrency,
      maxRetries,
      resume: Boolean(values.resume) && outExists,
      quiet: Boolean(values.quiet),
      useCache: Boolean(values['use-cache']),
    });
    const summary = await runner.run();
    return report(summary, { json, failUnder, inputPath, outPath, judge });
  },
};

/**
 * The dataset's format from --format or the file name. Here rather than in dataset.ts, which the
 * command loads only once the judge lookup has left (see run()).
 */
function formatFor(path: string, forced?: string): DatasetFormat | undefined {
  if (forced === 'jsonl' || forced === 'csv') return forced;
  const lower = path.toLowerCase();
  if (lower.endsWith('.csv')) return 'csv';
  if (lower.endsWith('.jsonl') || lower.endsWith('.ndjson') || lower.endsWith('.json')) return 'jsonl';
  return undefined;
}

async function lookUpJudge(api: ApiClient, ref: string, signal: AbortSignal) {
  const judgeId = await resolveId(api, 'judge', ref, signal);
  return api.request<{ id: string; name: string; evaluators: Array<{ id: string; name: string }> }>('GET', `/v1/judges/${encodeURIComponent(judgeId)}/`, { signal });
}

export const evalBatch = (argv: string[]) => runCommand('eval', evalCommand, argv);
