// Issue 24, item 8 (h-harden): damaged dataset and batch files of the JSON store are treated as
// db.json and logs.jsonl are. A missing datasets.json / batches.json beside their data files, or a
// garbled one, stops the start with a message that says what to do (and changes nothing); garbled
// item and row lines are set aside in `<file>.rejected` and logged; a finished run whose rows were
// damaged is recounted and says so instead of reading "completed N/N" with rows missing.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { jsonTempDirs, openJson } from './helpers/json-store.ts';
import { batch, row } from './store-contract-batches.ts';
import { dataset, item } from './store-contract-datasets.ts';

const tempDir = jsonTempDirs('tribunal-damage-');

/** A data directory with one dataset of 3 items and one completed run of 3 rows. */
async function seeded(): Promise<{ dir: string; datasetId: string; batchId: string }> {
  const dir = tempDir();
  const store = await openJson(dir);
  const ds = dataset('org_a');
  await store.createDataset(ds);
  await store.addDatasetItems(ds.id, [item({ response: 'one' }), item({ response: 'two' }), item({ response: 'three' })]);
  const b = batch('org_a', { status: 'running', total: 3 });
  await store.createBatchExecution(b);
  for (const p of [0, 1, 2]) await store.recordBatchRow(b.id, row(p));
  await store.updateBatchExecution(b.id, { status: 'completed', finished_at: new Date().toISOString() });
  assert.deepEqual([(await store.getBatchExecution(b.id))!.done, (await store.getBatchExecution(b.id))!.status], [3, 'completed']);
  await store.close();
  return { dir, datasetId: ds.id, batchId: b.id };
}

async function refusesToOpen(dir: string, pattern: RegExp): Promise<void> {
  const snapshot = (d: string): string[] =>
    fs.readdirSync(d, { recursive: true, encoding: 'utf8' }).map((f) => `${f}:${fs.statSync(path.join(d, f)).isFile() ? fs.readFileSync(path.join(d, f), 'utf8') : ''}`);
  const before = snapshot(dir).filter((f) => !f.startsWith('tribunal.lock'));
  await assert.rejects(openJson(dir), pattern);
  const after = snapshot(dir).filter((f) => !f.startsWith('tribunal.lock'));
  assert.deepEqual(after, before, 'nothing was changed');
}

describe('damaged dataset and batch files (JSON store, issue 24 item 8)', () => {
  it('a missing datasets/datasets.json beside item files stops the start, naming the file and what to do', async () => {
    const { dir } = await seeded();
    fs.rmSync(path.join(dir, 'datasets', 'datasets.json'));
    await refusesToOpen(dir, /datasets\.json is missing but 1 data file\(s\) are beside it.*restore datasets\.json from a backup/);
  });

  it('a missing batches/batches.json beside row files stops the start', async () => {
    const { dir } = await seeded();
    fs.rmSync(path.join(dir, 'batches', 'batches.json'));
    await refusesToOpen(dir, /batches\.json is missing but 1 data file\(s\) are beside it.*restore batches\.json from a backup/);
  });

  for (const [file, garbage, why] of [
    ['datasets/datasets.json', '{"format":1,"datasets":', /datasets\.json is not valid JSON.*restore it from a backup/],
    ['datasets/datasets.json', '{"format":1,"datasets":[1,2]}', /datasets\.json is not a Tribunal datasets file: its "datasets" is not an object/],
    ['batches/batches.json', 'null', /batches\.json is not a Tribunal batches file: it is not an object/],
    ['batches/batches.json', '{"format":1,"batches":{"bat_1":"x"}}', /its "batches"\."bat_1" is not a record/],
  ] as const) {
    it(`a garbled ${file} (${garbage.slice(0, 24)}) stops the start`, async () => {
      const { dir } = await seeded();
      fs.writeFileSync(path.join(dir, file), garbage);
      await refusesToOpen(dir, why);
    });
  }

  it('a fresh data directory starts, and its table files are written at once (a later loss is then noticed)', async () => {
    const dir = tempDir();
    const store = await openJson(dir);
    await store.close();
    assert.ok(fs.existsSync(path.join(dir, 'datasets', 'datasets.json')));
    assert.ok(fs.existsSync(path.join(dir, 'batches', 'batches.json')));
  });

  it('a garbled item line is skipped, copied to <file>.rejected and logged; the other items load', async () => {
    const { dir, datasetId } = await seeded();
    const file = path.join(dir, 'datasets', `${datasetId}.jsonl`);
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    const damaged = `${lines[1].slice(0, 20)}#garbled`;
    lines[1] = damaged;
    fs.writeFileSync(file, lines.join('\n'));
    const store = await openJson(dir);
    try {
      const ds = await store.getDataset(datasetId);
      assert.equal(ds!.item_count, 2, 'the two whole items are kept');
      const page = await store.listDatasetItems(datasetId, { limit: 10 });
      assert.deepEqual(
        page.items.map((i) => i.response),
        ['one', 'three'],
      );
      const aside = fs
        .readFileSync(`${file}.rejected`, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      assert.deepEqual(
        aside.map((a) => [a.line, a.text]),
        [[2, damaged]],
      );
      assert.match(aside[0].reason, /not a dataset item/);
      assert.equal(fs.readFileSync(file, 'utf8').split('\n')[1], damaged, 'left in place for repair');
    } finally {
      await store.close();
    }
  });

  it('a garbled row line: the finished run is recounted and says rows were lost, never "completed 3/3" with 2 rows', async () => {
    const { dir, batchId } = await seeded();
    const file = path.join(dir, 'batches', `${batchId}.jsonl`);
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    lines[0] = `${lines[0].slice(0, 30)}#garbled`;
    fs.writeFileSync(file, lines.join('\n'));
    const store = await openJson(dir);
    try {
      const run = (await store.getBatchExecution(batchId))!;
      const rows = await store.listBatchRows(batchId, { limit: 10 });
      assert.equal(rows.items.length, 2);
      assert.equal(run.done + run.failed, rows.items.length, `counts match the rows kept: ${JSON.stringify(run)}`);
      assert.match(run.error ?? '', /1 row\(s\) of this run were lost to damage on disk.*\.rejected/);
      const aside = fs.readFileSync(`${file}.rejected`, 'utf8').trim().split('\n');
      assert.equal(aside.length, 1);
      assert.match(JSON.parse(aside[0]).reason, /not a batch row/);
    } finally {
      await store.close();
    }
    // The correction was written: a second start finds nothing new to correct and copies nothing twice.
    const again = await openJson(dir);
    try {
      assert.equal((await again.getBatchExecution(batchId))!.done, 2);
      assert.equal(fs.readFileSync(`${file}.rejected`, 'utf8').trim().split('\n').length, 1);
    } finally {
      await again.close();
    }
  });
});
