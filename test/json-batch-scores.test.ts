// Issue 33 (experiments compare): the JSON store keeps the scores of ended runs in memory, parsed once
// while indexing their rows files at start (src/store/json-batch-scores.ts). They must always equal
// what the file says: a cancelled run may still record rows in flight at its end, and a restart
// rebuilds them from the file. The cap drops the least recently used run, which is then read from its file.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { parseScores, scoresLine } from '../src/store/json-batch-rows.ts';
import { KeptScores } from '../src/store/json-batch-scores.ts';
import { rowScores, type BatchRowRecord, type Store } from '../src/store/types.ts';
import { jsonTempDirs, openJson } from './helpers/json-store.ts';
import { batch, row } from './store-contract-batches.ts';

const tempDir = jsonTempDirs('tribunal-kept-scores-');

/** A row with results of every kind the prefix holds: plain, not applicable, with a confidence, failed. */
function mixedRow(position: number): BatchRowRecord {
  const results = [
    { evaluator_id: 'evl_a', evaluator_name: 'Clarity', score: position / 10 },
    { evaluator_id: 'evl_b', evaluator_name: 'Tone', score: null, not_applicable: true },
    { evaluator_id: 'evl_c', evaluator_name: 'Facts', score: 0.25, confidence: 0.8 },
  ];
  if (position === 1) return row(position, { score: null, error: 'provider timed out', evaluator_results: [], index: 4 });
  return row(position, { evaluator_results: results as BatchRowRecord['evaluator_results'] });
}

/** Every row's scores as the rows file says, in position order. */
function fileScores(dir: string, id: string) {
  const lines = fs
    .readFileSync(path.join(dir, 'batches', `${id}.jsonl`))
    .toString('utf8')
    .split('\n')
    .filter(Boolean);
  return lines.map((l) => parseScores(Buffer.from(l))).sort((a, b) => a.position - b.position);
}

async function allScores(store: Store, id: string) {
  return (await store.listBatchRowScores(id, { limit: 100 })).items;
}

describe('JSON store: kept scores of ended runs', () => {
  it("equal the file's after a row is recorded into a cancelled run, answer without the file, and again after a restart", async () => {
    const dir = tempDir();
    let store = await openJson(dir);
    const b = batch('org_a', { status: 'running', total: 4 });
    await store.createBatchExecution(b);
    for (const p of [0, 1, 2]) await store.recordBatchRow(b.id, mixedRow(p));
    await store.updateBatchExecution(b.id, { status: 'cancelled', finished_at: new Date().toISOString() });
    await store.close();
    // Restart: the cancelled run's scores are kept from its file's indexing.
    store = await openJson(dir);
    try {
      // A row in flight at the cancel, recorded after it, and after the scores were kept.
      assert.equal(await store.recordBatchRow(b.id, mixedRow(3)), true);
      const kept = await allScores(store, b.id);
      assert.equal(kept.length, 4);
      assert.deepEqual(kept, fileScores(dir, b.id));
      assert.deepEqual(kept[3], rowScores(mixedRow(3)));
      // The answer comes from memory: with the rows file moved away, the scores still answer, and paging works.
      const file = path.join(dir, 'batches', `${b.id}.jsonl`);
      fs.renameSync(file, `${file}.away`);
      try {
        assert.deepEqual(await allScores(store, b.id), kept);
        const page = await store.listBatchRowScores(b.id, { limit: 2, after: 0 });
        assert.deepEqual([page.items.map((r) => r.position), page.last], [[1, 2], 2]);
        // Whole rows are still read from the file (justifications are not kept).
        await assert.rejects(store.listBatchRows(b.id, { limit: 1 }));
      } finally {
        fs.renameSync(`${file}.away`, file);
      }
    } finally {
      await store.close();
    }
    store = await openJson(dir);
    try {
      assert.deepEqual(await allScores(store, b.id), fileScores(dir, b.id));
    } finally {
      await store.close();
    }
  });

  it("a running run's scores are not kept: its pages are read from the file", async () => {
    const dir = tempDir();
    const store = await openJson(dir);
    try {
      const b = batch('org_a', { status: 'running', total: 2 });
      await store.createBatchExecution(b);
      for (const p of [0, 2]) await store.recordBatchRow(b.id, mixedRow(p));
      const file = path.join(dir, 'batches', `${b.id}.jsonl`);
      assert.deepEqual(await allScores(store, b.id), fileScores(dir, b.id));
      fs.renameSync(file, `${file}.away`);
      await assert.rejects(allScores(store, b.id));
      fs.renameSync(`${file}.away`, file);
    } finally {
      await store.close();
    }
  });

  it('stay under the cap in rows, dropping the least recently used run first, and never keep a run larger than the cap', () => {
    const kept = new KeptScores(5);
    const fill = (id: string, n: number) => {
      kept.start(id);
      for (let p = 0; p < n; p++) kept.add(id, scoresLine(rowScores(mixedRow(p))));
    };
    fill('a', 2);
    fill('b', 2);
    assert.equal(kept.page('a', [0, 1])?.length, 2, 'a is now the most recently used');
    fill('c', 2); // 6 rows > 5: b, the least recently used, goes
    assert.equal(kept.page('b', [0]), undefined);
    assert.deepEqual(kept.page('a', [1]), [rowScores(mixedRow(1))]);
    assert.deepEqual(kept.page('c', [0, 1]), [rowScores(mixedRow(0)), rowScores(mixedRow(1))]);
    fill('d', 6); // alone over the cap: not kept, and the others are dropped on the way
    assert.equal(kept.page('d', [0]), undefined);
    // A torn last row taken back at load; a position not kept sends the page to the file.
    fill('e', 3);
    kept.delete('e', 2);
    assert.equal(kept.page('e', [2]), undefined);
    assert.deepEqual(kept.page('e', [0, 1]), [rowScores(mixedRow(0)), rowScores(mixedRow(1))]);
  });
});
