// Issue 24, item 9 (h-harden): purging an organization (the demo purge) also deletes its batch runs'
// pg-boss jobs, waiting, finished and archived, which hold the rows' item text; another
// organization's jobs stay. Runs only with TRIBUNAL_TEST_STORE=postgres.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { test } from 'node:test';
import { evaluatorBody, startScoringRig } from './helpers/execute.ts';
import { batch } from './store-contract-batches.ts';

test("an organization's purge deletes its batch jobs from the queue", { skip: process.env.TRIBUNAL_TEST_STORE !== 'postgres' }, async () => {
  const rig = await startScoringRig({ TRIBUNAL_BATCH_CHUNK: '2' });
  try {
    const marker = `marker-${randomBytes(6).toString('hex')}`;
    const ev = await rig.createEvaluator(evaluatorBody());
    const judge = await rig.createJudge({ name: 'purge judge', intent: 'grade', evaluator_ids: [ev.id] });
    const started = await rig.post(`/v1/judges/${judge.id}/batch-execute/`, { items: [1, 2, 3].map((i) => ({ request: `q ${i}`, response: `${marker} ${i}` })) });
    assert.equal(started.status, 202, JSON.stringify(started.body));
    const id = started.body.batch_execution_id;
    for (const deadline = Date.now() + 30_000; ; ) {
      const b = await rig.get(`/v1/judges/batch-executions/${id}/`);
      if (b.body.status === 'completed') break;
      if (Date.now() > deadline) throw new Error(`still ${JSON.stringify(b.body)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const store = rig.server.store;
    const pool = (store as unknown as { pool: pg.Pool }).pool;
    const schema = (await pool.query<{ s: string }>('SELECT current_schema() AS s')).rows[0]!.s;
    const queue = schema === 'public' ? 'tribunal_queue' : `${schema}_queue`;
    const count = async (like: string) => {
      const { rows } = await pool.query<{ n: string }>(
        `SELECT (SELECT count(*) FROM "${queue}".job WHERE data::text LIKE $1) + (SELECT count(*) FROM "${queue}".archive WHERE data::text LIKE $1) AS n`,
        [`%${like}%`],
      );
      return Number(rows[0]!.n);
    };
    // Another organization's run with a job waiting in the queue (a job as the planner sends it).
    const other = batch('org_other_purge');
    await store.createBatchExecution(other);
    // Due tomorrow: the running server's worker must not take it (and retry or archive it) before the count.
    await pool.query(`INSERT INTO "${queue}".job (id, name, data, start_after) VALUES (gen_random_uuid(), 'tribunal_batch_chunk', $1, now() + interval '1 day')`, [
      JSON.stringify({ batch_id: other.id, first: 0, rows: [] }),
    ]);
    const held = await count(marker);
    assert.ok(held > 0, 'the finished chunk jobs held the item text (retention 1 h)');
    assert.ok((await count(id)) > held - 1, "the run's plan and chunk jobs are there");

    const orgId = (await store.getBatchExecution(id))!.org_id;
    await store.purgeOrganization(orgId);
    assert.equal(await count(marker), 0, "no job or archived job holds the purged organization's item text");
    assert.equal(await count(id), 0, "no job of the purged organization's run is left");
    assert.equal(await count(other.id), 1, "another organization's job is kept");
  } finally {
    await rig.close();
  }
});
