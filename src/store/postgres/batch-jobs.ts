// The pg-boss queue of batch work (src/batch/pg-jobs.ts) lives in a schema beside the store's;
// its jobs hold rows' text. Here: where that schema is, and the removal of one organization's jobs
// when the organization is purged (h-harden, issue 24 item 9), so no item text outlives the purge.
import type { Queryable } from './connection.ts';

/** The queue's schema for the store's schema: `tribunal_queue` beside `public`, else `<schema>_queue`. */
export const queueSchemaFor = (storeSchema: string): string => (storeSchema === 'public' ? 'tribunal_queue' : `${storeSchema}_queue`);

/**
 * Deletes the queue's jobs (waiting, running, finished and archived) of `orgId`'s batch runs. Runs
 * inside the purge's transaction, before batch_executions loses the org's runs. A store whose queue
 * was never started has no such tables: nothing to do.
 */
export async function purgeOrgBatchJobs(c: Queryable, orgId: string): Promise<void> {
  const { rows } = await c.query('SELECT current_schema() AS s');
  const schema = queueSchemaFor(rows[0].s);
  for (const table of ['job', 'archive']) {
    const { rows: exists } = await c.query('SELECT to_regclass($1) AS t', [`${schema}.${table}`]);
    if (!exists[0].t) continue;
    await c.query(`DELETE FROM ${schema}.${table} WHERE data->>'batch_id' IN (SELECT id FROM batch_executions WHERE org_id = $1)`, [orgId]);
  }
}
