// tribunal batch run|status|list|results|cancel|compare: batch runs on the server (SPEC sections 7
// and 9). The server does the work; these commands start a run, follow it (batch-wait.ts), page its
// rows out as JSONL, and compare two runs (batch-compare.ts).
import fs from 'node:fs';
import { resolveId, type ApiClient } from './client.ts';
import { list, num, oneOf, runGroup, str, type Command, type Values } from './command.ts';
import { compareCommand } from './batch-compare.ts';
import { batchPath, providerBatchLine, reportBatch, waitForBatches, type BatchRecord } from './batch-wait.ts';
import { EXIT, usageError } from './errors.ts';
import { day, printJson, printNextPage, printTable, usd, writeAllSync } from './output.ts';
import { oneRequestCommand, type Group } from './shared.ts';
import { ESTIMATE_HELP, ESTIMATE_OPTIONS, estimateFirst } from './estimate.ts';
import type { z } from 'zod';
import type { batchExecuteOperation } from '../operations/batches.ts';

/** What batch_execute answers: the wire type, from its zod schema (one source of truth). */
type Started = z.infer<typeof batchExecuteOperation.output>;

const STATUSES = ['queued', 'running', 'completed', 'failed', 'cancelled'] as const;

export const WAIT_OPTIONS = {
  wait: { type: 'boolean' },
  'fail-under': { type: 'string' },
  'poll-interval': { type: 'string' },
  quiet: { type: 'boolean' },
} as const;

export const WAIT_HELP = `  --wait                   follow the run to its end: a progress bar on a terminal, plain
                           lines otherwise; then the per-evaluator summary
  --fail-under <0..1>      with --wait: exit 1 when any evaluator's mean score is below this
  --poll-interval <s>      seconds between status reads (default 1)
  --quiet                  no progress output`;

export function waitOptions(values: Values) {
  const failUnder = num(values['fail-under'], 'fail-under', { min: 0, max: 1 });
  const pollMs = (num(values['poll-interval'], 'poll-interval', { min: 0.05, max: 600 }) ?? 1) * 1000;
  if (failUnder !== undefined && !values.wait) throw usageError('--fail-under needs --wait (the gate is read when the run has ended).');
  return { failUnder, pollMs, quiet: Boolean(values.quiet), wait: Boolean(values.wait) };
}

/** `--tags a,b` and repeated `--tag x`, together. */
export const tagsFrom = (values: Values): string[] | undefined => {
  const all = [...(list(values.tag) ?? []), ...(str(values.tags)?.split(',') ?? [])].map((t) => t.trim()).filter(Boolean);
  return all.length ? all : undefined;
};

const run: Command = {
  summary: 'run a judge over a stored dataset on the server',
  help: `Usage: tribunal batch run --judge <id or name> --dataset <id or name> [options]

Starts a batch on the server (it keeps running if this command stops) and prints its id; with
--wait, follows it to the end and prints the mean, minimum and maximum of each evaluator.

  --judge <id|name>        the judge to run
  --dataset <id|name>      the dataset to run it over (tribunal datasets list)
  --tags <a,b>             labels added to every row's execution log (or --tag, repeated)
  --use-cache              rows may reuse a cached result for the same inputs
  --provider-batch         send the model calls through the provider's batch API (half price,
                           results within 24 h; docs/COST.md)
${ESTIMATE_HELP}
${WAIT_HELP}`,
  options: {
    judge: { type: 'string' },
    dataset: { type: 'string' },
    tags: { type: 'string' },
    tag: { type: 'string', multiple: true },
    'use-cache': { type: 'boolean' },
    'provider-batch': { type: 'boolean' },
    ...ESTIMATE_OPTIONS,
    ...WAIT_OPTIONS,
  },
  async run({ values, json, client }) {
    const judgeRef = str(values.judge);
    const dataset = str(values.dataset);
    if (!judgeRef) throw usageError('--judge <id or name> is required (see tribunal batch run --help).');
    if (!dataset) throw usageError('--dataset <id or name> is required (tribunal datasets list shows them).');
    const wait = waitOptions(values);
    const api = client();
    const judgeId = await resolveId(api, 'judge', judgeRef);
    const budget = num(values.budget, 'budget', { min: 0, max: 1e9 });
    const body = {
      dataset_id: dataset,
      tags: tagsFrom(values),
      ...(values['use-cache'] ? { use_cache: true } : {}),
      ...(budget !== undefined ? { budget_usd: budget } : {}),
      ...(values['provider-batch'] ? { mode: 'provider_batch' } : {}),
    };
    const path = `/v1/judges/${encodeURIComponent(judgeId)}/batch-execute/`;
    // The estimate first (room h-cost): --dry-run prints it only; a large run asks (or needs --yes).
    if (!(await estimateFirst(api, path, body, { dryRun: Boolean(values['dry-run']), yes: Boolean(values.yes), json }))) return EXIT.ok;
    const started = await api.post<Started>(path, body);
    if (!wait.wait) {
      if (json) printJson(started);
      else console.log(`Started batch ${started.batch_execution_id} (${started.status}).\nFollow it: tribunal batch status ${started.batch_execution_id} --wait`);
      return EXIT.ok;
    }
    if (!json && !wait.quiet) console.error(`Batch ${started.batch_execution_id} started; waiting for it (Ctrl-C stops waiting, not the batch).`);
    const [record] = await waitForBatches(api, [started.batch_execution_id], wait);
    return reportBatch(record, { json, failUnder: wait.failUnder });
  },
};

const status: Command = {
  summary: 'show a batch run: progress, per-evaluator summary (--wait follows it)',
  help: `Usage: tribunal batch status <batch id> [--wait] [--fail-under X]

${WAIT_HELP}`,
  options: { ...WAIT_OPTIONS },
  positionals: [1, 1],
  async run({ values, positionals, json, client }) {
    const wait = waitOptions(values);
    const api = client();
    const record = wait.wait ? (await waitForBatches(api, [positionals[0]], wait))[0] : await api.get<BatchRecord>(batchPath(positionals[0]));
    if (!wait.wait && (record.status === 'queued' || record.status === 'running')) {
      if (json) printJson(record);
      else printRunning(record);
      return EXIT.ok;
    }
    return reportBatch(record, { json, failUnder: wait.failUnder });
  },
};

function printRunning(r: BatchRecord): void {
  const finished = r.done + r.failed;
  const pct = r.total ? Math.floor((finished / r.total) * 100) : 0;
  console.log(`Batch ${r.id}: ${r.status}, ${finished}/${r.total} rows (${pct}%)${r.failed ? `, ${r.failed} failed` : ''}, ${usd(r.cost_usd)} so far.`);
  const provider = providerBatchLine(r);
  if (provider) console.log(provider);
  const f = (n: number | null) => (n === null ? '-' : n.toFixed(2));
  if (r.summary.length)
    printTable(
      ['EVALUATOR', 'SCORED', 'MEAN', 'MIN', 'MAX'],
      r.summary.map((e) => [e.evaluator_name, e.n, f(e.mean), f(e.min), f(e.max)]),
      ['l', 'r', 'r', 'r', 'r'],
    );
  console.log(`Follow it: tribunal batch status ${r.id} --wait`);
}

const list_: Command = {
  summary: 'list batch runs, newest first',
  help: `Usage: tribunal batch list [--judge <id|name>] [--dataset <id>] [--status S] [--limit N] [--cursor C | --all]

  --status <s>             queued, running, completed, failed or cancelled`,
  options: { judge: { type: 'string' }, dataset: { type: 'string' }, status: { type: 'string' }, limit: { type: 'string' }, cursor: { type: 'string' }, all: { type: 'boolean' } },
  async run({ values, json, client }) {
    const api = client();
    const judgeRef = str(values.judge);
    const query = {
      judge_id: judgeRef ? await resolveId(api, 'judge', judgeRef) : undefined,
      dataset_id: str(values.dataset),
      status: oneOf(values.status, 'status', STATUSES),
    };
    const path = '/v1/judges/batch-executions/';
    const page = values.all
      ? { results: await api.listAll<BatchRecord>(path, query), next_cursor: null }
      : await api.get<{ results: BatchRecord[]; next_cursor: string | null }>(path, {
          ...query,
          limit: num(values.limit, 'limit', { min: 1, integer: true }),
          cursor: str(values.cursor),
        });
    if (json) printJson(page);
    else {
      // Names, not ids (issue 26): the judge (or evaluator) and the dataset; the ids are in --json.
      const names = new Map<string, Promise<string>>();
      const nameOf = (kind: string, id: string) => {
        if (!names.has(id))
          names.set(
            id,
            api.get<{ name?: string }>(`/v1/${kind}/${encodeURIComponent(id)}/`).then(
              (r) => r.name ?? id,
              () => id,
            ),
          );
        return names.get(id)!;
      };
      const rows = await Promise.all(
        page.results.map(async (b) => [
          b.id,
          b.status,
          `${b.done + b.failed}/${b.total}`,
          b.failed,
          b.judge_id ? await nameOf('judges', b.judge_id) : b.evaluator_id ? `${await nameOf('evaluators', b.evaluator_id)} (evaluator)` : '',
          b.dataset_id ? await nameOf('datasets', b.dataset_id) : '(items)',
          day(b.created_at),
          usd(b.cost_usd),
        ]),
      );
      printTable(['ID', 'STATUS', 'ROWS', 'FAILED', 'JUDGE', 'DATASET', 'CREATED', 'COST'], rows, ['l', 'l', 'r', 'r']);
      printNextPage(page.next_cursor, 'tribunal batch list');
    }
    return EXIT.ok;
  },
};

/** Every row of a batch, page after page, in item order. */
export async function* batchResults(api: ApiClient, id: string, max?: number): AsyncGenerator<Record<string, unknown>> {
  let cursor: string | undefined;
  do {
    const page = await api.get<{ results: Array<Record<string, unknown>>; next_cursor: string | null }>(`${batchPath(id)}results/`, { limit: Math.min(200, max ?? 200), cursor });
    yield* page.results;
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
}

const results: Command = {
  summary: "write a batch's rows as JSONL, in item order (to a file, or stdout)",
  help: `Usage: tribunal batch results <batch id> [--out <file.jsonl>] [--limit N]

  --limit <n>              only the first N rows (in item order)

Each line: {position, item_id | index, execution_log_id, score, evaluator_results, error}.`,
  options: { out: { type: 'string' }, limit: { type: 'string' } },
  positionals: [1, 1],
  async run({ values, positionals, client }) {
    const out = str(values.out);
    const limit = num(values.limit, 'limit', { min: 1, integer: true });
    const fd = out ? fs.openSync(out, 'w') : 1;
    let rows = 0;
    try {
      for await (const row of batchResults(client(), positionals[0], limit)) {
        if (limit !== undefined && rows >= limit) break;
        try {
          writeAllSync(fd, `${JSON.stringify(row)}\n`);
        } catch (err) {
          // `| head -1`: the reader has what it wanted; a closed pipe is a normal end (issue 26).
          if ((err as NodeJS.ErrnoException).code === 'EPIPE') return EXIT.ok;
          throw err;
        }
        rows++;
      }
    } finally {
      if (out) fs.closeSync(fd);
    }
    if (out) console.error(`Wrote ${rows} row(s) to ${out}.`);
    return EXIT.ok;
  },
};

const cancel = oneRequestCommand(
  'stop a batch run: rows not started are never scored',
  `Usage: tribunal batch cancel <batch id>`,
  (api, id) => api.post<BatchRecord>(`${batchPath(id)}cancel/`, {}),
  (record) =>
    console.log(`Batch ${record.id}: ${record.status} (${record.done + record.failed}/${record.total} rows finished${record.failed ? `, ${record.failed} failed` : ''}).`),
);

const batchCommands: Group = { run, status, list: list_, results, cancel, compare: compareCommand };

export function batch(argv: string[]): Promise<number> {
  return runGroup('batch', 'Batch runs: a judge over a dataset, on the server (it survives restarts); experiments compare two runs.', batchCommands, argv);
}
