// issue 26 item 7: the runs a score chart draws. A batch run's rows would flood the chart (200 rows of
// one batch push every interactive run out), so each batch run is one point: per evaluator, the mean
// of its rows' scores, at the time of its newest row, opening the batch page. No DOM here, so Node
// tests import it as the browser does.

/**
 * One point of the chart per evaluator: an interactive run, or a batch run's mean.
 * @typedef {{ id: string, created_at: string, href: string, batch: { id: string, rows: number } | null, evaluator_results: Array<{ evaluator_id: string, evaluator_name: string, score: number }> }} ChartRun
 */

/**
 * A finished or running batch run as one chart run, from its summary (per evaluator, the mean of its
 * rows): the judge page reads batch runs apart from interactive logs, so a batch of any size is one
 * point and never pushes interactive runs out of the page it reads.
 * @param {import('./types.js').BatchExecution} batch
 * @returns {ChartRun | null}
 */
export function batchChartRun(batch) {
  const scored = /** @type {Array<import('./types.js').BatchEvaluatorSummary & { mean: number }>} */ ((batch.summary ?? []).filter((s) => typeof s.mean === 'number'));
  if (!scored.length) return null;
  return {
    id: batch.id,
    created_at: /** @type {string} */ (batch.finished_at ?? batch.started_at ?? batch.created_at),

    href: `/app/batches/${encodeURIComponent(batch.id)}`,
    batch: { id: batch.id, rows: batch.done },
    evaluator_results: scored.map((s) => ({ evaluator_id: s.evaluator_id, evaluator_name: s.evaluator_name, score: s.mean })),
  };
}

/**
 * logs: execution logs (any order). Returns runs oldest to newest, each
 * { id, created_at, href, batch: null | { id, rows }, evaluator_results: [{ evaluator_id, evaluator_name, score }] },
 * keeping only runs with at least one numeric score.
 * @param {import('./types.js').ExecutionLog[]} logs
 * @param {import('./types.js').BatchExecution[]} [batchRuns]
 * @returns {ChartRun[]}
 */
export function chartRuns(logs, batchRuns = []) {
  const runs = /** @type {ChartRun[]} */ (batchRuns.map(batchChartRun).filter(Boolean));
  /** @typedef {{ evaluator_id: string, evaluator_name: string, total: number, n: number }} ScoreSum */
  // A batch run's point while its rows are summed; evaluator_results is written from sums at the end.
  /** @typedef {ChartRun & { batch: { id: string, rows: number }, sums: Map<string, ScoreSum> }} BatchPoint */
  /** @type {Map<string, BatchPoint>} */
  const batches = new Map();
  for (const log of logs) {
    const scored = /** @type {ChartRun['evaluator_results']} */ (log.evaluator_results.filter((r) => typeof r.score === 'number'));

    if (!scored.length) continue;
    const batchId = log.batch_execution_id;
    if (!batchId) {
      runs.push({ id: log.id, created_at: log.created_at, href: `/app/logs/${encodeURIComponent(log.id)}`, batch: null, evaluator_results: scored });
      continue;
    }
    let b = batches.get(batchId);
    if (!b) {
      b = /** @type {BatchPoint} */ ({
        id: batchId,
        created_at: log.created_at,
        href: `/app/batches/${encodeURIComponent(batchId)}`,
        batch: { id: batchId, rows: 0 },
        sums: new Map(),
      });
      batches.set(batchId, b);
      runs.push(b);
    }
    b.batch.rows++;
    if (log.created_at > b.created_at) b.created_at = log.created_at;
    for (const r of scored) {
      const sum = b.sums.get(r.evaluator_id) ?? { evaluator_id: r.evaluator_id, evaluator_name: r.evaluator_name, total: 0, n: 0 };
      sum.total += r.score;
      sum.n++;
      b.sums.set(r.evaluator_id, sum);
    }
  }
  for (const b of batches.values()) {
    b.evaluator_results = [...b.sums.values()].map((s) => ({ evaluator_id: s.evaluator_id, evaluator_name: s.evaluator_name, score: s.total / s.n }));
    delete (/** @type {{ sums?: unknown }} */ (b).sums);
  }
  return runs.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
}
