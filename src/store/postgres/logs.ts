// The PostgreSQL store's execution logs (filter columns beside the record; see codecs.ts) and the
// result cache (migrations/010_result_cache.sql), with the bulk log import `tribunal migrate` uses.
import type { EvaluatorResult } from '../../schemas.ts';
import type { ExecutionLogRecord, LogFilter, LogStore, LogValueField, ResultCacheStore, ValueQuery } from '../parts/logs.ts';
import type { Page, PageQuery } from '../parts/page.ts';
import { json, LOG_INSERT_COLUMNS, logFromRow, logPageQuery, logValues, logValuesQuery, placeholders, toPage } from './codecs.ts';
import type { PgConnection } from './connection.ts';
import type { GroupOutcome } from './group-commit.ts';
import { StoreConflictError } from '../types.ts';

const logTaken = (id: string) => new StoreConflictError({ kind: 'id_taken', resource: 'execution_log', id });

/** One log alone. */
export async function appendOne(db: PgConnection, log: ExecutionLogRecord): Promise<void> {
  await db.write(`INSERT INTO execution_logs (${LOG_INSERT_COLUMNS.join(', ')}) VALUES (${placeholders(LOG_INSERT_COLUMNS.length)})`, logValues(log), () => ({
    kind: 'id_taken',
    resource: 'execution_log',
    id: log.id,
  }));
}

/**
 * Several logs in one statement, parameters numbered from `offset` + 1: a log whose id is taken
 * (before, or by another writer meanwhile) is not inserted and its id not answered.
 */
export function logsInsert(logs: ExecutionLogRecord[], offset: number): { sql: string; params: unknown[] } {
  const perRow = LOG_INSERT_COLUMNS.length;
  const rows = logs.map((_, r) => `(${placeholders(perRow, offset + r * perRow)})`).join(', ');
  return { sql: `INSERT INTO execution_logs (${LOG_INSERT_COLUMNS.join(', ')}) VALUES ${rows} ON CONFLICT (id) DO NOTHING RETURNING id`, params: logs.flatMap(logValues) };
}

/** Each log's outcome from the ids its statement inserted: a log not inserted is refused alone (its id is taken). */
export const logOutcomes = (logs: ExecutionLogRecord[], inserted: Set<string>): GroupOutcome<void> =>
  logs.map((l) => (inserted.has(l.id) ? { ok: undefined } : { error: logTaken(l.id) }));

/**
 * The store's logs; `append` writes one (batch-writes.ts: written with the batch rows finishing at
 * the same time, and each answered only when its statement has committed).
 */
export const pgLogs = (db: PgConnection, append: (log: ExecutionLogRecord) => Promise<void>): LogStore => {
  return {
    appendExecutionLog: append,
    getExecutionLog(id: string) {
      return db.one('SELECT * FROM execution_logs WHERE id = $1', [id], logFromRow);
    },
    async listExecutionLogs(filter: LogFilter, page: PageQuery): Promise<Page<ExecutionLogRecord>> {
      const { sql, params } = logPageQuery(filter, page);
      return toPage((await db.query(sql, params)).rows, page, logFromRow);
    },
    async listLogValues(orgId: string, field: LogValueField, query: ValueQuery): Promise<{ values: string[]; more: boolean }> {
      const { sql, params } = logValuesQuery(orgId, field, query);
      const values = (await db.query(sql, params)).rows.map((r) => r.value as string);
      return { values: values.slice(0, query.limit), more: values.length > query.limit };
    },
  };
};

/** A hit takes a new use number; a put evicts every entry maxEntries or more numbers below its own, in the same statement. */
export const pgResultCache = (db: PgConnection): ResultCacheStore => ({
  getCachedResult(orgId: string, key: string) {
    return db.one("UPDATE result_cache SET used = nextval('result_cache_use') WHERE org_id = $1 AND key = $2 RETURNING result", [orgId, key], (r) => r.result as EvaluatorResult);
  },
  async putCachedResult(orgId: string, key: string, result: EvaluatorResult, maxEntries: number) {
    await db.write(
      `WITH put AS (
         INSERT INTO result_cache (org_id, key, used, result) VALUES ($1, $2, nextval('result_cache_use'), $3)
         ON CONFLICT (org_id, key) DO UPDATE SET used = EXCLUDED.used, result = EXCLUDED.result, created_at = now()
         RETURNING used)
       DELETE FROM result_cache WHERE used <= (SELECT used FROM put) - $4 AND NOT (org_id = $1 AND key = $2)`,
      [orgId, key, json(result), Math.max(0, maxEntries)],
    );
  },
});

/** Several logs by id (those that exist), for verification after a bulk import. */
export async function getExecutionLogs(db: PgConnection, ids: string[]): Promise<ExecutionLogRecord[]> {
  const { rows } = await db.query('SELECT * FROM execution_logs WHERE id = ANY($1::text[])', [ids]);
  return rows.map(logFromRow);
}

/** Inserts logs in multi-row statements (logsInsert), skipping ids already present; answers how many were new. */
export async function importExecutionLogs(db: PgConnection, logs: ExecutionLogRecord[]): Promise<number> {
  const batch = Math.floor(60_000 / LOG_INSERT_COLUMNS.length);
  let inserted = 0;
  for (let i = 0; i < logs.length; i += batch) {
    const { sql, params } = logsInsert(logs.slice(i, i + batch), 0);
    inserted += (await db.write(sql, params)).rowCount ?? 0;
  }
  return inserted;
}
