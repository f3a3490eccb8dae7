// Datasets for `tribunal eval`: JSON Lines or CSV, one row per evaluated response. Each row is
// validated here; a bad one keeps its line number and the reason, and the batch skips it.
//
// Fields: response (required unless turns are given), request, contexts, expected_output, tags,
// user_id, session_id, and an optional id that is copied to the result line; or, for a
// conversation, turns (a list of {role, content, tool_calls?, tool_call_id?, name?}) with an
// optional system_prompt instead of request/response. In CSV, contexts and tags are a JSON array
// (["a","b"]) or |-separated text (a|b), turns is a JSON array; an empty cell is an absent field.
// The server checks turns in full (roles, the judged turn, limits); a row it refuses is reported.
import { createRequire } from 'node:module';
import { quickRunInput } from './row-quick-check.ts';
import type { RunInput } from './row-check.ts';

export type { RunInput };

export interface DatasetRow {
  /** 1-based position among the data rows (blank lines and the CSV header are not rows). */
  row: number;
  /** 1-based line of the file where the row starts. */
  line: number;
  /** Short hash of the row's text: a resumed run re-scores a row whose text changed. */
  hash: string;
  id?: string;
  input?: RunInput;
  /** Why the row is skipped, when it is bad. */
  error?: string;
}

/**
 * node:crypto loads on the first hash, not with this module: importing it cost `tribunal eval` about
 * 4 ms before its first requests could leave (issue 33), and no row's hash is read before an
 * answer comes back (the result line) or a resume compares it.
 */
let createHash: typeof import('node:crypto').createHash | undefined;
const sha1 = (text: string) =>
  (createHash ??= (createRequire(import.meta.url)('node:crypto') as typeof import('node:crypto')).createHash)('sha1').update(text).digest('hex').slice(0, 16);

/** The row `fields` with its `hash`, the hash of `text` computed on first read (see sha1 above). */
function withHash<T extends object>(fields: T, text: string): T & { hash: string } {
  let value: string | undefined;
  return Object.defineProperty(fields, 'hash', { get: () => (value ??= sha1(text)), enumerable: true }) as T & { hash: string };
}

export type DatasetFormat = 'jsonl' | 'csv';

/**
 * A dataset's rows, counted before any is checked. A JSON Lines row is checked (parsed, hashed,
 * held to the schema) on first use, so that `tribunal eval` can check the rows its first requests
 * need, send them, and check the rest while they are in flight (issue 33: checking 1,000 rows took
 * 15-35 ms of the command's start). A CSV file is read whole by csv-parse, its rows checked at once.
 */
export interface Dataset {
  readonly size: number;
  /**
   * The row at 0-based position `index`, checked on first use (the same object every time).
   * Asynchronous because a row the quick check cannot pass loads the row schema first.
   */
  row(index: number): Promise<DatasetRow>;
}

export async function openDataset(text: string, format: DatasetFormat): Promise<Dataset> {
  if (format === 'jsonl') return jsonlDataset(text);
  const rows = await parseCsvDataset(text);
  return { size: rows.length, row: async (index) => rows[index] };
}

/** Every row of a dataset, checked. */
export async function allRows(dataset: Dataset): Promise<DatasetRow[]> {
  const rows: DatasetRow[] = [];
  for (let index = 0; index < dataset.size; index++) rows.push(await dataset.row(index));
  return rows;
}

/** The row schema's module (row-check.ts), loaded by the first row that needs it. */
let rowCheck: Promise<typeof import('./row-check.ts')> | undefined;

/**
 * Checks one row's fields; answers the run input or the reason it is bad. A plain row (request,
 * response and the other text fields, no turns) that is plainly valid passes the quick check
 * (row-quick-check.ts); any other row, bad ones included, goes through the row schema
 * (row-check.ts), loaded on first need: zod and the schemas cost `tribunal eval` 30-45 ms of its
 * start before the first request could leave (issue 33), and a dataset of plain rows never needs them.
 */
async function toRunInput(raw: Record<string, unknown>): Promise<{ input?: RunInput; id?: string; error?: string }> {
  const quick = quickRunInput(raw);
  if (quick) return quick;
  rowCheck ??= import('./row-check.ts');
  return (await rowCheck).toRunInput(raw);
}

function jsonlDataset(text: string): Dataset {
  const lines = text.replace(/^\uFEFF/, '').split('\n');
  /** The index in `lines` of each row: every line that is not blank. */
  const at: number[] = [];
  for (let i = 0; i < lines.length; i++) if (lines[i].trim()) at.push(i);
  const rows: Array<Promise<DatasetRow> | undefined> = new Array(at.length);
  return {
    size: at.length,
    row: (index) => (rows[index] ??= jsonlRow(lines[at[index]].replace(/\r$/, ''), index + 1, at[index] + 1)),
  };
}

async function jsonlRow(raw: string, row: number, line: number): Promise<DatasetRow> {
  return withHash({ row, line, ...(await jsonlFields(raw)) }, raw.trim());
}

async function jsonlFields(raw: string): Promise<{ input?: RunInput; id?: string; error?: string }> {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (err) {
    return { error: `invalid JSON (${(err as Error).message})` };
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) return { error: 'not a JSON object' };
  return toRunInput(value as Record<string, unknown>);
}

interface CsvRecord {
  fields: string[];
  line: number;
  error?: string;
}

/**
 * RFC 4180 through csv-parse: fields separated by commas, records by CRLF or LF; a field in double
 * quotes may hold commas, line breaks and doubled quotes (""). Lenient where the RFC is silent: a
 * quote inside an unquoted field is kept as text (relax_quotes). A record csv-parse refuses (a quoted
 * field that never closes) is kept with its reason, not guessed at. Line numbers are counted here from
 * byte offsets: csv-parse counts a CRLF inside a quoted field as two lines.
 */
async function parseCsv(text: string): Promise<CsvRecord[]> {
  // Loaded here, not at the top: a JSON Lines dataset (the usual case) never needs it.
  const { parse } = await import('csv-parse/sync');
  const source = Buffer.from(text.replace(/^\uFEFF/, ''), 'utf8');
  const records: CsvRecord[] = [];
  let counted = 0;
  let line = 1;
  let end = 0;
  /** The line where the next record starts: after the previous one and any blank lines. */
  const startLine = () => {
    let start = end;
    while (start < source.length && (source[start] === 0x0a || source[start] === 0x0d)) start++;
    for (; counted < start; counted++) if (source[counted] === 0x0a) line++;
    return line;
  };
  parse(source, {
    relax_quotes: true,
    relax_column_count: true,
    skip_empty_lines: true,
    skip_records_with_error: true,
    on_record: (fields: string[], context) => {
      records.push({ fields, line: startLine() });
      end = context.bytes;
      return null;
    },
    on_skip: (err) => {
      const at = startLine();
      records.push({
        fields: [],
        line: at,
        error: err?.code === 'CSV_QUOTE_NOT_CLOSED' ? `the record starting on line ${at} has a quoted field that never closes` : (err?.message ?? 'unreadable record'),
      });
      end = Math.max(end, Number(err?.bytes ?? source.length));
    },
  });
  return records;
}

const ARRAY_COLUMNS = new Set(['contexts', 'tags']);
/** Columns whose cell is JSON text (a conversation's turns). */
const JSON_COLUMNS = new Set(['turns']);

/** A CSV cell of contexts/tags: a JSON array, or |-separated text. */
function cellToArray(cell: string): unknown {
  const trimmed = cell.trim();
  if (trimmed.startsWith('[')) {
    try {
      return JSON.parse(trimmed);
    } catch {
      return { invalid: true };
    }
  }
  return cell
    .split('|')
    .map((s) => s.trim())
    .filter(Boolean);
}

async function parseCsvDataset(text: string): Promise<DatasetRow[]> {
  const records = await parseCsv(text);
  if (!records.length) return [];
  const [header, ...data] = records;
  const columns = header.fields.map((h) => h.trim().toLowerCase());
  const idColumn = columns.indexOf('id');
  const rows: DatasetRow[] = [];
  for (const [index, rec] of data.entries()) rows.push(await csvRow(rec, index, columns, idColumn));
  return rows;
}

async function csvRow(rec: CsvRecord, index: number, columns: string[], idColumn: number): Promise<DatasetRow> {
  const id = idColumn >= 0 && rec.fields[idColumn] ? rec.fields[idColumn] : undefined;
  return withHash({ row: index + 1, line: rec.line, ...(id !== undefined ? { id } : {}), ...(await csvFields(rec, columns)) }, JSON.stringify(rec.fields));
}

async function csvFields(rec: CsvRecord, columns: string[]): Promise<{ input?: RunInput; id?: string; error?: string }> {
  if (rec.error) return { error: `malformed CSV: ${rec.error}` };
  if (rec.fields.length !== columns.length) return { error: `has ${rec.fields.length} fields; the header has ${columns.length}` };
  const raw: Record<string, unknown> = {};
  for (let c = 0; c < columns.length; c++) {
    const cell = rec.fields[c];
    if (cell === '') continue;
    if (ARRAY_COLUMNS.has(columns[c])) {
      const arr = cellToArray(cell);
      if (!Array.isArray(arr)) return { error: `"${columns[c]}" is neither a JSON array nor |-separated text` };
      raw[columns[c]] = arr;
    } else if (JSON_COLUMNS.has(columns[c])) {
      try {
        raw[columns[c]] = JSON.parse(cell);
      } catch {
        return { error: `"${columns[c]}" is not valid JSON` };
      }
    } else raw[columns[c]] = cell;
  }
  return toRunInput(raw);
}
