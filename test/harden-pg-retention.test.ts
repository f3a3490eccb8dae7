// Issue 24, item 9 (h-harden): on PostgreSQL, finished pg-boss jobs (which hold the rows' item text)
// are archived and deleted after TRIBUNAL_BATCH_JOB_RETENTION instead of pg-boss's default of about
// 7 days, beyond a demo organization's purge. Runs only with TRIBUNAL_TEST_STORE=postgres.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { test } from 'node:test';
import { evaluatorBody, startScoringRig } from './helpers/execute.ts';

test('finished batch jobs holding item text are deleted after the retention', { skip: process.env.TRIBUNAL_TEST_STORE !== 'postgres' }, async () => {
  const rig = await startScoringRig({ TRIBUNAL_BATCH_LEASE: '2s', TRIBUNAL_BATCH_JOB_RETENTION: '2s', TRIBUNAL_BATCH_CHUNK: '2' });
  try {
    const marker = `marker-${randomBytes(6).toString('hex')}`;
    const ev = await rig.createEvaluator(evaluatorBody());
    const judge = await rig.createJudge({ name: 'retention judge', intent: 'grade', evaluator_ids: [ev.id] });
    const started = await rig.post(`/v1/judges/${judge.id}/batch-execute/`, { items: [1, 2, 3].map((i) => ({ request: `q ${i}`, response: `${marker} ${i}` })) });
    assert.equal(started.status, 202, JSON.stringify(started.body));
    const id = started.body.batch_execution_id;
    for (const deadline = Date.now() + 30_000; ; ) {
      const b = await rig.get(`/v1/judges/batch-executions/${id}/`);
      if (b.body.status === 'completed') break;
      if (Date.now() > deadline) throw new Error(`still ${JSON.stringify(b.body)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const pool = (rig.server.store as unknown as { pool: pg.Pool }).pool;
    const schema = (await pool.query<{ s: string }>('SELECT current_schema() AS s')).rows[0]!.s;
    const queue = schema === 'public' ? 'tribunal_queue' : `${schema}_queue`;
    const holding = async () => {
      const { rows } = await pool.query<{ n: string }>(
        `SELECT (SELECT count(*) FROM "${queue}".job WHERE data::text LIKE $1) + (SELECT count(*) FROM "${queue}".archive WHERE data::text LIKE $1) AS n`,
        [`%${marker}%`],
      );
      return Number(rows[0]!.n);
    };
    assert.ok((await holding()) > 0, 'the chunk jobs held the item text while the run went on');
    let left = -1;
    for (const deadline = Date.now() + 40_000; Date.now() < deadline; ) {
      left = await holding();
      if (left === 0) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    assert.equal(left, 0, 'no job or archived job still holds the item text');
  } finally {
    await rig.close();
  }
});
