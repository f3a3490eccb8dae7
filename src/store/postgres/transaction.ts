// A transaction on a pooled connection, for the rooms that keep their own tables beside the store's
// (review queues, the bulk copy of tribunal migrate): BEGIN, COMMIT, or ROLLBACK when `fn` throws.
// Only a type import of the driver, so a JSON-only install that loads those rooms never loads it.
import type pg from 'pg';

export async function inTransaction<T>(pool: pg.Pool, fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  const c = await pool.connect();
  try {
    await c.query('BEGIN');
    const out = await fn(c);
    await c.query('COMMIT');
    return out;
  } catch (err) {
    await c.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    c.release();
  }
}
