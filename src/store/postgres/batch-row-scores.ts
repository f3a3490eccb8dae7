// The scores of batch rows already read, kept in this process (Store.listBatchRowScores on
// PostgreSQL): a running run's status is read every few hundred ms, and each read summarizes every
// row recorded so far (batch/summary.ts), so without this each poll parsed all the rows again: the
// JSON of n rows, n times over a run. A recorded row never changes (it is inserted once, and only
// deleted with its run), so a row read once need not be sent or parsed again: a page still comes
// from the table, in one statement, but the record of a row at or below the highest position kept
// is sent as NULL and taken from here. A row recorded late below that position (rows finish out of
// order) is not kept yet: it is read by a second, small statement. Bounded: at most MAX_ROWS rows,
// the runs read least recently dropped first.
import { rowScores, type BatchRowQuery, type BatchRowRecord, type BatchRowScores } from '../batch-types.ts';
import type { PgConnection } from './connection.ts';

/** About 250 bytes a row of three evaluators: some 12 MB at most. */
export const MAX_ROWS = 50_000;

interface Kept {
  /** The highest position kept: rows at or below it come without their record, from `rows` (or, if not kept, read again). */
  upTo: number;
  rows: Map<number, BatchRowScores>;
}

export class BatchRowScoresCache {
  /** In the order of their last read (a Map keeps insertion order): the first is dropped first. */
  private readonly runs = new Map<string, Kept>();
  private total = 0;

  constructor(private readonly maxRows = MAX_ROWS) {}

  async page(db: PgConnection, batchId: string, query: BatchRowQuery): Promise<{ items: BatchRowScores[]; last?: number }> {
    let kept = this.runs.get(batchId);
    if (kept) this.runs.delete(batchId);
    else kept = { upTo: -1, rows: new Map() };
    this.runs.set(batchId, kept);
    const { rows } = await db.query(
      'SELECT position, CASE WHEN position <= $4 THEN NULL ELSE record END AS record FROM batch_rows WHERE batch_id = $1 AND position > $2 ORDER BY position LIMIT $3',
      [batchId, query.after ?? -1, query.limit + 1, kept.upTo],
    );
    const page = rows.slice(0, query.limit);
    const items: Array<BatchRowScores | undefined> = page.map((r) => (r.record === null ? kept.rows.get(r.position) : rowScores(r.record as BatchRowRecord)));
    const missing = page.filter((_, i) => items[i] === undefined).map((r) => r.position as number);
    if (missing.length) {
      const late = await db.query('SELECT position, record FROM batch_rows WHERE batch_id = $1 AND position = ANY($2::int[])', [batchId, missing]);
      const byPosition = new Map(late.rows.map((r) => [r.position as number, rowScores(r.record as BatchRowRecord)]));
      page.forEach((r, i) => {
        items[i] ??= byPosition.get(r.position);
      });
    }
    const found = items.filter((x): x is BatchRowScores => x !== undefined);
    this.keep(batchId, kept, found);
    return { items: found, last: rows.length > query.limit ? Number(page[page.length - 1].position) : undefined };
  }

  /**
   * Keeps the rows read. They are handed as they are to every later reader, who only reads them
   * (the summary, the compare, calibration, a chunk's recorded positions); not frozen: freezing
   * 20,000 rows cost a compare's first call about 20 ms, and reading them after was slower too.
   */
  private keep(batchId: string, kept: Kept, items: BatchRowScores[]): void {
    let added = 0;
    for (const row of items) if (!kept.rows.has(row.position)) added++;
    // Room is made by dropping the runs read least recently; a run that alone would pass the bound is not kept.
    for (const [id, other] of this.runs) {
      if (this.total + added <= this.maxRows) break;
      if (id === batchId) continue;
      this.runs.delete(id);
      this.total -= other.rows.size;
    }
    if (this.total + added > this.maxRows) {
      this.runs.delete(batchId);
      this.total -= kept.rows.size;
      return;
    }
    for (const row of items) {
      if (kept.rows.has(row.position)) continue;
      kept.rows.set(row.position, row);
      if (row.position > kept.upTo) kept.upTo = row.position;
    }
    this.total += added;
  }
}
