// Recording batch rows (Store.recordBatchRow) on PostgreSQL, one row alone or a group of rows in the
// statements of batch-writes.ts (with the logs written at the same time, issue 33). Either way one
// autocommitted statement inserts the rows, moves their runs' counters (done, failed, cost_usd) and
// adds their spend to their budget counters, each only for the rows it inserted: a row recorded
// before (same batch and position) changes nothing and answers false.
import type { BatchRowRecord } from '../batch-types.ts';
import type { RowSpend } from '../budget-types.ts';
import { budgetKeyParams } from './budgets.ts';
import { json } from './codecs.ts';
import type { PgConnection } from './connection.ts';

export interface RowWrite {
  batchId: string;
  row: BatchRowRecord;
  spend?: RowSpend;
}

/**
 * A row's spend on its budget counter, in the statement that records the row (parameters $7-$11:
 * the counter's key and the USD): added only when the row was inserted, as pgSettleBudget adds it.
 */
const SPEND_WITH_ROW = `INSERT INTO budget_counters AS c (org_id, scope, scope_id, period, spent_usd)
         SELECT $7, $8, $9, $10, $11::numeric FROM inserted
         ON CONFLICT (org_id, scope, scope_id, period) DO UPDATE SET spent_usd = c.spent_usd + EXCLUDED.spent_usd`;

const counted = (w: RowWrite) => (w.spend && w.spend.usd !== 0 ? w.spend : null);

/** One row alone (the statement every row used before grouping). */
export async function recordOne(db: PgConnection, w: RowWrite): Promise<boolean> {
  const spend = counted(w);
  const { rows } = await db.write(
    `WITH inserted AS (
       INSERT INTO batch_rows (batch_id, position, record) VALUES ($1, $2, $3) ON CONFLICT (batch_id, position) DO NOTHING RETURNING position
     ), counted AS (
       UPDATE batch_executions SET done = done + $4, failed = failed + $5,
         cost_usd = CASE WHEN cost_usd IS NULL OR $6::double precision IS NULL THEN NULL ELSE round((cost_usd + $6::double precision)::numeric, 9)::double precision END
       WHERE id = $1 AND EXISTS (SELECT 1 FROM inserted)
     )${spend ? `, spent AS (${SPEND_WITH_ROW})` : ''}
     SELECT count(*)::int AS n FROM inserted`,
    [
      w.batchId,
      w.row.position,
      json(w.row),
      w.row.score !== null ? 1 : 0,
      w.row.score !== null ? 0 : 1,
      w.row.cost_usd,
      ...(spend ? [...budgetKeyParams(spend.key), spend.usd.toFixed(9)] : []),
    ],
  );
  return rows[0].n > 0;
}

const PER_ROW = 11;
const ROW_TYPES = ['text', 'int', 'json', 'int', 'int', 'double precision', 'text', 'text', 'text', 'text', 'numeric'];

/**
 * Several rows in one statement: the CTEs that insert them (`inserted` answers each new row's batch
 * and position) and move their counters, with their parameters numbered from `offset` + 1, so that
 * a statement of batch writes (batch-writes.ts) can carry them beside its logs. The counters move by
 * each run's sums over the rows inserted (a run's cost stays unknown, null, once any of its rows'
 * is); the budget counters by each key's sum, so no counter is updated twice by one statement. The
 * group never holds one (batch, position) twice.
 */
export function rowsCtes(writes: RowWrite[], offset: number): { sql: string; params: unknown[] } {
  const values = writes.map((_, r) => `(${ROW_TYPES.map((t, c) => `$${offset + r * PER_ROW + c + 1}::${t}`).join(', ')})`).join(', ');
  const params = writes.flatMap((w) => {
    const spend = counted(w);
    const score = w.row.score !== null;
    return [
      w.batchId,
      w.row.position,
      json(w.row),
      score ? 1 : 0,
      score ? 0 : 1,
      w.row.cost_usd,
      ...(spend ? [...budgetKeyParams(spend.key), spend.usd.toFixed(9)] : [null, null, null, null, null]),
    ];
  });
  const sql = `input (batch_id, position, record, done, failed, cost, s_org, s_scope, s_scope_id, s_period, s_usd) AS (VALUES ${values}
     ), inserted AS (
       INSERT INTO batch_rows (batch_id, position, record) SELECT batch_id, position, record FROM input
       ON CONFLICT (batch_id, position) DO NOTHING RETURNING batch_id, position
     ), fresh AS (
       SELECT i.* FROM input i JOIN inserted USING (batch_id, position)
     ), counted AS (
       UPDATE batch_executions b SET done = b.done + s.done, failed = b.failed + s.failed,
         cost_usd = CASE WHEN b.cost_usd IS NULL OR s.cost IS NULL THEN NULL ELSE round((b.cost_usd + s.cost)::numeric, 9)::double precision END
       FROM (SELECT batch_id, sum(done) AS done, sum(failed) AS failed, CASE WHEN bool_and(cost IS NOT NULL) THEN sum(cost) END AS cost FROM fresh GROUP BY batch_id) s
       WHERE b.id = s.batch_id
     ), spent AS (
       INSERT INTO budget_counters AS c (org_id, scope, scope_id, period, spent_usd)
       SELECT s_org, s_scope, s_scope_id, s_period, sum(s_usd) FROM fresh WHERE s_org IS NOT NULL GROUP BY s_org, s_scope, s_scope_id, s_period
       ON CONFLICT (org_id, scope, scope_id, period) DO UPDATE SET spent_usd = c.spent_usd + EXCLUDED.spent_usd
     )`;
  return { sql, params };
}

/** Whether each write's row was inserted, from the (batch_id, position) pairs a statement answered. */
export function rowOutcomes(writes: RowWrite[], inserted: Array<{ batch_id: string; position: number }>): boolean[] {
  const keys = new Set(inserted.map((r) => rowKey(r.batch_id, Number(r.position))));
  return writes.map((w) => keys.has(rowKey(w.batchId, w.row.position)));
}

/** A row's key: one write of a (batch, position) per statement (GroupCommit's key). */
export const rowKey = (batchId: string, position: number) => `${batchId}\u0000${position}`;
