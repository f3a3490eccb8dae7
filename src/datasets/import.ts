// Streamed import of dataset items: JSONL or CSV, any size, in bounded memory. The body is split
// into lines (or CSV records) as it arrives, each checked on its own, and stored in batches; the
// pipeline's backpressure holds the socket while a batch is written, so nothing buffers the file.
import { Transform, Writable, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parse as parseCsv } from 'csv-parse';
import { z } from 'zod';
import type { Config } from '../config.ts';
import { fromZodError, TribunalError, validationError } from '../errors.ts';
import { DatasetItemInput, DatasetItemInputShape } from '../schemas.ts';
import { itemShapeProblem } from './item-shape.ts';
import type { Store } from '../store/types.ts';
import { enforceLimits } from '../limits.ts';
import { newItem } from './datasets.ts';

/** One line of the file: what it holds, or why it cannot be an item. */
type Entry = { line: number; value?: unknown; error?: string };

export interface ImportResult {
  created: number;
  /** The first MAX_LISTED skipped lines; skipped_count counts them all. */
  skipped: Array<{ line: number; error: string }>;
  skipped_count: number;
}

const BATCH = 200;
const MAX_LISTED = 1000;

/** Lines handled between two turns of the event loop (h-harden: an import never holds /healthz). */
const LINES_PER_TURN = 256;
/** How much of one skipped line's reason is kept in the report. */
const MAX_REASON = 200;

/** JSON.parse without the cost of a stack trace on failure: a bad line is common and is only reported. */
function parseLine(text: string): Entry['value'] | { error: string } {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return { value: JSON.parse(text) };
  } catch (err) {
    return { error: `not valid JSON: ${(err as Error).message}`.slice(0, MAX_REASON) };
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** Splits bytes into JSONL entries; a line over `maxLineBytes` is skipped without being kept. */
export function jsonlLines(maxLineBytes: number): Transform {
  let parts: Buffer[] = [];
  let held = 0;
  let line = 0;
  let overlong = false;
  const emit = (push: (e: Entry) => void) => {
    line++;
    if (overlong) push({ line, error: `the line is over ${maxLineBytes} bytes (TRIBUNAL_MAX_BODY)` });
    else {
      const text = (parts.length === 1 ? parts[0]! : Buffer.concat(parts)).toString('utf8').trim();
      if (text) {
        const parsed = parseLine(text) as { value?: unknown; error?: string };
        push(parsed.error !== undefined ? { line, error: parsed.error } : { line, value: parsed.value });
      }
    }
    parts = [];
    held = 0;
    overlong = false;
  };
  return new Transform({
    readableObjectMode: true,
    transform(chunk: Buffer, _enc, done) {
      let start = 0;
      // A chunk's lines in slices, the event loop served between them (other requests, /healthz).
      const slice = () => {
        let n = 0;
        for (let nl = chunk.indexOf(10, start); nl >= 0; nl = chunk.indexOf(10, start)) {
          if (!overlong) parts.push(chunk.subarray(start, nl));
          if (held + nl - start > maxLineBytes) overlong = true;
          emit((e) => this.push(e));
          start = nl + 1;
          if (++n >= LINES_PER_TURN) return void setImmediate(slice);
        }
        const rest = chunk.subarray(start);
        held += rest.length;
        if (held > maxLineBytes) (overlong = true), (parts = []);
        else if (rest.length) parts.push(Buffer.from(rest));
        setImmediate(done);
      };
      slice();
    },
    flush(done) {
      if (held > 0 || overlong) emit((e) => this.push(e));
      done();
    },
  });
}

const LIST_COLUMNS = new Set(['contexts', 'tags']);
const JSON_COLUMNS = new Set(['metadata', 'expected_scores', 'turns']);
const CSV_COLUMNS = new Set([...Object.keys(DatasetItemInputShape), 'id', 'created_at']);

/** A CSV cell as the item field it fills: lists as a JSON array or `|`-separated, objects as JSON. */
function csvValue(column: string, cell: string): unknown {
  if (LIST_COLUMNS.has(column)) return cell.trimStart().startsWith('[') ? JSON.parse(cell) : cell.split('|').filter((part) => part !== '');
  if (JSON_COLUMNS.has(column)) return JSON.parse(cell);
  return cell;
}

/** Parses CSV records (header row first) into entries; a header naming an unknown column refuses the file. */
export function csvRecords(maxRecordChars: number): Transform[] {
  const parser = parseCsv({
    columns: (header: string[]) => {
      const unknown = header.filter((h) => !CSV_COLUMNS.has(h));
      if (unknown.length || !(header.includes('response') || header.includes('turns'))) {
        throw validationError(
          `The CSV header ${unknown.length ? `names unknown columns ${unknown.map((c) => JSON.stringify(c)).join(', ')}` : 'has neither a "response" nor a "turns" column'}; the columns are ${[...CSV_COLUMNS].join(', ')}.`,
          [{ field: '(header)', message: unknown.length ? 'unknown columns' : 'response (or turns) column missing' }],
        );
      }
      return header;
    },
    bom: true,
    skip_empty_lines: true,
    skip_records_with_error: true,
    max_record_size: maxRecordChars,
    info: true,
  });
  const toEntries = new Transform({
    objectMode: true,
    transform(entry: { record: Record<string, string>; info: { lines: number } } | Entry, _enc, done) {
      // A record the parser skipped arrives here as an entry already (h-harden: a skipped line, not a 500).
      if (!('record' in entry)) return done(null, entry);
      const { record, info } = entry;
      const value: Record<string, unknown> = {};
      try {
        for (const [column, cell] of Object.entries(record)) if (cell !== '') value[column] = csvValue(column, cell);
        done(null, { line: info.lines, value });
      } catch (err) {
        done(null, { line: info.lines, error: `a cell is not valid JSON: ${(err as Error).message}`.slice(0, MAX_REASON) });
      }
    },
  });
  parser.on('skip', (err: Error & { lines?: number }) => {
    toEntries.write({ line: err.lines ?? 0, error: err.message.slice(0, MAX_REASON) } satisfies Entry);
  });
  return [parser, toEntries];
}

// Made once: zod compiles a schema on first use, so a schema made per line costs memory per line.
const StrictItem = DatasetItemInput.strict();

/** Exported items (with id, created_at and nulls) import again: those are dropped, new ids are made. */
function asItemInput(value: unknown, limits: Config['limits']): DatasetItemInput {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw validationError('expected a JSON object (one item per line)');
  const fields = Object.fromEntries(Object.entries(value).filter(([k, v]) => v !== null && k !== 'id' && k !== 'created_at'));
  const parsed = StrictItem.safeParse(fields);
  if (!parsed.success) throw fromZodError(parsed.error, 'item');
  const problem = itemShapeProblem(parsed.data);
  if (problem) throw validationError(`${problem.field}: ${problem.message}`, [problem]);
  enforceLimits(parsed.data, limits);
  return parsed.data;
}

const describe = (err: unknown) => (err instanceof TribunalError || err instanceof z.ZodError ? err.message : String((err as Error)?.message ?? err));

/** Reads `body` through `parsers`, storing valid items in batches; answers what was created and skipped. */
export async function importItems(
  store: Store,
  datasetId: string,
  body: Readable,
  parsers: Transform[],
  limits: Config['limits'],
  quota?: { max: number; error: (created: number) => Error },
): Promise<ImportResult> {
  const result: ImportResult = { created: 0, skipped: [], skipped_count: 0 };
  let batch: ReturnType<typeof newItem>[] = [];
  let written = 0;
  const flush = async () => {
    if (!batch.length) return;
    const items = batch;
    batch = [];
    if (!(await store.addDatasetItems(datasetId, items)))
      throw new TribunalError('not_found', 404, `Dataset ${JSON.stringify(datasetId)} was deleted during the import; ${result.created} items had been added.`);
    result.created += items.length;
  };
  const sink = new Writable({
    objectMode: true,
    write(entry: Entry, _enc, done) {
      const skip = (error: string) => {
        result.skipped_count++;
        if (result.skipped.length < MAX_LISTED) result.skipped.push({ line: entry.line, error: error.slice(0, MAX_REASON) });
      };
      if (entry.error !== undefined) skip(entry.error);
      else if (quota && result.created + batch.length >= quota.max) {
        // The organization's item quota is reached: what was read so far is stored, the rest is not read.
        return void flush().then(() => done(quota.error(result.created)), done);
      } else {
        try {
          batch.push(newItem(asItemInput(entry.value, limits), new Date().toISOString()));
        } catch (err) {
          skip(describe(err));
        }
      }
      if (batch.length >= BATCH) flush().then(() => done(), done);
      else if (++written % LINES_PER_TURN === 0) setImmediate(done);
      else done();
    },
    final(done) {
      flush().then(() => done(), done);
    },
  });
  await pipeline([body, ...parsers, sink]);
  return result;
}
