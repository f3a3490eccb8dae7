// The store's hottest writes on PostgreSQL, execution logs and batch rows, through one group commit
// (group-commit.ts, issue 33): a batch row's log and, once it is stored, the row are two writes, and
// the logs and rows of the rows finishing together share one statement instead of a statement of
// logs and a statement of rows. A mixed statement inserts the logs and, in the CTEs of
// batch-row-writes.ts, the rows with their counters; it is one autocommitted statement, so each
// write is answered only when all of it has committed, each with its own outcome (a taken log id is
// refused alone, a row recorded before answers false). A log and the row made from it never share a
// statement: the row is written only once its log is answered.
import type { ExecutionLogRecord } from '../parts/logs.ts';
import { recordOne, rowKey, rowOutcomes, rowsCtes, type RowWrite } from './batch-row-writes.ts';
import type { PgConnection } from './connection.ts';
import { BATCH_HOLD_MS, GroupCommit, type GroupOutcome } from './group-commit.ts';
import { appendOne, logOutcomes, logsInsert } from './logs.ts';

type Write = { log: ExecutionLogRecord } | { batchRow: RowWrite };

/** Writes per statement at most: 64 logs are 1,728 parameters, far below PostgreSQL's 65,535. */
const MAX_GROUP = 64;

async function writeMany(db: PgConnection, writes: Write[]): Promise<GroupOutcome<unknown>> {
  const logs: ExecutionLogRecord[] = [];
  const rows: RowWrite[] = [];
  for (const w of writes) {
    if ('log' in w) logs.push(w.log);
    else rows.push(w.batchRow);
  }
  const l = logs.length ? logsInsert(logs, 0) : null;
  const r = rows.length ? rowsCtes(rows, l ? l.params.length : 0) : null;
  const sql = !r
    ? l!.sql
    : !l
      ? `WITH ${r.sql} SELECT NULL::text AS id, batch_id, position FROM inserted`
      : `WITH logs AS (${l.sql}), ${r.sql} SELECT id, NULL::text AS batch_id, NULL::int AS position FROM logs UNION ALL SELECT NULL::text, batch_id, position FROM inserted`;
  const { rows: answered } = await db.write(sql, l && r ? [...l.params, ...r.params] : (l ?? r)!.params);
  const logged = new Set<string>();
  const recorded: Array<{ batch_id: string; position: number }> = [];
  for (const a of answered) {
    if (a.batch_id != null) recorded.push(a as { batch_id: string; position: number });
    else logged.add(a.id as string);
  }
  const logAnswers = logOutcomes(logs, logged);
  const rowAnswers = rowOutcomes(rows, recorded);
  let li = 0;
  let ri = 0;
  return writes.map((w) => ('log' in w ? logAnswers[li++] : { ok: rowAnswers[ri++] }));
}

export interface BatchWrites {
  appendLog(log: ExecutionLogRecord): Promise<void>;
  recordRow(w: RowWrite): Promise<boolean>;
}

/**
 * Logs and rows written while a statement of them is on its way go together. A batch run's log or
 * row may wait BATCH_HOLD_MS for others; any other log goes at once (taking the held ones with it).
 * Two statements at once: rows of one run wait on its counters' lock anyway, others do not wait
 * behind them.
 */
export function batchWrites(db: PgConnection): BatchWrites {
  const group = new GroupCommit<Write, unknown>({
    one: (w) => ('log' in w ? appendOne(db, w.log) : recordOne(db, w.batchRow)),
    many: (ws) => writeMany(db, ws),
    maxGroup: MAX_GROUP,
    maxInFlight: 2,
    key: (w) => ('log' in w ? `l${w.log.id}` : `r${rowKey(w.batchRow.batchId, w.batchRow.row.position)}`),
    holdMs: (w) => ('log' in w && !w.log.batch_execution_id ? 0 : BATCH_HOLD_MS),
  });
  return {
    appendLog: (log) => group.write({ log }) as Promise<void>,
    recordRow: (batchRow) => group.write({ batchRow }) as Promise<boolean>,
  };
}
