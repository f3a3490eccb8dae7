// The trace store's append files (src/store/append-file.ts, issue 33): appends given at once are
// written in call order and answered once on disk; a rewrite replaces the file with what the store
// holds then (the lines still waiting are in it) and appends go on after it; after close nothing
// is written.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { AppendFile } from '../src/store/append-file.ts';
import { tempDir } from './helpers/server.ts';

test('appends given at once land whole and in call order, each answered once its line is in the file', async () => {
  const file = path.join(tempDir(), 'lines.jsonl');
  const f = new AppendFile(file);
  const lines = Array.from({ length: 200 }, (_, i) => `{"n":${i}}\n`);
  await Promise.all(
    lines.map((l) =>
      f.append(l).then(() => {
        assert.ok(fs.readFileSync(file, 'utf8').includes(l), 'on disk when answered');
      }),
    ),
  );
  assert.equal(fs.readFileSync(file, 'utf8'), lines.join(''));
  await f.close();
});

test('a rewrite replaces the file with the content of that moment, appends waiting included; later appends follow it', async () => {
  const file = path.join(tempDir(), 'lines.jsonl');
  const f = new AppendFile(file);
  const held = ['{"n":1}\n', '{"n":2}\n', '{"n":3}\n'];
  await f.append(held[0]!);
  // Two appends waiting when the rewrite is asked for; the rewrite's content keeps 1 and 3 (2 pruned).
  const waiting = [f.append(held[1]!), f.append(held[2]!)];
  const rewritten = f.rewrite(() => held[0]! + held[2]!);
  await Promise.all([...waiting, rewritten]);
  assert.equal(fs.readFileSync(file, 'utf8'), held[0]! + held[2]!);
  await f.append('{"n":4}\n');
  assert.equal(fs.readFileSync(file, 'utf8'), `${held[0]}${held[2]}{"n":4}\n`);
  await f.close();
  await assert.rejects(f.append('{"n":5}\n'), /closed/);
  assert.ok(!fs.readFileSync(file, 'utf8').includes('"n":5'));
});
