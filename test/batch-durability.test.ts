// Batch runs survive the process (docs/BATCH.md, "Exactly once per row"), tested on real server
// processes (src/main.ts) against the fake judge model:
// - kill -9 in the middle of a run: the next start resumes it by itself and completes it; every
//   position has one row and one log, and a row that was durable (row or log written) at the kill is
//   never asked of the model again;
// - a cancelled run stays cancelled across a restart; a run whose judge is deleted ends failed;
// - PostgreSQL only: two instances share one run, each row recorded once and asked once per evaluator.
// The store is JSON, or PostgreSQL with TRIBUNAL_TEST_STORE=postgres.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { rowLogId } from '../src/batch/work.ts';
import { startFakeAnthropic, type FakeAnthropic, type FakeRequest } from './helpers/fake-anthropic.ts';
import { startInstance, type Instance } from './helpers/instances.ts';
import { tempDir } from './helpers/server.ts';

const PG = process.env.TRIBUNAL_TEST_STORE === 'postgres';
const ITEMS = 40;
const EVALUATORS = 3;
const LATENCY = 150;

let fake: FakeAnthropic;
const cleanups: Array<() => Promise<unknown>> = [];
const running = new Set<Instance>();

before(async () => {
  fake = await startFakeAnthropic({ latencyMs: LATENCY });
});
after(async () => {
  for (const i of running) i.child.kill('SIGKILL');
  for (const c of cleanups.reverse()) await c().catch(() => {});
  await fake.close();
});

/** Where a deployment keeps its state: a JSON data directory or a PostgreSQL schema. */
interface Place {
  env: Record<string, string>;
  /** Positions of the run's rows and ids of its logs that are on disk / in the database now. */
  durable(batchId: string): Promise<{ rows: number[]; logs: string[] }>;
}

async function newPlace(): Promise<Place> {
  if (PG) {
    const { createTestSchema } = await import('./helpers/postgres.ts');
    const schema = await createTestSchema('trb_batchdur');
    const db = new pg.Client({ connectionString: schema.url });
    await db.connect();
    cleanups.push(() => schema.drop(), () => db.end());
    return {
      env: { TRIBUNAL_STORE: 'postgres', DATABASE_URL: schema.url },
      async durable(batchId) {
        const rows = await db.query('SELECT position FROM batch_rows WHERE batch_id = $1', [batchId]);
        const logs = await db.query('SELECT id FROM execution_logs WHERE batch_execution_id = $1', [batchId]);
        return { rows: rows.rows.map((r) => Number(r.position)), logs: logs.rows.map((r) => r.id) };
      },
    };
  }
  const dir = tempDir('tribunal-batchdur-');
  cleanups.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
  const lines = (file: string) => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean) : []);
  return {
    env: { TRIBUNAL_DATA_DIR: dir },
    async durable(batchId) {
      const rows = lines(path.join(dir, 'batches', `${batchId}.jsonl`)).map((l) => JSON.parse(l).position as number);
      const logs = lines(path.join(dir, 'logs.jsonl'))
        .map((l) => JSON.parse(l))
        .filter((l) => l.batch_execution_id === batchId)
        .map((l) => l.id as string);
      return { rows, logs };
    },
  };
}

const serverEnv = (place: Place, extra: Record<string, string> = {}) => ({
  ...place.env,
  ANTHROPIC_API_KEY: 'sk-ant-test-dummy',
  ANTHROPIC_BASE_URL: fake.url,
  TRIBUNAL_MODEL: 'claude-sonnet-4-5',
  TRIBUNAL_MODEL_BACKOFF: '1ms',
  TRIBUNAL_MODEL_BACKOFF_MAX: '4ms',
  TRIBUNAL_MODEL_TIMEOUT: '10s',
  TRIBUNAL_RATE_LIMIT: '100000',
  TRIBUNAL_BATCH_CONCURRENCY: '4',
  TRIBUNAL_BATCH_CHUNK: '4',
  TRIBUNAL_BATCH_LEASE: '3s',
  ...extra,
});

async function start(env: Record<string, string>): Promise<Instance> {
  const inst = await startInstance(env);
  running.add(inst);
  return inst;
}
async function kill(inst: Instance): Promise<void> {
  running.delete(inst);
  if (inst.child.exitCode !== null || inst.child.signalCode !== null) return;
  const exited = new Promise((r) => inst.child.once('exit', r));
  inst.child.kill('SIGKILL');
  await exited;
}
async function stop(inst: Instance): Promise<void> {
  running.delete(inst);
  await inst.stop();
}

const marker = (i: number) => `ITEM_${String(i).padStart(3, '0')}_END`;
/** Model requests per item, told apart by the unique marker in each item's response. */
function perItem(requests: FakeRequest[]): number[] {
  const counts = new Array<number>(ITEMS).fill(0);
  for (const r of requests) {
    const m = /ITEM_(\d{3})_END/.exec(JSON.stringify(r.body?.messages ?? []));
    if (m) counts[Number(m[1])]++;
  }
  return counts;
}

interface Setup {
  key: string;
  judgeId: string;
  datasetId: string;
  itemIds: string[];
}

async function setUp(inst: Instance): Promise<Setup> {
  const demo = await inst.request('POST', '/create-demo-user/');
  assert.equal(demo.status, 201, JSON.stringify(demo.body));
  const key = demo.body.api_key as string;
  const post = async (p: string, body: unknown) => {
    const res = await inst.request('POST', p, { key, body });
    assert.equal(res.status, 201, `${p}: ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const evaluatorIds: string[] = [];
  for (let e = 0; e < EVALUATORS; e++) {
    const ev = await post('/v1/evaluators/', { name: `Durable ${e} ${Math.random()}`, intent: `Checks quality ${e}.`, rubric: 'High (1): right. Middling (0.5): partly. Low (0): wrong.' });
    evaluatorIds.push(ev.id);
  }
  const judge = await post('/v1/judges/', { name: `Durable judge ${Math.random()}`, intent: 'grade answers', evaluator_ids: evaluatorIds });
  const dataset = await post('/v1/datasets/', { name: `durable ${Math.random()}` });
  const items = Array.from({ length: ITEMS }, (_, i) => ({ request: `question ${i}`, response: `reply ${marker(i)}` }));
  await post(`/v1/datasets/${dataset.id}/items/`, { items });
  const listed = await inst.request('GET', `/v1/datasets/${dataset.id}/items/?limit=100`, { key });
  assert.equal(listed.body.results.length, ITEMS);
  return { key, judgeId: judge.id, datasetId: dataset.id, itemIds: listed.body.results.map((i: any) => i.id) };
}

async function startRun(inst: Instance, s: Setup): Promise<string> {
  const res = await inst.request('POST', `/v1/judges/${s.judgeId}/batch-execute/`, { key: s.key, body: { dataset_id: s.datasetId } });
  assert.equal(res.status, 202, JSON.stringify(res.body));
  return res.body.batch_execution_id;
}

async function until(inst: Instance, key: string, id: string, done: (b: any) => boolean, ms = 40_000): Promise<any> {
  const deadline = Date.now() + ms;
  for (;;) {
    const res = await inst.request('GET', `/v1/judges/batch-executions/${id}/`, { key });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    if (done(res.body)) return res.body;
    if (Date.now() > deadline) throw new Error(`batch ${id} still ${JSON.stringify(res.body)}; output:\n${inst.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
const ended = (b: any) => ['completed', 'failed', 'cancelled'].includes(b.status);

async function allRows(inst: Instance, key: string, id: string): Promise<any[]> {
  const out: any[] = [];
  let cursor: string | null = null;
  do {
    const res = await inst.request('GET', `/v1/judges/batch-executions/${id}/results/?limit=7${cursor ? `&cursor=${cursor}` : ''}`, { key });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    out.push(...res.body.results);
    cursor = res.body.next_cursor;
  } while (cursor);
  return out;
}

async function allLogs(inst: Instance, key: string, id: string): Promise<any[]> {
  const out: any[] = [];
  let cursor: string | null = null;
  do {
    const res = await inst.request('GET', `/v1/execution-logs/?batch_execution_id=${id}&limit=100${cursor ? `&cursor=${cursor}` : ''}`, { key });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    out.push(...res.body.results);
    cursor = res.body.next_cursor;
  } while (cursor);
  return out;
}

/** What every finished run must show: one row and one log per position, in item order, all scored. */
async function assertWhole(inst: Instance, s: Setup, id: string, run: any): Promise<void> {
  assert.equal(run.status, 'completed', JSON.stringify(run));
  assert.deepEqual([run.total, run.done, run.failed], [ITEMS, ITEMS, 0]);
  for (const e of run.summary) assert.deepEqual([e.n, e.errors], [ITEMS, 0]);
  assert.equal(run.summary.length, EVALUATORS);
  const rows = await allRows(inst, s.key, id);
  assert.deepEqual(rows.map((r) => r.position), [...Array(ITEMS).keys()], 'each position once, in order');
  assert.deepEqual(rows.map((r) => r.item_id), s.itemIds);
  for (const r of rows) {
    assert.equal(r.execution_log_id, rowLogId(id, r.position));
    assert.equal(r.error, null);
    assert.equal(typeof r.score, 'number');
  }
  const logs = await allLogs(inst, s.key, id);
  assert.equal(logs.length, ITEMS, 'one log per row, no second log for any row');
  assert.deepEqual(new Set(logs.map((l) => l.id)), new Set(rows.map((r) => r.execution_log_id)));
  const byId = new Map(logs.map((l) => [l.id, l]));
  for (const r of rows) {
    const log = byId.get(r.execution_log_id);
    assert.equal(log.response, `reply ${marker(r.position)}`, 'the log is of its own item');
    assert.equal(log.score, r.score);
    assert.equal(log.evaluator_results.length, EVALUATORS);
  }
}

describe(`batch runs survive the process (${PG ? 'PostgreSQL' : 'JSON'} store)`, () => {
  it('kill -9 mid-run: the next start resumes by itself; no row is scored or logged twice', async () => {
    const place = await newPlace();
    const env = serverEnv(place);
    const first = await start(env);
    const s = await setUp(first);
    fake.resetStats();
    const id = await startRun(first, s);
    await until(first, s.key, id, (b) => b.done >= 8);
    await kill(first);
    const firstRun = fake.requests.slice();
    const atKill = await place.durable(id);
    const durable = new Set([...atKill.rows, ...[...Array(ITEMS).keys()].filter((p) => atKill.logs.includes(rowLogId(id, p)))]);
    assert.ok(atKill.rows.length >= 8 && durable.size < ITEMS, `killed mid-run: ${durable.size} of ${ITEMS} rows durable`);
    assert.equal(new Set(atKill.rows).size, atKill.rows.length, 'no position recorded twice before the kill');

    fake.resetStats();
    const second = await start(env);
    const run = await until(second, s.key, id, ended);
    await assertWhole(second, s, id, run);

    const before = perItem(firstRun);
    const afterRestart = perItem(fake.requests);
    for (let p = 0; p < ITEMS; p++) {
      if (durable.has(p)) {
        // Recorded (or logged) before the kill: never asked again.
        assert.equal(afterRestart[p], 0, `row ${p} was durable at the kill but was asked again`);
        assert.equal(before[p], EVALUATORS, `row ${p}: each evaluator asked once`);
      } else {
        // Not durable at the kill: scored by the second process, each evaluator once; the first
        // process may have asked some evaluators before it died (those answers were lost with it).
        assert.equal(afterRestart[p], EVALUATORS, `row ${p}: each evaluator asked once after the restart`);
        assert.ok(before[p] <= EVALUATORS);
      }
    }
    if (!PG) {
      const lines = fs.readFileSync(path.join(place.env.TRIBUNAL_DATA_DIR, 'batches', `${id}.jsonl`), 'utf8').split('\n').filter(Boolean);
      assert.equal(lines.length, ITEMS, 'one row line per position in the rows file');
    }
    await stop(second);
  });

  it('a cancelled run stays cancelled after a restart; a run whose judge is deleted ends failed', async () => {
    const place = await newPlace();
    const env = serverEnv(place);
    const first = await start(env);
    const s = await setUp(first);
    const id = await startRun(first, s);
    await until(first, s.key, id, (b) => b.done >= 4);
    const cancelled = await first.request('POST', `/v1/judges/batch-executions/${id}/cancel/`, { key: s.key });
    assert.equal(cancelled.status, 200, JSON.stringify(cancelled.body));
    assert.equal(cancelled.body.status, 'cancelled');
    // Rows in flight at the cancel finish; then nothing moves.
    const settled = await until(first, s.key, id, (b) => b.status === 'cancelled' && fake.inFlight === 0);
    await new Promise((r) => setTimeout(r, 300));
    const frozen = (await first.request('GET', `/v1/judges/batch-executions/${id}/`, { key: s.key })).body;
    assert.ok(frozen.done + frozen.failed < ITEMS, `the cancel left rows unscored: ${JSON.stringify(settled)}`);
    await kill(first);

    fake.resetStats();
    const second = await start(env);
    // Long enough for a resumed run to show: a PostgreSQL job lease (3 s) and the runner's look (2 s).
    await new Promise((r) => setTimeout(r, PG ? 5500 : 1500));
    const again = await second.request('GET', `/v1/judges/batch-executions/${id}/`, { key: s.key });
    assert.equal(again.body.status, 'cancelled');
    assert.deepEqual([again.body.done, again.body.failed], [frozen.done, frozen.failed]);
    assert.equal(fake.requests.length, 0, 'a cancelled run is not resumed');

    // The judge deleted during a run: the run ends failed, naming it; the rows scored are kept.
    const id2 = await startRun(second, s);
    await until(second, s.key, id2, (b) => b.done >= 4);
    const deleted = await second.request('DELETE', `/v1/judges/${s.judgeId}/`, { key: s.key });
    assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
    const failed = await until(second, s.key, id2, ended);
    assert.equal(failed.status, 'failed', JSON.stringify(failed));
    assert.match(failed.error, new RegExp(`judge ${s.judgeId} was deleted`));
    assert.ok(failed.done >= 4 && failed.done < ITEMS);
    const rows = await allRows(second, s.key, id2);
    assert.equal(rows.length, failed.done + failed.failed);
    await stop(second);
  });

  it('two instances on PostgreSQL share one run: each row recorded once, the model asked once per row and evaluator', { skip: !PG && 'PostgreSQL only (TRIBUNAL_TEST_STORE=postgres)' }, async (t) => {
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
