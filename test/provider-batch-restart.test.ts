// Mode provider_batch survives kill -9 while it waits for the provider (issue 32): a real server
// process submits a 40-row x 3-evaluator run as a Message Batch (the real SDK against the fake on
// 127.0.0.1), is killed with SIGKILL while the batch is in progress, and a new process on the same
// data resumes polling it: nothing is submitted twice, every row is recorded once with one log.
// TRIBUNAL_TEST_STORE=postgres runs it on PostgreSQL (the killed instance's chunk is taken over after the lease).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { after, before, it } from 'node:test';
import { startFakeAnthropicBatches, type FakeAnthropicBatches } from './helpers/fake-anthropic-batches.ts';
import { assertWhole, EVALUATORS, ITEMS, kill, newPlace, setUp, start, stop, until, useBatchProcesses } from './helpers/batch-process.ts';

useBatchProcesses();

/** Provider batch ids as stored now, read from db.json or the database directly. */
async function storedIds(env: Record<string, string>): Promise<string[]> {
  if (env.DATABASE_URL) {
    const db = new pg.Client({ connectionString: env.DATABASE_URL });
    await db.connect();
    try {
      return (await db.query('SELECT provider_batch_id FROM provider_batches WHERE provider_batch_id IS NOT NULL')).rows.map((r) => r.provider_batch_id);
    } catch {
      return [];
    } finally {
      await db.end();
    }
  }
  try {
    const data = JSON.parse(fs.readFileSync(path.join(env.TRIBUNAL_DATA_DIR, 'db.json'), 'utf8'));
    return Object.values<any>(data.provider_batches ?? {}).flatMap((r) => (r.provider_batch_id ? [r.provider_batch_id] : []));
  } catch {
    return []; // caught mid-rename: read again
  }
}
const sameIds = (a: string[], b: string[]) => a.length === b.length && a.every((x) => b.includes(x));
let batches: FakeAnthropicBatches;
before(async () => {
  batches = await startFakeAnthropicBatches();
});
after(() => batches.close());

it('a server killed mid-wait resumes polling after the restart; no request is submitted twice, every row is one log', async () => {
  const place = await newPlace();
  const env = {
    ...place.env,
    ANTHROPIC_API_KEY: 'sk-ant-test-dummy',
    ANTHROPIC_BASE_URL: batches.url,
    TRIBUNAL_MODEL: 'claude-sonnet-4-5',
    TRIBUNAL_RATE_LIMIT: '100000',
    TRIBUNAL_BATCH_LEASE: '3s',
    TRIBUNAL_PROVIDER_BATCH_POLL: '50ms',
  };
  batches.pollsUntilEnded = 1_000_000; // in progress until the test says otherwise
  batches.respondWith(() => ({ kind: 'succeeded', input: { justification: 'Batch answer.', score: 0.75 } }));
  const first = await start(env);
  const s = await setUp(first);
  const res = await first.request('POST', `/v1/judges/${s.judgeId}/batch-execute/`, { key: s.key, body: { dataset_id: s.datasetId, mode: 'provider_batch' } });
  assert.equal(res.status, 202, JSON.stringify(res.body));
  const id = res.body.batch_execution_id as string;
  const submitted = () => batches.batches.reduce((n, b) => n + b.requests.length, 0);
  // Every call submitted and its batch stored as in progress (polled at least once).
  await until(first, s.key, id, (b) => submitted() === ITEMS * EVALUATORS && b.provider_batches?.every((p: any) => p.status === 'in_progress'));
  const before = batches.batches.map((b) => b.id);
  // Killed once the provider's ids are durable (on disk / in the database), not just in memory: before
  // that the record is `submitting`, the one window docs/COST.md names.
  for (const deadline = Date.now() + 10_000; !sameIds(await storedIds(place.env), before); ) {
    if (Date.now() > deadline) throw new Error('the provider batch ids never became durable');
    await new Promise((r) => setTimeout(r, 20));
  }
  await kill(first);

  batches.pollsUntilEnded = 0; // the next poll finds it ended
  const second = await start(env);
  const run = await until(second, s.key, id, (b) => b.status === 'completed' || b.status === 'failed', 60_000);
  assert.deepEqual(
    batches.batches.map((b) => b.id),
    before,
    'no provider batch submitted after the restart',
  );
  const ids = batches.batches.flatMap((b) => b.requests.map((r) => r.custom_id));
  assert.equal(ids.length, ITEMS * EVALUATORS);
  assert.equal(new Set(ids).size, ids.length, 'no request submitted twice');
  assert.deepEqual(
    run.provider_batches.map((p: any) => [p.id, p.status]),
    before.map((b) => [b, 'ended']),
  );
  await assertWhole(second, s, id, run);
  await stop(second);
});
