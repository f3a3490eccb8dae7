// The JSON store's review queues survive a restart: review.json is read back with its leases, so a
// person still never gets an item twice and a completed item stays done.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { reviewId } from '../src/review/ids.ts';
import { reviewStore } from '../src/review/store.ts';
import type { ReviewQueueRecord } from '../src/review/types.ts';
import { JsonStore } from '../src/store/json-store.ts';
import { tempDir } from './helpers/server.ts';

test('review queues, leases and labels are kept across a restart of the JSON store', async () => {
  const dir = tempDir();
  const now = () => new Date().toISOString();
  const later = () => new Date(Date.now() + 600_000).toISOString();
  const q: ReviewQueueRecord = {
    id: reviewId('rvq'),
    org_id: 'org_x',
    name: 'restart',
    judge_id: null,
    evaluator_ids: ['evl_x'],
    annotators_per_item: 1,
    lease_seconds: 600,
    sources: {},
    show_justification: false,
    created_at: now(),
    updated_at: now(),
  };
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
