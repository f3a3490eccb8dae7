// The JSON store's review queues survive a restart: review.json and its journal are read back with
// their leases, so a person still never gets an item twice and a completed item stays done.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { reviewId } from '../src/review/ids.ts';
import { JsonReviewStore } from '../src/review/json-review.ts';
import { reviewStore } from '../src/review/store.ts';
import type { ReviewQueueRecord } from '../src/review/types.ts';
import { JsonStore } from '../src/store/json-store.ts';
import { tempDir } from './helpers/server.ts';
import { until } from './helpers/wait.ts';
import { reviewQueueRecord } from './helpers/review.ts';

test('review queues, leases and labels are kept across a restart of the JSON store', async () => {
  const dir = tempDir();
  const now = () => new Date().toISOString();
  const later = () => new Date(Date.now() + 600_000).toISOString();
  const q: ReviewQueueRecord = { ...reviewQueueRecord('restart'), annotators_per_item: 1 };
  let store = new JsonStore({ dataDir: dir });
  await store.init();
  let rs = reviewStore(store);
  await rs.createQueue(q);
  await rs.addItems(
    q.id,
    ['a', 'b', 'c'].map((l) => ({ id: reviewId('rvi'), queue_id: q.id, execution_log_id: `log_${l}`, source: 'manual', done: 0, adjudicated_at: null, created_at: now() })),
  );
  const first = (await rs.next(q, 'key_1', now(), later()))!;
  const label = {
    id: reviewId('rvl'),
    queue_id: q.id,
    item_id: first.item.id,
    execution_log_id: first.item.execution_log_id,
    evaluator_id: 'evl_x',
    annotator_id: 'key_1',
    score: 0.4,
    note: 'n',
    created_at: now(),
  };
  assert.equal(await rs.submit(q, first.item.id, 'key_1', [label], now()), 'ok');
  const second = (await rs.next(q, 'key_2', now(), later()))!;
  assert.notEqual(second.item.id, first.item.id);
  await store.close();

  store = new JsonStore({ dataDir: dir });
  await store.init();
  rs = reviewStore(store);
  assert.deepEqual((await rs.getQueue(q.id))?.name, 'restart');
  assert.deepEqual(await rs.counts(q.id, 1, now()), { queued: 1, leased: 1, done: 1, skipped: 0 });
  assert.equal(await rs.submit(q, first.item.id, 'key_1', [label], now()), 'already_done', 'nothing counted twice after a restart');
  const third = (await rs.next(q, 'key_3', now(), later()))!;
  assert.ok(![first.item.id, second.item.id].includes(third.item.id), 'the live lease of key_2 still holds');
  assert.equal(await rs.next(q, 'key_4', now(), later()), null);
  assert.deepEqual(
    (await rs.listLabels(q.id)).map((l) => l.score),
    [0.4],
  );
  await store.close();
});

// The journal (issue 31): each lease, label and skip is one line of review.journal.jsonl, synced
// before the caller is answered; review.json is written whole only at compaction and close.
const queueRecord = () => reviewQueueRecord('journal');
const itemsOf = (q: ReviewQueueRecord, n: number) =>
  Array.from({ length: n }, (_, k) => ({
    id: reviewId('rvi'),
    queue_id: q.id,
    execution_log_id: `log_${k}`,
    source: 'manual',
    done: 0,
    adjudicated_at: null,
    created_at: new Date().toISOString(),
  }));
const labelFor = (q: ReviewQueueRecord, itemId: string, who: string, score: number) => ({
  id: reviewId('rvl'),
  queue_id: q.id,
  item_id: itemId,
  execution_log_id: 'log',
  evaluator_id: 'evl_x',
  annotator_id: who,
  score,
  note: null,
  created_at: new Date().toISOString(),
});
const soon = () => new Date().toISOString();
const later = () => new Date(Date.now() + 600_000).toISOString();
/** A store on `dir` with a new queue of `n` items, and key_1 holding a lease on the first. */
async function leasedQueue(dir: string, n: number) {
  const q = queueRecord();
  const rs = new JsonReviewStore(dir);
  await rs.createQueue(q);
  await rs.addItems(q.id, itemsOf(q, n));
  return { q, rs, a: (await rs.next(q, 'key_1', soon(), later()))! };
}

test('a crash (no close) keeps every acknowledged lease, label and skip: the journal is replayed over review.json', async () => {
  const dir = tempDir();
  const { q, rs, a } = await leasedQueue(dir, 3);
  assert.equal(await rs.submit(q, a.item.id, 'key_1', [labelFor(q, a.item.id, 'key_1', 0.25)], soon()), 'ok');
  const b = (await rs.next(q, 'key_1', soon(), later()))!;
  assert.equal(await rs.skip(q.id, b.item.id, 'key_1', 'unreadable', soon()), 'ok');
  const c = (await rs.next(q, 'key_2', soon(), later()))!;
  assert.equal(await rs.setAdjudicated(q.id, a.item.id, soon()), true);
  // No close: the process "dies" here. review.json was never written; the journal holds it all.
  assert.equal(fs.existsSync(path.join(dir, 'review.json')), false);
  assert.ok(fs.statSync(path.join(dir, 'review.journal.jsonl')).size > 0);

  const again = new JsonReviewStore(dir);
  assert.deepEqual(await again.getQueue(q.id), q);
  assert.equal(await again.submit(q, a.item.id, 'key_1', [labelFor(q, a.item.id, 'key_1', 0.25)], soon()), 'already_done');
  assert.equal(await again.submit(q, b.item.id, 'key_1', [labelFor(q, b.item.id, 'key_1', 0.25)], soon()), 'already_skipped');
  assert.deepEqual(
    (await again.listLeases(q.id, [c.item.id])).filter((l) => l.annotator_id === 'key_2').map((l) => [l.state, l.expires_at]),
    [['leased', c.lease.expires_at]],
  );
  assert.deepEqual(
    (await again.listLabels(q.id)).map((l) => [l.item_id, l.score]),
    [[a.item.id, 0.25]],
  );
  assert.equal((await again.getItem(q.id, a.item.id))?.done, 1);
  assert.ok((await again.getItem(q.id, a.item.id))?.adjudicated_at);
  // key_1 has had every item but one; it gets that one, and then none.
  const d = (await again.next(q, 'key_1', soon(), later()))!;
  assert.ok(![a.item.id, b.item.id].includes(d.item.id));
  assert.equal(await again.next(q, 'key_1', soon(), later()), null);
  await again.close();
});

test('a torn last journal line (a crash mid-append) is cut off; the lines before it hold, and appends go on after it', async () => {
  const dir = tempDir();
  const { q, a } = await leasedQueue(dir, 2);
  const journal = path.join(dir, 'review.journal.jsonl');
  const whole = fs.statSync(journal).size;
  fs.appendFileSync(journal, '{"s":99,"k":"lease","lease":{"item_id":"rvi_torn","annot');

  const again = new JsonReviewStore(dir);
  assert.equal(fs.statSync(journal).size, whole, 'the torn line is cut off at start');
  assert.ok(fs.readFileSync(`${journal}.rejected`, 'utf8').includes('torn last line'), 'and a copy set aside');
  assert.deepEqual(
    (await again.listLeases(q.id, [a.item.id])).map((l) => l.annotator_id),
    ['key_1'],
  );
  assert.equal(await again.submit(q, a.item.id, 'key_1', [labelFor(q, a.item.id, 'key_1', 0.5)], soon()), 'ok');
  // A third start reads the appended line after the cut: the journal is whole again.
  const third = new JsonReviewStore(dir);
  assert.equal((await third.getItem(q.id, a.item.id))?.done, 1);
  assert.equal(await third.submit(q, a.item.id, 'key_1', [labelFor(q, a.item.id, 'key_1', 0.5)], soon()), 'already_done');
});

test('compaction writes review.json whole and empties the journal; a crash between the two applies nothing twice', async () => {
  const dir = tempDir();
  const q = queueRecord();
  const journal = path.join(dir, 'review.journal.jsonl');
  const rs = new JsonReviewStore(dir, { compactBytes: 2000 });
  await rs.createQueue(q);
  await rs.addItems(q.id, itemsOf(q, 20));
  const people = ['key_1', 'key_2'];
  for (let round = 0; round < 10; round++) {
    for (const who of people) {
      const got = (await rs.next(q, who, soon(), later()))!;
      assert.equal(await rs.submit(q, got.item.id, who, [labelFor(q, got.item.id, who, round / 10)], soon()), 'ok');
    }
  }
  // 40 changes of ~300 bytes against a 2,000-byte limit: compacted several times on the way.
  const snapshot = JSON.parse(fs.readFileSync(path.join(dir, 'review.json'), 'utf8')) as { journal_seq: number };
  assert.ok(snapshot.journal_seq > 2, `a compaction ran (journal_seq ${snapshot.journal_seq})`);
  // A compaction the last change started runs on: the pair read below must be from after it (a
  // crash in the middle of one leaves review.journal.jsonl.old too, the case tested last).
  await until('the last compaction to finish', () => !fs.existsSync(`${journal}.old`));
  // Compaction runs beside the appends, so under load the journal may pass its limit before one
  // ends; what holds is that it was emptied on the way (all 40 changes take about 12,000 bytes).
  const size = fs.statSync(journal).size;
  assert.ok(size < 6000, `the journal was emptied on the way (${size} bytes)`);
  const journalBefore = fs.readFileSync(journal);
  const snapshotBefore = fs.readFileSync(path.join(dir, 'review.json'));
  await rs.close();
  assert.equal(fs.statSync(journal).size, 0, 'close compacts: the journal is empty');
  const closed = JSON.parse(fs.readFileSync(path.join(dir, 'review.json'), 'utf8')) as { journal_seq: number };
  await assert.rejects(rs.next(q, 'key_3', soon(), later()), /closed/, 'nothing is written after close');

  const check = async (store: JsonReviewStore) => {
    assert.deepEqual(
      (await store.listItems(q.id, { limit: 50 })).items.map((i) => i.done),
      Array(10).fill(2).concat(Array(10).fill(0)),
    );
    assert.equal((await store.listLabels(q.id)).length, 20);
  };
  await check(new JsonReviewStore(dir));
  // The crash between writing the snapshot and emptying the journal: the old journal's lines are
  // all in the new snapshot (their numbers are not above its journal_seq) and are skipped.
  fs.writeFileSync(journal, Buffer.concat([journalBefore]));
  assert.ok(closed.journal_seq > snapshot.journal_seq);
  await check(new JsonReviewStore(dir));
  // And the snapshot before it with that journal: the lines after its number are replayed once.
  fs.writeFileSync(path.join(dir, 'review.json'), snapshotBefore);
  await check(new JsonReviewStore(dir));
  // A crash in a compaction after the journal was set aside (review.journal.jsonl.old) and before
  // the snapshot was written: the old journal, then the new one, are replayed; the start compacts.
  fs.renameSync(journal, `${journal}.old`);
  fs.writeFileSync(journal, '');
  const resumed = new JsonReviewStore(dir);
  await check(resumed);
  await resumed.close();
  assert.equal(fs.existsSync(`${journal}.old`), false, 'the interrupted compaction was finished');
  await check(new JsonReviewStore(dir));
});
