// Issue 24, item 9 (h-harden): shutdown shares one grace period (TRIBUNAL_SHUTDOWN_GRACE) between
// requests in flight and batch rows in flight; batch rows used to get a whole second grace after
// the requests' one. A real server process (src/main.ts) with a model that never answers: one
// interactive request and a batch run's rows hang until SIGTERM. The process must exit within the
// grace plus a generous margin for closing the store, well below two graces.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, it } from 'node:test';
import { hang, startFakeAnthropic, type FakeAnthropic } from './helpers/fake-anthropic.ts';
import { startInstance } from './helpers/instances.ts';
import { tempDir } from './helpers/server.ts';

const PG = process.env.TRIBUNAL_TEST_STORE === 'postgres';
const GRACE_MS = 4000;
/** Closing the store, pg-boss's own stop (at least 1 s), process exit; far below a second grace. */
const MARGIN_MS = 2500;

let fake: FakeAnthropic;
const cleanups: Array<() => Promise<unknown>> = [];
before(async () => {
  fake = await startFakeAnthropic({ responder: () => hang() });
});
after(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => {});
  await fake.close();
});

it(`one grace period for requests and batch rows together (${PG ? 'PostgreSQL' : 'JSON store'})`, async () => {
  let env: Record<string, string>;
  if (PG) {
    const { createTestSchema } = await import('./helpers/postgres.ts');
    const schema = await createTestSchema('trb_shutdown');
    cleanups.push(() => schema.drop());
    env = { TRIBUNAL_STORE: 'postgres', DATABASE_URL: schema.url };
  } else {
    const dir = tempDir('tribunal-shutdown-');
    cleanups.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
    env = { TRIBUNAL_DATA_DIR: dir };
  }
  const inst = await startInstance({
    ...env,
    ANTHROPIC_API_KEY: 'sk-ant-test-dummy',
    ANTHROPIC_BASE_URL: fake.url,
    TRIBUNAL_MODEL: 'claude-sonnet-4-5',
    TRIBUNAL_MODEL_TIMEOUT: '120s',
    TRIBUNAL_MODEL_RETRIES: '0',
    TRIBUNAL_RATE_LIMIT: '100000',
    TRIBUNAL_SHUTDOWN_GRACE: `${GRACE_MS}ms`,
    TRIBUNAL_BATCH_CONCURRENCY: '2',
    TRIBUNAL_BATCH_CHUNK: '2',
  });
  cleanups.push(() => inst.stop());
  const demo = await inst.request('POST', '/create-demo-user/');
  const key = demo.body.api_key as string;
  const ev = await inst.request('POST', '/v1/evaluators/', { key, body: { name: `Shutdown ${Math.random()}`, intent: 'Checks.', rubric: 'High (1): right. Low (0): wrong.' } });
  assert.equal(ev.status, 201, JSON.stringify(ev.body));
  const judge = await inst.request('POST', '/v1/judges/', { key, body: { name: `Shutdown judge ${Math.random()}`, intent: 'grade', evaluator_ids: [ev.body.id] } });
  assert.equal(judge.status, 201, JSON.stringify(judge.body));
  const run = await inst.request('POST', `/v1/judges/${judge.body.id}/batch-execute/`, {
    key,
    body: { items: [1, 2, 3, 4].map((i) => ({ request: `q${i}`, response: `a${i}` })) },
  });
  assert.equal(run.status, 202, JSON.stringify(run.body));
  // Batch rows in flight (2 slots), then an interactive request in flight too.
  for (const deadline = Date.now() + 20_000; fake.inFlight < 2; ) {
    if (Date.now() > deadline) throw new Error(`the batch rows never reached the model; output:\n${inst.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const interactive = inst.request('POST', `/v1/evaluators/${ev.body.id}/execute/`, { key, body: { request: 'q', response: 'a' } }).catch((err: Error) => err);
  for (const deadline = Date.now() + 20_000; fake.inFlight < 3; ) {
    if (Date.now() > deadline) throw new Error(`the interactive request never reached the model; output:\n${inst.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }

  const exited = new Promise<number>((resolve) => inst.child.once('exit', () => resolve(Date.now())));
  const sent = Date.now();
  inst.child.kill('SIGTERM');
  const took = (await exited) - sent;
  await interactive;
  // Both kinds of work were cut short by the grace: it was used, not skipped.
  assert.ok(took >= GRACE_MS - 200, `shutdown took ${took} ms, the grace of ${GRACE_MS} ms was given`);
  assert.ok(took < GRACE_MS + MARGIN_MS, `shutdown took ${took} ms: one grace of ${GRACE_MS} ms plus at most ${MARGIN_MS} ms, not two graces (${2 * GRACE_MS} ms)`);
  assert.match(inst.output(), /cut short after the 4 s grace period/);
});
