// Issue 33 (server batch CPU): a JSON-store run's rows file is appended with write(2) made at once and
// an fdatasync on the thread pool (json-batch-rows.ts RowAppenders). A row is answered only once its
// fdatasync has ended; when the write or the fdatasync fails, the file is cut back to where the
// group began (nothing half-written stays), the rows are refused, and the next append starts clean.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, it, mock } from 'node:test';
import { BATCH_HOLD_MS, GroupQueues, RowAppenders } from '../src/store/json-batch-rows.ts';

const dirs: string[] = [];
const tempFile = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tribunal-appends-'));
  dirs.push(dir);
  return path.join(dir, 'bat_1.jsonl');
};
afterEach(() => {
  mock.restoreAll();
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

describe('JSON store: row appends', () => {
  it('answers only once the fdatasync has ended', async () => {
    const file = tempFile();
    const appenders = new RowAppenders();
    let synced = 0;
    const real = fs.fdatasync;
    mock.method(fs, 'fdatasync', (fd: number, cb: (err: NodeJS.ErrnoException | null) => void) =>
      real(fd, (err) => {
        synced++;
        cb(err);
      }),
    );
    await appenders.append(file, 0, 'one\n');
    assert.equal(synced, 1);
    assert.equal(fs.readFileSync(file, 'utf8'), 'one\n');
    await appenders.closeAll();
  });

  it('cuts the file back to the group start when the fdatasync fails, and appends again after', async () => {
    const file = tempFile();
    const appenders = new RowAppenders();
    await appenders.append(file, 0, 'one\n');
    const failing = mock.method(fs, 'fdatasync', (_fd: number, cb: (err: NodeJS.ErrnoException | null) => void) =>
      setImmediate(() => cb(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }))),
    );
    await assert.rejects(appenders.append(file, 4, 'two\nthree\n'), /EIO/);
    assert.equal(fs.readFileSync(file, 'utf8'), 'one\n', 'nothing of the failed group stays');
    failing.mock.restore();
    await appenders.append(file, 4, 'four\n');
    assert.equal(fs.readFileSync(file, 'utf8'), 'one\nfour\n');
    await appenders.closeAll();
  });

  it('cuts the file back when the write itself fails part way', async () => {
    const file = tempFile();
    const appenders = new RowAppenders();
    await appenders.append(file, 0, 'one\n');
    const real = fs.writeSync;
    let calls = 0;
    // The first write(2) takes 3 bytes, the next fails (a disk that fills up mid-group).
    mock.method(fs, 'writeSync', (fd: number, bytes: Buffer, offset: number, length: number) => {
      if (++calls === 1) return real(fd, bytes, offset, Math.min(3, length));
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    });
    await assert.rejects(appenders.append(file, 4, 'two\nthree\n'), /ENOSPC/);
    mock.restoreAll();
    assert.equal(fs.readFileSync(file, 'utf8'), 'one\n');
    await appenders.append(file, 4, 'four\n');
    assert.equal(fs.readFileSync(file, 'utf8'), 'one\nfour\n');
    await appenders.closeAll();
  });

  it('closes a file a second after its last append, not sooner', async () => {
    const file = tempFile();
    const appenders = new RowAppenders();
    const open = () => (appenders as unknown as { files: Map<string, unknown> }).files.has(file);
    await appenders.append(file, 0, 'one\n');
    await new Promise((r) => setTimeout(r, 600));
    await appenders.append(file, 4, 'two\n');
    await new Promise((r) => setTimeout(r, 600));
    assert.ok(open(), 'used 0.6 s ago: still open');
    await new Promise((r) => setTimeout(r, 700));
    assert.ok(!open(), 'closed a second after its last append');
    await appenders.append(file, 8, 'three\n');
    assert.equal(fs.readFileSync(file, 'utf8'), 'one\ntwo\nthree\n');
    await appenders.closeAll();
  });
});

describe('JSON store: batch writes held to share an fdatasync', () => {
  it('holds a group only while writes come together; writes made one after another go at once', async () => {
    const groups: number[][] = [];
    const queues = new GroupQueues<number, boolean>(async (_key, items) => {
      groups.push(items);
      await new Promise((r) => setImmediate(r));
      return items.map(() => true);
    });
    const started = Date.now();
    for (let i = 0; i < 20; i++) await queues.add('bat_1', i);
    assert.ok(Date.now() - started < (20 * BATCH_HOLD_MS) / 2, 'one after another: never held');
    assert.equal(groups.length, 20);
    groups.length = 0;
    // Two at once: the second finds the first waiting, so the next groups are held and gather.
    await Promise.all([queues.add('bat_1', 100), queues.add('bat_1', 101)]);
    const t = Date.now();
    await Promise.all([queues.add('bat_1', 200), new Promise((r) => setTimeout(r, 10)).then(() => queues.add('bat_1', 201))]);
    assert.ok(Date.now() - t >= BATCH_HOLD_MS - 5, 'held');
    assert.deepEqual(groups.slice(-1), [[200, 201]], 'the write 10 ms later shares the held group');
  });
});
