// The per-evaluator summary of a batch run, from its rows (read a page at a time).
import type { BatchEvaluatorSummary } from '../schemas/batches.ts';
import type { BatchExecutionRecord, Store } from '../store/types.ts';

const round4 = (x: number) => Math.round(x * 10_000) / 10_000;

export async function batchSummary(store: Store, batch: Pick<BatchExecutionRecord, 'id'>): Promise<BatchEvaluatorSummary[]> {
  const acc = new Map<string, { name: string; n: number; sum: number; min: number; max: number; errors: number }>();
  let after: number | undefined;
  for (;;) {
    const page = await store.listBatchRowScores(batch.id, { limit: 1000, after });
    for (const row of page.items) {
      for (const r of row.evaluator_results) {
        let a = acc.get(r.evaluator_id);
        if (!a) acc.set(r.evaluator_id, (a = { name: r.evaluator_name, n: 0, sum: 0, min: Infinity, max: -Infinity, errors: 0 }));
        if (r.score !== null) {
          a.n++;
          a.sum += r.score;
          a.min = Math.min(a.min, r.score);
          a.max = Math.max(a.max, r.score);
        } else if (!r.not_applicable) a.errors++;
      }
    }
    if (page.last === undefined) break;
    after = page.last;
  }
  return [...acc].map(([evaluator_id, a]) => ({
    evaluator_id,
    evaluator_name: a.name,
    n: a.n,
    mean: a.n ? round4(a.sum / a.n) : null,
    min: a.n ? a.min : null,
    max: a.n ? a.max : null,
    errors: a.errors,
  }));
}
