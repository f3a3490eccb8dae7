// h-harden, issue 24 item 5: batch slots are shared fairly between organizations. Org X has five
// runs against a slow model; org Y's 10-row run, started after them, must not wait behind X's
// rows. The fake model records requests in arrival order, so the test counts X's rows that start
// while Y's run is under way (no timings asserted): first come, first served lets dozens through;
// fair slots let only the few that were already waiting for a slot on each instance.
// Real server processes (src/main.ts): one instance on either store, and two instances on PostgreSQL.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { startFakeAnthropic, type FakeAnthropic } from './helpers/fake-anthropic.ts';
import { startInstance, type Instance } from './helpers/instances.ts';
import { tempDir } from './helpers/server.ts';

const PG = process.env.TRIBUNAL_TEST_STORE === 'postgres';
const SLOW_MS = 700;
const X_RUNS = 5;
const X_ROWS = 12;
const Y_ROWS = 10;
const CONCURRENCY = 4;

let fake: FakeAnthropic;
const cleanups: Array<() => Promise<unknown>> = [];

before(async () => {
  // Org X's items name SLOW_ORG: its "model" answers slowly; Y's answers at once.
  fake = await startFakeAnthropic({ latencyMs: (r) => (JSON.stringify(r.body?.messages ?? []).includes('SLOW_ORG') ? SLOW_MS : 5) });
});
after(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => {});
  await fake.close();
});

async function place(): Promise<Record<string, string>> {
  if (PG) {
    const { createTestSchema } = await import('./helpers/postgres.ts');
    const schema = await createTestSchema('trb_fair');
    cleanups.push(() => schema.drop());
    return { TRIBUNAL_STORE: 'postgres', DATABASE_URL: schema.url };
  }
  const dir = tempDir('tribunal-fair-');
  cleanups.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
  return { TRIBUNAL_DATA_DIR: dir };
}

async function start(env: Record<string, string>): Promise<Instance> {
  const inst = await startInstance({
    ...env,
    ANTHROPIC_API_KEY: 'sk-ant-test-dummy',
    ANTHROPIC_BASE_URL: fake.url,
    TRIBUNAL_MODEL: 'claude-sonnet-4-5',
    TRIBUNAL_MODEL_TIMEOUT: '20s',
    TRIBUNAL_MODEL_CONCURRENCY: '64',
    TRIBUNAL_RATE_LIMIT: '100000',
    TRIBUNAL_DEMO_QUOTA_RUNNING_BATCHES: '20',
    TRIBUNAL_BATCH_CONCURRENCY: String(CONCURRENCY),
    TRIBUNAL_BATCH_CHUNK: '2',
    TRIBUNAL_BATCH_LEASE: '30s',
  });
  cleanups.push(() => inst.stop());
  return inst;
}

async function org(inst: Instance, tag: string): Promise<{ key: string; judgeId: string }> {
  const demo = await inst.request('POST', '/create-demo-user/');
  assert.equal(demo.status, 201, JSON.stringify(demo.body));
  const key = demo.body.api_key as string;
  const ev = await inst.request('POST', '/v1/evaluators/', {
    key,
    body: { name: `Fair ${tag} ${Math.random()}`, intent: 'Checks the answer.', rubric: 'High (1): right. Low (0): wrong.' },
  });
  assert.equal(ev.status, 201, JSON.stringify(ev.body));
  const judge = await inst.request('POST', '/v1/judges/', { key, body: { name: `Fair judge ${tag} ${Math.random()}`, intent: 'grade', evaluator_ids: [ev.body.id] } });
  assert.equal(judge.status, 201, JSON.stringify(judge.body));
  return { key, judgeId: judge.body.id };
}

async function run(inst: Instance, o: { key: string; judgeId: string }, tag: string, rows: number): Promise<string> {
  const items = Array.from({ length: rows }, (_, i) => ({ request: `question ${i}`, response: `${tag} reply ${i}` }));
  const res = await inst.request('POST', `/v1/judges/${o.judgeId}/batch-execute/`, { key: o.key, body: { items } });
  assert.equal(res.status, 202, JSON.stringify(res.body));
  return res.body.batch_execution_id;
}

async function until(inst: Instance, key: string, id: string, ms = 60_000): Promise<any> {
  const deadline = Date.now() + ms;
  for (;;) {
    const res = await inst.request('GET', `/v1/judges/batch-executions/${id}/`, { key });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    if (['completed', 'failed', 'cancelled'].includes(res.body.status)) return res.body;
    if (Date.now() > deadline) throw new Error(`batch ${id} still ${JSON.stringify(res.body)}; output:\n${inst.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const who = (r: { body: any }) => {
  const text = JSON.stringify(r.body?.messages ?? []);
  return text.includes('SLOW_ORG') ? 'X' : text.includes('FAST_ORG') ? 'Y' : '?';
};

async function scenario(instances: Instance[], t: { diagnostic(m: string): void }): Promise<void> {
  const [a] = instances;
  const x = await org(a, 'x');
  const y = await org(a, 'y');
  fake.resetStats();
  const xRuns: string[] = [];
  for (let i = 0; i < X_RUNS; i++) xRuns.push(await run(a, x, `SLOW_ORG run ${i}`, X_ROWS));
  // X fills every slot first.
  const deadline = Date.now() + 30_000;
  while (fake.requests.length < CONCURRENCY * instances.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  const startedAt = fake.requests.length;
  const yRun = await run(instances[instances.length - 1], y, 'FAST_ORG', Y_ROWS);
  const yDone = await until(a, y.key, yRun);
  assert.equal(yDone.status, 'completed', JSON.stringify(yDone));
  assert.equal(yDone.done, Y_ROWS);

  const order = fake.requests.slice(startedAt).map(who);
  const lastY = order.lastIndexOf('Y');
  const xDuringY = order.slice(0, lastY).filter((w) => w === 'X').length;
  const xTotal = X_RUNS * X_ROWS;
  t.diagnostic(`X rows started while Y's run was under way: ${xDuringY} (of ${xTotal}); order: ${order.join('')}`);
  assert.equal(order.filter((w) => w === 'Y').length, Y_ROWS, 'each Y row asked once');
  // Fair: only X rows already waiting for a slot when Y arrived may start before Y is done (JSON:
  // a chunk per planner; PostgreSQL: the chunks X's workers hold, and those started while Y's jobs
  // wait for a worker and the queue's 0.5 s poll); first come, first served started nearly all of X's rows.
  const allowed = (PG ? 3 : 2) * CONCURRENCY * instances.length;
  assert.ok(xDuringY <= allowed, `${xDuringY} X rows started before Y's last row; fair slots allow at most ${allowed}`);
  // Ordering: Y finished while X still had rows to do.
  let xLeft = 0;
  for (const id of xRuns) {
    const res = await a.request('GET', `/v1/judges/batch-executions/${id}/`, { key: x.key });
    xLeft += X_ROWS - res.body.done;
  }
  assert.ok(xLeft > 0, 'org X still had rows to do when Y had finished');
  for (const id of xRuns) assert.equal((await until(a, x.key, id)).status, 'completed');
}

describe('fair batch slots between organizations (issue 24, item 5)', () => {
  it(`one instance (${PG ? 'PostgreSQL' : 'JSON store'}): org Y's run does not wait behind org X's five slow runs`, async (t) => {
    const env = await place();
    await scenario([await start(env)], t);
  });

  it('two instances on PostgreSQL: the queue hands out chunks of each organization in turn', { skip: !PG && 'PostgreSQL only (TRIBUNAL_TEST_STORE=postgres)' }, async (t) => {
    const env = await place();
    const instances = await Promise.all([start(env), start(env)]);
    await scenario(instances, t);
  });
});
