// Two Tribunal processes on one PostgreSQL database share one batch run (docs/BATCH.md): both ask
// the model, each row is recorded once and asked once per evaluator; a run started through an
// instance that takes no batch work (TRIBUNAL_BATCH_WORKER=false) is run by the workers.
// PostgreSQL only: run with TRIBUNAL_TEST_STORE=postgres (skipped otherwise).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FakeRequest } from './helpers/fake-anthropic.ts';
import { assertWhole, ended, EVALUATORS, fake, ITEMS, newPlace, perItem, PG, serverEnv, setUp, start, startRun, stop, until, useBatchProcesses } from './helpers/batch-process.ts';

useBatchProcesses();

describe('batch runs shared by two instances on PostgreSQL', () => {
  it('two instances on PostgreSQL share one run: each row recorded once, the model asked once per row and evaluator', {
    skip: !PG && 'PostgreSQL only (TRIBUNAL_TEST_STORE=postgres)',
  }, async (t) => {
    const place = await newPlace();
    // Each instance calls the model with its own (dummy) key, so the fake tells their requests apart.
    const [a, b] = await Promise.all([
      start(serverEnv(place, { ANTHROPIC_API_KEY: 'sk-ant-test-dummy-a', TRIBUNAL_BATCH_CONCURRENCY: '2', TRIBUNAL_BATCH_CHUNK: '2' })),
      start(serverEnv(place, { ANTHROPIC_API_KEY: 'sk-ant-test-dummy-b', TRIBUNAL_BATCH_CONCURRENCY: '2', TRIBUNAL_BATCH_CHUNK: '2' })),
    ]);
    const s = await setUp(a);
    fake.resetStats();
    const id = await startRun(a, s);
    const run = await until(b, s.key, id, ended);
    await assertWhole(b, s, id, run);
    assert.deepEqual(perItem(fake.requests), new Array(ITEMS).fill(EVALUATORS), 'each row asked once per evaluator');
    const keyOf = (r: FakeRequest) => r.headers['x-api-key'] ?? String(r.headers.authorization).replace(/^Bearer /, '');
    const byKey = (k: string) => fake.requests.filter((r) => keyOf(r) === k).length;
    const [fromA, fromB] = [byKey('sk-ant-test-dummy-a'), byKey('sk-ant-test-dummy-b')];
    assert.equal(fromA + fromB, ITEMS * EVALUATORS);
    t.diagnostic(`model requests: ${fromA} from instance a, ${fromB} from instance b`);
    assert.ok(fromA > 0 && fromB > 0, `both instances worked: ${fromA} requests from a, ${fromB} from b`);

    // A run started through an instance that takes no batch work (TRIBUNAL_BATCH_WORKER=false) is
    // found and run by the workers, though their queues were already started.
    const api = await start(serverEnv(place, { ANTHROPIC_API_KEY: 'sk-ant-test-dummy-api', TRIBUNAL_BATCH_WORKER: 'false' }));
    fake.resetStats();
    const given = await api.request('POST', `/v1/judges/${s.judgeId}/batch-execute/`, { key: s.key, body: { items: [{ response: 'one' }, { response: 'two' }] } });
    assert.equal(given.status, 202, JSON.stringify(given.body));
    const small = await until(api, s.key, given.body.batch_execution_id, ended, 15_000);
    assert.deepEqual([small.status, small.done], ['completed', 2]);
    assert.equal(fake.requests.length, 2 * EVALUATORS);
    assert.equal(byKey('sk-ant-test-dummy-api'), 0, 'the API-only instance asked the model nothing');
    await Promise.all([stop(a), stop(b), stop(api)]);
  });
});
