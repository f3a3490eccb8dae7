// Batch runs survive the process (docs/BATCH.md, "Exactly once per row"), tested on real server
// processes (src/main.ts) against the fake judge model:
// - kill -9 in the middle of a run: the next start resumes it by itself and completes it; every
//   position has one row and one log, and a row that was durable (row or log written) at the kill is
//   never asked of the model again;
// - a cancelled run stays cancelled across a restart; a run whose judge is deleted ends failed.
// The store is JSON, or PostgreSQL with TRIBUNAL_TEST_STORE=postgres. Two instances sharing a run:
// test/batch-instances.test.ts.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { rowLogId } from '../src/batch/work.ts';
import {
  allRows,
  assertWhole,
  ended,
  EVALUATORS,
  fake,
  ITEMS,
  kill,
  newPlace,
  perItem,
  PG,
  serverEnv,
  setUp,
  start,
  startRun,
  stop,
  until,
  useBatchProcesses,
} from './helpers/batch-process.ts';

useBatchProcesses();

describe(`batch runs survive the process (${PG ? 'PostgreSQL' : 'JSON'} store)`, () => {
  it('kill -9 mid-run: the next start resumes by itself; no row is scored or logged twice', async () => {
    const place = await newPlace();
    const env = serverEnv(place);
    const first = await start(env);
    const s = await setUp(first);
    fake.resetStats();
    const id = await startRun(first, s);
    await until(first, s.key, id, (b) => b.done >= 8);
    await kill(first);
    const firstRun = fake.requests.slice();
    const atKill = await place.durable(id);
    const durable = new Set([...atKill.rows, ...[...Array(ITEMS).keys()].filter((p) => atKill.logs.includes(rowLogId(id, p)))]);
    assert.ok(atKill.rows.length >= 8 && durable.size < ITEMS, `killed mid-run: ${durable.size} of ${ITEMS} rows durable`);
    assert.equal(new Set(atKill.rows).size, atKill.rows.length, 'no position recorded twice before the kill');

    fake.resetStats();
    const second = await start(env);
    const run = await until(second, s.key, id, ended);
    await assertWhole(second, s, id, run);

    const before = perItem(firstRun);
    const afterRestart = perItem(fake.requests);
    for (let p = 0; p < ITEMS; p++) {
      if (durable.has(p)) {
        // Recorded (or logged) before the kill: never asked again.
        assert.equal(afterRestart[p], 0, `row ${p} was durable at the kill but was asked again`);
        assert.equal(before[p], EVALUATORS, `row ${p}: each evaluator asked once`);
      } else {
        // Not durable at the kill: scored by the second process, each evaluator once; the first
        // process may have asked some evaluators before it died (those answers were lost with it).
        assert.equal(afterRestart[p], EVALUATORS, `row ${p}: each evaluator asked once after the restart`);
        assert.ok(before[p] <= EVALUATORS);
      }
    }
    if (!PG) {
      const lines = fs
        .readFileSync(path.join(place.env.TRIBUNAL_DATA_DIR, 'batches', `${id}.jsonl`), 'utf8')
        .split('\n')
        .filter(Boolean);
      assert.equal(lines.length, ITEMS, 'one row line per position in the rows file');
    }
    await stop(second);
  });

  it('a cancelled run stays cancelled after a restart; a run whose judge is deleted ends failed', async () => {
    const place = await newPlace();
    const env = serverEnv(place);
    const first = await start(env);
    const s = await setUp(first);
    const id = await startRun(first, s);
    await until(first, s.key, id, (b) => b.done >= 4);
    const cancelled = await first.request('POST', `/v1/judges/batch-executions/${id}/cancel/`, { key: s.key });
    assert.equal(cancelled.status, 200, JSON.stringify(cancelled.body));
    assert.equal(cancelled.body.status, 'cancelled');
    // Rows in flight at the cancel finish; then nothing moves.
    const settled = await until(first, s.key, id, (b) => b.status === 'cancelled' && fake.inFlight === 0);
    await new Promise((r) => setTimeout(r, 300));
    const frozen = (await first.request('GET', `/v1/judges/batch-executions/${id}/`, { key: s.key })).body;
    assert.ok(frozen.done + frozen.failed < ITEMS, `the cancel left rows unscored: ${JSON.stringify(settled)}`);
    await kill(first);

    fake.resetStats();
    const second = await start(env);
    // Long enough for a resumed run to show: a PostgreSQL job lease (3 s) and the runner's look (2 s).
    await new Promise((r) => setTimeout(r, PG ? 5500 : 1500));
    const again = await second.request('GET', `/v1/judges/batch-executions/${id}/`, { key: s.key });
    assert.equal(again.body.status, 'cancelled');
    assert.deepEqual([again.body.done, again.body.failed], [frozen.done, frozen.failed]);
    assert.equal(fake.requests.length, 0, 'a cancelled run is not resumed');

    // The judge deleted during a run: the run ends failed, naming it; the rows scored are kept.
    const id2 = await startRun(second, s);
    await until(second, s.key, id2, (b) => b.done >= 4);
    const deleted = await second.request('DELETE', `/v1/judges/${s.judgeId}/`, { key: s.key });
    assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
    const failed = await until(second, s.key, id2, ended);
    assert.equal(failed.status, 'failed', JSON.stringify(failed));
    assert.match(failed.error, new RegExp(`judge ${s.judgeId} was deleted`));
    assert.ok(failed.done >= 4 && failed.done < ITEMS);
    // Rows in flight when the run failed still finish and are recorded (and counted): wait for them.
    const final = await until(second, s.key, id2, () => fake.inFlight === 0);
    await new Promise((r) => setTimeout(r, 300));
    const settledRun = (await second.request('GET', `/v1/judges/batch-executions/${id2}/`, { key: s.key })).body;
    assert.equal(settledRun.status, 'failed', JSON.stringify(final));
    const rows = await allRows(second, s.key, id2);
    assert.equal(rows.length, settledRun.done + settledRun.failed);
    await stop(second);
  });
});
