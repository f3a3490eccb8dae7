// Issue 33 (server batch CPU): the JSON store writes a run's counters to batches/batches.json with each
// change of its status, not for its rows (a row recorded after the run ended: within a second); the
// rows file stays the truth, and an unfinished run is recounted from it at load. A run that
// ended with a row recorded after its last batches.json write (a crash before the counters followed)
// is recounted from its rows at the next start.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { jsonTempDirs, openJson } from './helpers/json-store.ts';
import { batch, row } from './store-contract-batches.ts';

const tempDir = jsonTempDirs('tribunal-counters-');
const storedRun = (dir: string, id: string) => JSON.parse(fs.readFileSync(path.join(dir, 'batches', 'batches.json'), 'utf8')).batches[id];

describe('JSON store: batch counters in batches.json', () => {
  it('follow the rows within a second, not once per row; a run ended with counters behind its rows is recounted at the next start', async () => {
    const dir = tempDir();
    const store = await openJson(dir);
    const b = batch('org_a', { status: 'running', total: 3 });
    await store.createBatchExecution(b);
    for (const p of [0, 1]) await store.recordBatchRow(b.id, row(p));
    // A cancel commits at once, with the counters of the rows recorded so far.
    await store.updateBatchExecution(b.id, { status: 'cancelled', finished_at: new Date().toISOString() });
    assert.equal(storedRun(dir, b.id).done, 2);
    // A row in flight at the cancel is recorded after it: its line is durable, the counters follow later.
    await store.recordBatchRow(b.id, row(2));
    assert.equal((await store.getBatchExecution(b.id))!.done, 3, 'read from memory at once');
    assert.equal(storedRun(dir, b.id).done, 2, 'batches.json is not rewritten for the row');
    // A crash now: the directory as it is on disk, opened by a new process.
    const crashed = tempDir();
    fs.cpSync(dir, crashed, { recursive: true, filter: (f) => !path.basename(f).startsWith('tribunal.lock') });
    await new Promise((r) => setTimeout(r, 1300));
    assert.equal(storedRun(dir, b.id).done, 3, 'the counters followed within a second');
    await store.close();
    const reopened = await openJson(crashed);
    try {
      const run = (await reopened.getBatchExecution(b.id))!;
      assert.deepEqual([run.status, run.done, run.failed, run.error], ['cancelled', 3, 0, null]);
    } finally {
      await reopened.close();
    }
    assert.equal(storedRun(crashed, b.id).done, 3, 'the recount is written back');
  });

  it("a running run's rows do not rewrite batches.json; after a crash its counters are recounted from the rows", async () => {
    const dir = tempDir();
    const store = await openJson(dir);
    const b = batch('org_a', { status: 'running', total: 3 });
    await store.createBatchExecution(b);
    for (const p of [0, 1, 2]) await store.recordBatchRow(b.id, row(p));
    assert.equal((await store.getBatchExecution(b.id))!.done, 3, 'read from memory at once');
    await new Promise((r) => setTimeout(r, 1300));
    assert.equal(storedRun(dir, b.id).done, 0, 'batches.json keeps the counters of the last status change');
    const crashed = tempDir();
    fs.cpSync(dir, crashed, { recursive: true, filter: (f) => !path.basename(f).startsWith('tribunal.lock') });
    await store.close();
    assert.equal(storedRun(dir, b.id).done, 3, 'a clean close writes them');
    const reopened = await openJson(crashed);
    try {
      const run = (await reopened.getBatchExecution(b.id))!;
      assert.deepEqual([run.status, run.done, run.failed], ['running', 3, 0]);
    } finally {
      await reopened.close();
    }
  });

  it('rows recorded at once go in group writes: each recorded once, one whole line each, all there after a restart', async () => {
    const dir = tempDir();
    const store = await openJson(dir);
    const b = batch('org_a', { status: 'running', total: 60 });
    await store.createBatchExecution(b);
    const positions = Array.from({ length: 60 }, (_, i) => (i * 37) % 60);
    // Every position twice, all asked while the first write is under way.
    const results = await Promise.all([...positions, ...positions].map((p) => store.recordBatchRow(b.id, row(p))));
    assert.equal(results.filter(Boolean).length, 60);
    const lines = fs.readFileSync(path.join(dir, 'batches', `${b.id}.jsonl`), 'utf8').split('\n');
    assert.equal(lines.pop(), '', 'the file ends with a newline');
    assert.deepEqual(
      lines.map((l) => JSON.parse(l.slice(l.indexOf('\t') + 1)).position).sort((x, y) => x - y),
      [...Array(60).keys()],
    );
    // A row recorded after the rows file was let go (idle) is appended after the others.
    await new Promise((r) => setTimeout(r, 1100));
    assert.equal(await store.recordBatchRow(b.id, row(60)), true);
    assert.equal((await store.listBatchRows(b.id, { limit: 100 })).items.length, 61);
    await store.close();
    const reopened = await openJson(dir);
    try {
      assert.equal((await reopened.getBatchExecution(b.id))!.done, 61);
      assert.equal((await reopened.listBatchRows(b.id, { limit: 100, after: 59 })).items[0].position, 60);
    } finally {
      await reopened.close();
    }
  });
});
