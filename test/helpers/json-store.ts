// JSON store tests' shared set-up: temp data directories removed after the file's tests, and a
// store opened on one without waiting for a lock.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after } from 'node:test';
import { JsonStore } from '../../src/store/json-store.ts';

/** A temp-directory maker whose directories are removed when the calling test file ends. */
export function jsonTempDirs(prefix: string): () => string {
  const dirs: string[] = [];
  after(() => {
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });
  return () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    dirs.push(dir);
    return dir;
  };
}

export async function openJson(dataDir: string): Promise<JsonStore> {
  const store = new JsonStore({ dataDir, lockWaitMs: 0 });
  await store.init();
  return store;
}
