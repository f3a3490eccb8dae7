// issue 26 item 7: a batch run is one point on the judge's "Score over time" chart (per evaluator,
// the mean of its rows), beside the interactive runs. The web module itself, imported as the browser does.
import assert from 'node:assert/strict';
import { test } from 'node:test';

type Log = { id: string; created_at: string; batch_execution_id?: string; evaluator_results: { evaluator_id: string; evaluator_name: string; score: number | null }[] };
type Run = { id: string; created_at: string; href: string; batch: { id: string; rows: number } | null; evaluator_results: { evaluator_id: string; score: number }[] };

const log = (id: string, minute: number, scores: Record<string, number | null>, batch?: string): Log => ({
  id,
  created_at: `2026-01-01T00:${String(minute).padStart(2, '0')}:00.000Z`,
  ...(batch ? { batch_execution_id: batch } : {}),
  evaluator_results: Object.entries(scores).map(([evaluator_id, score]) => ({ evaluator_id, evaluator_name: evaluator_id.toUpperCase(), score })),
});

test('chartRuns: each batch run is one run carrying its mean per evaluator; interactive runs stay apart', async () => {
  const path: string = '../src/web/public/lib/chart-runs.js';
  const { chartRuns } = (await import(path)) as { chartRuns: (logs: Log[]) => Run[] };
  const logs: Log[] = [log('log_a', 1, { e1: 0.9 })];
  // 200 rows of one batch (as the judge page's last 200 logs can be), scores 0 and 1 alternating.
  for (let i = 0; i < 200; i++) logs.push(log(`log_b${i}`, 10 + (i % 40), { e1: i % 2, e2: 0.5 }, 'bat_1'));
  logs.push(log('log_c', 55, { e1: 0.2 }), log('log_d', 56, { e1: null }));
  const runs = chartRuns(logs.reverse());
  assert.deepEqual(
    runs.map((r) => r.id),
    ['log_a', 'bat_1', 'log_c'],
  );
  const batch = runs[1];
  assert.deepEqual(batch.batch, { id: 'bat_1', rows: 200 });
  assert.equal(batch.href, '/app/batches/bat_1');
  assert.equal(batch.created_at, '2026-01-01T00:49:00.000Z');
  assert.deepEqual(
    batch.evaluator_results.map((r) => [r.evaluator_id, r.score]),
    [
      ['e1', 0.5],
      ['e2', 0.5],
    ],
  );
  assert.equal(runs[0].href, '/app/logs/log_a');
  assert.equal(runs[0].batch, null);
});

test('chartRuns: batch runs read apart (from their summaries) are one point each, interactive logs keep their own points', async () => {
  const path: string = '../src/web/public/lib/chart-runs.js';
  const { chartRuns } = (await import(path)) as { chartRuns: (logs: Log[], batches: unknown[]) => Run[] };
  const batch = (id: string, minute: number, means: Record<string, number | null>) => ({
    id,
    created_at: `2026-01-01T00:${String(minute).padStart(2, '0')}:00.000Z`,
    started_at: null,
    finished_at: `2026-01-01T00:${String(minute + 1).padStart(2, '0')}:00.000Z`,
    done: 5000,
    summary: Object.entries(means).map(([evaluator_id, mean]) => ({ evaluator_id, evaluator_name: evaluator_id.toUpperCase(), mean })),
  });
  // A batch of 5,000 rows and one whose evaluators all failed (no mean: not drawn).
  const runs = chartRuns([log('log_a', 1, { e1: 0.9 }), log('log_c', 30, { e1: 0.2 })], [batch('bat_big', 10, { e1: 0.75, e2: null }), batch('bat_failed', 20, { e1: null })]);
  assert.deepEqual(
    runs.map((r) => r.id),
    ['log_a', 'bat_big', 'log_c'],
  );
  assert.deepEqual(runs[1].batch, { id: 'bat_big', rows: 5000 });
  assert.equal(runs[1].created_at, '2026-01-01T00:11:00.000Z', 'placed when the batch ended');
  assert.deepEqual(
    runs[1].evaluator_results.map((r) => [r.evaluator_id, r.score]),
    [['e1', 0.75]],
  );
});
