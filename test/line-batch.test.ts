// The server's log writer (src/observability/line-batch.ts): lines held until a batch fills or the
// timer fires, written in order (long and multi-byte lines too, across many batches), and nothing
// lost when the process exits right after logging.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { LineBatch } from '../src/observability/line-batch.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tribunal-line-batch-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 300 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(check(), `never happened: ${what}`);
}

test('lines wait for a full batch, then go out in order', async () => {
  const file = path.join(dir, 'batch.log');
  const fd = fs.openSync(file, 'w');
  const batch = new LineBatch(fd, 200, 60_000);
  const lines = Array.from({ length: 12 }, (_, i) => `{"n":${i},"pad":"${'x'.repeat(20)}"}\n`);
  for (const line of lines.slice(0, 3)) batch.write(line);
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(fs.readFileSync(file, 'utf8'), '', 'three lines (111 bytes, under 200) are held');
  for (const line of lines.slice(3)) batch.write(line);
  // Each write that fills a batch starts one; the rest follows when the one under way is done.
  await until(() => fs.readFileSync(file, 'utf8').length >= 200, 'the first full batch written');
  batch.flush();
  await until(() => fs.readFileSync(file, 'utf8') === lines.join(''), 'every line, in order');
  fs.closeSync(fd);
});

test('multi-byte, long and many lines come out whole and in order', async () => {
  const file = path.join(dir, 'mixed.log');
  const fd = fs.openSync(file, 'w');
  const batch = new LineBatch(fd, 256, 60_000);
  // Lines of 1-, 2-, 3- and 4-byte characters (a lone surrogate becomes U+FFFD, as Buffer.from makes
  // it), some longer than a whole batch, enough of them to fill many batches.
  const pieces = ['a', 'é', '€', '😀', '\ud800', '"'];
  const lines = Array.from({ length: 400 }, (_, i) => `{"n":${i},"s":"${pieces[i % pieces.length]!.repeat(i % 7 === 0 ? 150 : (i % 23) + 1)}"}\n`);
  for (const [i, line] of lines.entries()) {
    batch.write(line);
    // Now and then the event loop turns, so writes complete mid-stream and batches queue behind them.
    if (i % 37 === 0) await new Promise((r) => setImmediate(r));
  }
  batch.flush();
  const expected = Buffer.from(lines.join(''));
  await until(() => fs.statSync(file).size >= expected.length, 'every line written');
  assert.ok(fs.readFileSync(file).equals(expected), 'the bytes are the lines, in order, as Buffer.from encodes them');
  fs.closeSync(fd);
});

test('a reader gone (EPIPE) ends the writing: no error, and nothing is held after', async () => {
  const fifo = path.join(dir, 'gone.fifo');
  execFileSync('mkfifo', [fifo]);
  const reader = fs.openSync(fifo, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  const fd = fs.openSync(fifo, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
  fs.closeSync(reader);
  const batch = new LineBatch(fd, 256, 60_000);
  // What the batch holds is private; nothing outside can see it, so the test reads it through a cast.
  const held = batch as unknown as { queue: Buffer[]; writing: boolean; used: number };
  // Enough lines to fill batches (queued behind the first write, which fails with EPIPE).
  for (let i = 0; i < 40; i++) batch.write(`{"n":${i},"pad":"${'x'.repeat(40)}"}\n`);
  await until(() => !held.writing, 'the failed write reported');
  batch.write('{"after":true}\n');
  batch.flush();
  assert.deepEqual([held.queue.length, held.used, held.writing], [0, 0, false], 'no chunk waits and no line is taken once the reader is gone');
  fs.closeSync(fd);
});

test('the timer writes a batch that never fills', async () => {
  const file = path.join(dir, 'timer.log');
  const fd = fs.openSync(file, 'w');
  const batch = new LineBatch(fd, 16_384, 30);
  batch.write('{"msg":"alone"}\n');
  await until(() => fs.readFileSync(file, 'utf8') === '{"msg":"alone"}\n', 'the lone line written by the timer');
  fs.closeSync(fd);
});

test('lines logged just before process.exit are written', () => {
  const file = path.join(dir, 'exit.log');
  const source = path.resolve('src/observability/line-batch.ts');
  const script = `
    import fs from 'node:fs';
    const { LineBatch } = await import(${JSON.stringify(source)});
    const batch = new LineBatch(fs.openSync(${JSON.stringify(file)}, 'w'), 16384, 60000);
    for (let i = 0; i < 5; i++) batch.write('{"n":' + i + '}\\n');
    process.exit(0);
  `;
  execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: 'pipe' });
  assert.equal(fs.readFileSync(file, 'utf8'), [0, 1, 2, 3, 4].map((n) => `{"n":${n}}\n`).join(''));
});
