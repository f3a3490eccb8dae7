// tribunal datasets create|list|import|export|delete
// Import and export stream: a file of any size goes up (JSONL in parts of --lines-per-request lines,
// each part well within the server's request timeout) and comes down without being held in memory.
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import readline from 'node:readline';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ApiClient } from './client.ts';
import { num, runGroup, str, type Command } from './command.ts';
import { CliError, EXIT, usageError } from './errors.ts';
import { clip, day, printJson, printNextPage, printTable } from './output.ts';
import { oneRequestCommand, type Group } from './shared.ts';
import type { ImportResult } from '../datasets/import.ts';
import type { Dataset } from '../schemas/datasets.ts'; // the wire type, from the zod schema (one source of truth)

const datasetPath = (ref: string) => `/v1/datasets/${encodeURIComponent(ref)}/`;

/** A request with a streamed body or answer; answers the response for the caller to read. */
function streamRequest(client: ApiClient, method: string, path: string, headers: Record<string, string>, body?: Readable): Promise<http.IncomingMessage> {
  client.requireKey();
  const url = new URL(client.url + path);
  const lib = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = lib.request(url, { method, headers: { ...headers, authorization: `Api-Key ${client.apiKey}` } }, resolve);
    req.setTimeout(client.timeoutMs, () => req.destroy(new Error('timed out')));
    req.on('error', (err) =>
      reject(new CliError(EXIT.connection, `cannot talk to Tribunal at ${client.url} (${err.message}): is the server running? Set TRIBUNAL_URL or pass --url.`)),
    );
    if (body) body.on('error', (err) => req.destroy(err)).pipe(req);
    else req.end();
  });
}

async function readAll(res: http.IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of res) text += chunk;
  return text;
}

/** A non-2xx answer as the one-line error every command gives. */
async function failure(res: http.IncomingMessage, what: string): Promise<CliError> {
  const text = await readAll(res);
  let detail = `HTTP ${res.statusCode}`;
  try {
    const problem = JSON.parse(text) as { detail?: string; code?: string };
    detail = problem.detail ?? detail;
  } catch {
    /* not a problem body */
  }
  const code = res.statusCode === 401 || res.statusCode === 403 ? EXIT.auth : res.statusCode === 404 ? EXIT.notFound : EXIT.rejected;
  return new CliError(code, `${what}: ${detail}`, { status: res.statusCode });
}

async function uploadPart(client: ApiClient, ref: string, type: string, body: Readable): Promise<ImportResult> {
  const res = await streamRequest(client, 'POST', `${datasetPath(ref)}items/import/`, { 'content-type': type, 'transfer-encoding': 'chunked' }, body);
  if (res.statusCode !== 201) throw await failure(res, 'the import was refused');
  return JSON.parse(await readAll(res)) as ImportResult;
}

/** JSONL in parts of `perPart` lines; the server's line numbers are turned back into the file's. */
async function importJsonl(client: ApiClient, ref: string, file: string, perPart: number): Promise<ImportResult> {
  const total: ImportResult = { created: 0, skipped: [], skipped_count: 0 };
  const lines = readline.createInterface({ input: fs.createReadStream(file), crlfDelay: Infinity })[Symbol.asyncIterator]();
  let offset = 0;
  for (let done = false; !done; ) {
    let sent = 0;
    async function* part() {
      while (sent < perPart) {
        const next = await lines.next();
        if (next.done) return void (done = true);
        sent++;
        yield `${next.value}\n`;
      }
    }
    const answer = await uploadPart(client, ref, 'application/x-ndjson', Readable.from(part()));
    total.created += answer.created;
    total.skipped_count += answer.skipped_count;
    total.skipped.push(...answer.skipped.map((s) => ({ line: s.line + offset, error: s.error })));
    offset += sent;
    if (sent < perPart) done = true;
  }
  return total;
}

const list_: Command = {
  summary: "list your organization's datasets",
  help: `Usage: tribunal datasets list [--search TEXT] [--limit N] [--cursor C | --all]`,
  options: { search: { type: 'string' }, limit: { type: 'string' }, cursor: { type: 'string' }, all: { type: 'boolean' } },
  async run({ values, json, client }) {
    const query = { search: str(values.search) };
    const page = values.all
      ? { results: await client().listAll('/v1/datasets/', query), next_cursor: null }
      : await client().get('/v1/datasets/', { ...query, limit: num(values.limit, 'limit', { min: 1, integer: true }), cursor: str(values.cursor) });
    if (json) printJson(page);
    else {
      printTable(
        ['ID', 'NAME', 'ITEMS', 'UPDATED', 'DESCRIPTION'],
        page.results.map((d: Dataset) => [d.id, clip(d.name, 40), d.item_count, day(d.updated_at), clip(d.description, 40)]),
        ['l', 'l', 'r'],
      );
      printNextPage(page.next_cursor, 'tribunal datasets list');
    }
    return EXIT.ok;
  },
};

const create: Command = {
  summary: 'create a dataset',
  help: `Usage: tribunal datasets create <name> [--description <text>] [--project <id>]`,
  options: { description: { type: 'string' }, project: { type: 'string' } },
  positionals: [1, 1],
  async run({ values, positionals, json, client }) {
    const name = positionals[0].trim();
    if (!name) throw usageError('the dataset name is empty.');
    const dataset = await client().post<Dataset>('/v1/datasets/', { name, description: str(values.description), project_id: str(values.project) });
    if (json) printJson(dataset);
    else console.log(`Created dataset ${dataset.name} (${dataset.id}).`);
    return EXIT.ok;
  },
};

const import_: Command = {
  summary: 'add the items of a JSONL or CSV file (streamed; bad lines are reported and skipped)',
  help: `Usage: tribunal datasets import <dataset> <file.jsonl|file.csv> [--format jsonl|csv] [--lines-per-request N]

  <dataset>                id or exact name
  --format jsonl|csv       default: from the file extension (.csv is CSV, anything else JSONL)
  --lines-per-request N    JSONL is sent in parts of N lines (default 10000), each within the
                           server's request timeout; CSV is sent in one request`,
  options: { format: { type: 'string' }, 'lines-per-request': { type: 'string' } },
  positionals: [2, 2],
  async run({ values, positionals, json, client }) {
    const [ref, file] = positionals;
    const format = str(values.format) ?? (file.toLowerCase().endsWith('.csv') ? 'csv' : 'jsonl');
    if (format !== 'csv' && format !== 'jsonl') throw usageError('--format must be jsonl or csv.');
    try {
      if (!fs.statSync(file).isFile()) throw new Error('not a file');
    } catch (err) {
      throw usageError(`cannot read ${file}: ${(err as Error).message}`);
    }
    const perPart = num(values['lines-per-request'], 'lines-per-request', { min: 1, integer: true }) ?? 10_000;
    const answer = format === 'csv' ? await uploadPart(client(), ref, 'text/csv', fs.createReadStream(file)) : await importJsonl(client(), ref, file, perPart);
    if (json) printJson(answer);
    else {
      console.log(`Imported ${answer.created} items into ${ref}; skipped ${answer.skipped_count} lines.`);
      for (const s of answer.skipped.slice(0, 20)) console.log(`  line ${s.line}: ${s.error}`);
      if (answer.skipped_count > 20) console.log(`  ... and ${answer.skipped_count - 20} more (--json lists up to 1000 per request).`);
    }
    return answer.skipped_count ? EXIT.partial : EXIT.ok;
  },
};

const export_: Command = {
  summary: 'write every item as JSONL (to a file, or stdout)',
  help: `Usage: tribunal datasets export <dataset> [--out <file.jsonl>]

  <dataset>        id or exact name
  --out <file>     write there instead of stdout`,
  options: { out: { type: 'string' } },
  positionals: [1, 1],
  async run({ values, positionals, client }) {
    const res = await streamRequest(client(), 'GET', `${datasetPath(positionals[0])}items/export/`, { accept: 'application/x-ndjson' });
    if (res.statusCode !== 200) throw await failure(res, 'the export was refused');
    const out = str(values.out);
    await pipeline(res, out ? fs.createWriteStream(out) : process.stdout, { end: Boolean(out) });
    return EXIT.ok;
  },
};

const delete_ = oneRequestCommand(
  'delete a dataset and its items (execution logs stay)',
  `Usage: tribunal datasets delete <dataset>`,
  (api, ref) => api.delete<{ id: string }>(datasetPath(ref)),
  (answer) => console.log(`Deleted dataset ${answer.id}.`),
);

const datasetCommands: Group = { list: list_, create, import: import_, export: export_, delete: delete_ };

export function datasets(argv: string[]): Promise<number> {
  return runGroup('datasets', 'Datasets hold inputs (and expected scores) to run judges over.', datasetCommands, argv);
}
