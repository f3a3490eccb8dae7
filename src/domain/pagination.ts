// Opaque cursors: base64url of the last item's position. Bad cursors are a 400, never a 500.
import { validationError } from '../errors.ts';
import type { Page, PageQuery } from '../store/types.ts';

export function pageQuery(input: { limit?: number; cursor?: string }, maxPageSize: number): PageQuery {
  const limit = input.limit ?? 50;
  if (limit > maxPageSize) {
    throw validationError(`limit ${limit} is over the maximum page size of ${maxPageSize}.`, [{ field: 'limit', message: `at most ${maxPageSize}` }]);
  }
  if (input.cursor === undefined || input.cursor === '') return { limit };
  try {
    const decoded = JSON.parse(Buffer.from(input.cursor, 'base64url').toString('utf8')) as unknown;
    if (
      Array.isArray(decoded) &&
      decoded.length === 2 &&
      typeof decoded[0] === 'string' &&
      typeof decoded[1] === 'string' &&
      // A cursor holds an instant the server wrote; anything else was forged or corrupted.
      isServerInstant(decoded[0]) &&
      decoded[1].length <= 200
    ) {
      return { limit, after: { created_at: decoded[0], id: decoded[1] } };
    }
  } catch {
    /* fall through */
  }
  throw validationError('cursor is not a cursor this server issued: pass `next_cursor` from the previous page unchanged.', [{ field: 'cursor', message: 'invalid cursor' }]);
}

/**
 * An instant as toISOString writes it, in years 1..9999: PostgreSQL has no year 0 and would fail
 * the query, and a day that does not exist (02-30) would be silently moved by Date.
 */
function isServerInstant(text: string): boolean {
  const match = /^(\d{4})-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z$/.exec(text);
  if (!match || Number(match[1]) < 1) return false;
  const parsed = new Date(text);
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().slice(0, 19) === text.slice(0, 19);
}

export function toPage<T, W>(page: Page<T>, toWire: (item: T) => W): { results: W[]; next_cursor: string | null } {
  return {
    results: page.items.map(toWire),
    next_cursor: page.last ? Buffer.from(JSON.stringify([page.last.created_at, page.last.id])).toString('base64url') : null,
  };
}
