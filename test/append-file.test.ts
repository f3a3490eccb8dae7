// The trace store's append files (src/store/append-file.ts, issue 33): appends given at once are
// written in call order and answered once on disk; a rewrite replaces the file with what the store
// holds then (the lines still waiting are in it) and appends go on after it; after close nothing
// is written.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { AppendFile, CARRY_MS } from '../src/store/append-file.ts';
import { tempDir } from './helpers/server.ts';
import { countFdatasyncs } from './helpers/count-syncs.ts';
import { GroupCommit } from '../src/store/json-files.ts';

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

test('carried lines start no fdatasync of their own: they ride the next commit, or one CARRY_MS later, and are answered once on disk', async () => {
  const file = path.join(tempDir(), 'lines.jsonl');
  const f = new AppendFile(file);
  const syncs = countFdatasyncs();
  try {
    const lines = Array.from({ length: 20 }, (_, i) => `{"c":${i}}\n`);
    // Given one by one over a few turns of the event loop: still one sync for all.
    const answered: Array<Promise<void>> = [];
    for (const l of lines) {
      answered.push(
        f.appendCarried(l).then(() => {
          assert.ok(fs.readFileSync(file, 'utf8').includes(l), 'on disk when answered');
        }),
      );
      await new Promise((r) => setImmediate(r));
    }
    assert.equal(syncs.count, 0, 'no commit started by a carried line before CARRY_MS');
    assert.ok(!fs.existsSync(file) || fs.readFileSync(file, 'utf8') === '', 'nothing answered, nothing written yet');
    await Promise.all(answered);
    assert.equal(syncs.count, 1, 'one fdatasync for all the carried lines');
    assert.equal(fs.readFileSync(file, 'utf8'), lines.join(''));

    // An append's commit takes the carried lines with it, well before CARRY_MS.
    const started = performance.now();
    const carried = f.appendCarried('{"c":"x"}\n');
    await f.append('{"a":1}\n');
    await carried;
    assert.ok(performance.now() - started < CARRY_MS, 'answered with the append, not after the timer');
    assert.equal(syncs.count, 2);
    assert.ok(fs.readFileSync(file, 'utf8').endsWith('{"c":"x"}\n{"a":1}\n'));
  } finally {
    syncs.restore();
  }
  await f.close();
});

test('a carried line whose write failed is answered with the failure, and is not left in the file', async () => {
  const file = path.join(tempDir(), 'lines.jsonl');
  const f = new AppendFile(file);
  await f.append('{"n":1}\n');
  const real = fs.fdatasync;
  fs.fdatasync = ((_fd: number, cb: (err: NodeJS.ErrnoException | null) => void) => cb(Object.assign(new Error('EIO: i/o error'), { code: 'EIO' }))) as typeof fs.fdatasync;
  try {
    await assert.rejects(f.appendCarried('{"n":2}\n'), /EIO/);
  } finally {
    fs.fdatasync = real;
  }
  assert.equal(fs.readFileSync(file, 'utf8'), '{"n":1}\n', 'cut back off the file');
  await f.appendCarried('{"n":3}\n');
  assert.equal(fs.readFileSync(file, 'utf8'), '{"n":1}\n{"n":3}\n');
  await f.close();
});

test('riders never keep writes going back to back: one that comes during a write waits for its own timer, a commit() takes it at once', async () => {
  let writes = 0;
  let release = () => {};
  const group = new GroupCommit(async () => {
    writes++;
    await new Promise<void>((resolve) => (release = resolve));
  });
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const first = group.commitWithin(20);
  await sleep(40);
  assert.equal(writes, 1, 'the timer started the first write');
  // A long delay for this one, so that a slow machine cannot blur "right after" and "on its timer".
  const second = group.commitWithin(300);
  release();
  await first;
  await sleep(5);
  assert.equal(writes, 1, 'no write for a rider alone right after the last');
  for (let waited = 0; writes < 2 && waited < 3000; waited += 25) await sleep(25);
  assert.equal(writes, 2, 'its own timer started it');
  release();
  await second;
  const third = group.commitWithin(1000);
  const eager = group.commit();
  await sleep(5);
  assert.equal(writes, 3, 'a commit() starts a write that takes the rider');
  release();
  await Promise.all([third, eager]);
});

test('the appends of one turn of the event loop share one fdatasync, the first one included', async () => {
  const file = path.join(tempDir(), 'lines.jsonl');
  const f = new AppendFile(file);
  const syncs = countFdatasyncs();
  try {
    // As the OTLP exports read in one turn: one append each, from separate callbacks of the same turn.
    const lines = Array.from({ length: 5 }, (_, i) => `{"t":${i}}\n`);
    const answered = await new Promise<Array<Promise<void>>>((resolve) => {
      const given: Array<Promise<void>> = [];
      for (const l of lines) queueMicrotask(() => given.push(f.append(l)));
      queueMicrotask(() => resolve(given));
    });
    await Promise.all(answered);
    assert.equal(syncs.count, 1, 'one commit for the turn, not one for the first append and one for the rest');
    assert.equal(fs.readFileSync(file, 'utf8'), lines.join(''));
  } finally {
    syncs.restore();
  }
  await f.close();
});
