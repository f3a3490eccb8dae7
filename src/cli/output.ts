// Human output: aligned tables and short key/value blocks; --json prints the API's answer as is.
import fs from 'node:fs';
import { withCommandName } from '../invocation.ts';

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, roundFloats, 2)}\n`);
}

/**
 * JSON.stringify replacer that drops binary floating-point noise (0.7000000000000001 -> 0.7, a mean
 * computed here or by the server) while keeping every digit that means something (12 significant
 * digits: small costs such as 0.000012345 stay exact).
 */
export function roundFloats(_key: string, value: unknown): unknown {
  return typeof value === 'number' && Number.isFinite(value) && !Number.isInteger(value) ? Number(value.toPrecision(12)) : value;
}

/** One line of text, cut to `width` characters with an ellipsis. */
export function clip(text: string | null | undefined, width: number): string {
  const flat = (text ?? '').replace(/\s+/g, ' ').trim();
  return flat.length > width ? `${flat.slice(0, Math.max(0, width - 1))}…` : flat;
}

export function table(headers: string[], rows: Array<Array<string | number | null | undefined>>, align: Array<'l' | 'r'> = []): string {
  const cells = rows.map((r) => r.map((c) => (c === null || c === undefined ? '' : String(c))));
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) =>
    r
      .map((c, i) => (align[i] === 'r' ? c.padStart(widths[i]) : i === r.length - 1 ? c : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(headers), ...cells.map(line)].join('\n');
}

export function printTable(headers: string[], rows: Array<Array<string | number | null | undefined>>, align?: Array<'l' | 'r'>): void {
  console.log(rows.length ? table(headers, rows, align) : '(none)');
}

/** `key: value` lines with the keys aligned; null/undefined values are left out. */
export function printFields(fields: Array<[string, unknown]>, opts: { wrap?: string[] } = {}): void {
  const shown = fields.filter(([, v]) => v !== undefined && v !== null && v !== '');
  const width = Math.max(...shown.map(([k]) => k.length));
  for (const [k, v] of shown) {
    const text = typeof v === 'string' ? v : Array.isArray(v) ? v.join(', ') : JSON.stringify(v);
    // Long prose (opts.wrap: those keys) wraps at the terminal's width under its own column (issue
    // 26); other values, commands to copy among them, are never cut.
    const lines = text.split('\n');
    const [first, ...more] = opts.wrap?.includes(k) ? lines.flatMap((l) => wrap(l, Math.max(20, terminalColumns() - width - 2))) : lines;
    console.log(`${`${k}:`.padEnd(width + 1)} ${first}`);
    for (const l of more) console.log(`${' '.repeat(width + 2)}${l}`);
  }
}

export const score = (s: number | null | undefined) => (typeof s === 'number' ? s.toFixed(2) : '-');
// null: the server knows no price for the model (cost unknown); undefined: no cost given at all.
export const usd = (c: number | null | undefined) => (typeof c === 'number' ? `$${c.toFixed(c < 0.01 ? 5 : 4)}` : c === null ? 'unknown' : '-');
export const day = (iso: string | null | undefined) => (iso ? iso.replace('T', ' ').slice(0, 19) : '');

/** The "next page" hint printed under a list when there is more. */
export function printNextPage(cursor: string | null | undefined, command: string): void {
  if (cursor) console.error(withCommandName(`more: ${command} --cursor ${cursor}   (or --all)`));
}

/** The terminal's width; COLUMNS, or 120, when stdout is not a terminal. */
export function terminalColumns(): number {
  if (process.stdout.isTTY && process.stdout.columns) return process.stdout.columns;
  const env = Number(process.env.COLUMNS);
  return Number.isInteger(env) && env >= 40 ? env : 120;
}

/** A line cut into lines of at most `width` characters, at spaces where it can. */
export function wrap(line: string, width: number): string[] {
  const out: string[] = [];
  let rest = line;
  while (rest.length > width) {
    const space = rest.lastIndexOf(' ', width);
    const cut = space > width / 3 ? space : width;
    out.push(rest.slice(0, cut).trimEnd());
    rest = rest.slice(cut).trimStart();
  }
  out.push(rest);
  return out;
}

const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * Writes all of `text` to `fd` synchronously. A pipe to a slow reader (`| head`, `| less`) can be
 * non-blocking and answer EAGAIN when full, or take part of a write: wait a moment and go on. A
 * closed pipe (EPIPE) is thrown for the caller to end quietly.
 */
export function writeAllSync(fd: number, text: string): void {
  let data = Buffer.from(text);
  while (data.length) {
    try {
      data = data.subarray(fs.writeSync(fd, data));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err;
      Atomics.wait(pause, 0, 0, 5);
    }
  }
}
