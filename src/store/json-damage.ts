// Damaged JSON-store table files beside db.json (h-harden, issue 24 item 8): datasets/datasets.json
// and batches/batches.json are treated as db.json is. Missing while the data files they describe
// are beside them, or not what Tribunal wrote: the start stops with one line saying what to do
// (never a start with every dataset or run silently gone). Garbled lines inside item and row
// files are copied to `<file>.rejected` and logged (setAside in json-files.ts).
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { DataFileError, writeFileDurably } from './json-files.ts';

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Reads a table file `{format: 1, <table>: {id: record}}` of `dir`. `isData` names the data files
 * that exist only once the table file was written (so their presence means it was lost). A fresh
 * directory (no file and no data file beside it) gets the empty table written at once, so that from then on a missing
 * file always means a lost one.
 */
export async function readTableFile<T>(dir: string, name: string, table: string, isData: (file: string) => boolean): Promise<Record<string, T>> {
  const file = path.join(dir, name);
  let text: string;
  try {
    text = await fsp.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new DataFileError(`Cannot read ${file}: ${(err as Error).message}`);
    const data = fs.readdirSync(dir).filter(isData);
    if (data.length)
      throw new DataFileError(
        `${file} is missing but ${data.length} data file(s) are beside it (${data[0]}${data.length > 1 ? ', ...' : ''}); restore ${name} from a backup (or move the directory aside to start without them). Tribunal did not start and changed nothing.`,
      );
    await writeFileDurably(file, JSON.stringify({ format: 1, [table]: {} }));
    return Object.create(null);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new DataFileError(`${file} is not valid JSON (${(err as Error).message}); restore it from a backup. Tribunal did not start and changed nothing.`);
  }
  const rows = isRecord(parsed) ? parsed[table] : undefined;
  let why: string | null = null;
  if (!isRecord(parsed)) why = 'it is not an object';
  else if (!isRecord(rows)) why = `its "${table}" is ${rows === undefined ? 'missing' : 'not an object'}`;
  else {
    const id = Object.keys(rows).find((k) => !isRecord(rows[k]));
    if (id !== undefined) why = `its "${table}"."${id}" is not a record`;
  }
  if (why) throw new DataFileError(`${file} is not a Tribunal ${table} file: ${why}; restore it from a backup. Tribunal did not start and changed nothing.`);
  return Object.assign(Object.create(null) as Record<string, T>, rows as Record<string, T>);
}
