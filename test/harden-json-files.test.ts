// Issue 24, item 9 (h-harden): temp files of datasets/datasets.json and batches/batches.json that a
// crash left behind are removed when the JSON store opens, like those of db.json.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { JsonStore } from '../src/store/json-store.ts';
import { tempDir } from './helpers/server.ts';

test('stale temp files of datasets.json and batches.json are removed at open; other files are kept', async () => {
  const dir = tempDir();
  try {
    const first = new JsonStore({ dataDir: dir });
    await first.init();
    await first.close();
    const stale = [path.join(dir, 'datasets', 'datasets.json.4242.tmp'), path.join(dir, 'batches', 'batches.json.4242.tmp')];
    const kept = path.join(dir, 'datasets', 'notes.tmp');
    for (const file of [...stale, kept]) {
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, '{"half":');
    }
    const again = new JsonStore({ dataDir: dir });
    await again.init();
    await again.close();
    for (const file of stale) assert.equal(fs.existsSync(file), false, `${file} was removed`);
    assert.equal(fs.existsSync(kept), true);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
