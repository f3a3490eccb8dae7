// Real server processes (src/main.ts) running batch runs against one fake judge model, for the
// durability tests: a place to keep state (a JSON data directory, or a PostgreSQL schema with
// TRIBUNAL_TEST_STORE=postgres) that outlives a process, start / kill -9 / stop, a 40-item dataset
// whose items the fake's requests name, and the checks every finished run must pass.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before } from 'node:test';
import pg from 'pg';
import { rowLogId } from '../../src/batch/work.ts';
import { startFakeAnthropic, type FakeAnthropic, type FakeRequest } from './fake-anthropic.ts';
import { startInstance, type Instance } from './instances.ts';
import { tempDir } from './server.ts';

export const PG = process.env.TRIBUNAL_TEST_STORE === 'postgres';
export const ITEMS = 40;
export const EVALUATORS = 3;
export const LATENCY = 150;

export let fake: FakeAnthropic;
export const cleanups: Array<() => Promise<unknown>> = [];
export const running = new Set<Instance>();

/** Registers the file's hooks: the fake model before, every process and place cleaned up after. */
export function useBatchProcesses(): void {
  before(async () => {
    fake = await startFakeAnthropic({ latencyMs: LATENCY });
  });
  after(async () => {
    for (const i of running) i.child.kill('SIGKILL');
    for (const c of cleanups.reverse()) await c().catch(() => {});
    await fake.close();
  });
}

/** Where a deployment keeps its state: a JSON data directory or a PostgreSQL schema. */
export interface Place {
  env: Record<string, string>;
  /** Positions of the run's rows and ids of its logs that are on disk / in the database now. */
  durable(batchId: string): Promise<{ rows: number[]; logs: string[] }>;
}

export async function newPlace(): Promise<Place> {
  if (PG) {
    const { createTestSchema } = await import('./postgres.ts');
    const schema = await createTestSchema('trb_batchdur');
    const db = new pg.Client({ connectionString: schema.url });
    await db.connect();
    cleanups.push(
      () => schema.drop(),
      () => db.end(),
    );
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
      // A row's line: its scores, a tab, the whole row (src/store/json-batches.ts).
      const rows = lines(path.join(dir, 'batches', `${batchId}.jsonl`)).map((l) => JSON.parse(l.slice(l.indexOf('\t') + 1)).position as number);
      const logs = lines(path.join(dir, 'logs.jsonl'))
        .map((l) => JSON.parse(l))
        .filter((l) => l.batch_execution_id === batchId)
        .map((l) => l.id as string);
      return { rows, logs };
    },
  };
}

export const serverEnv = (place: Place, extra: Record<string, string> = {}) => ({
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

export async function start(env: Record<string, string>): Promise<Instance> {
  const inst = await startInstance(env);
  running.add(inst);
  return inst;
}
export async function kill(inst: Instance): Promise<void> {
  running.delete(inst);
  if (inst.child.exitCode !== null || inst.child.signalCode !== null) return;
  const exited = new Promise((r) => inst.child.once('exit', r));
  inst.child.kill('SIGKILL');
  await exited;
}
export async function stop(inst: Instance): Promise<void> {
  running.delete(inst);
  await inst.stop();
}

export const marker = (i: number) => `ITEM_${String(i).padStart(3, '0')}_END`;
/** Model requests per item, told apart by the unique marker in each item's response. */
export function perItem(requests: FakeRequest[]): number[] {
  const counts = new Array<number>(ITEMS).fill(0);
  for (const r of requests) {
    const m = /ITEM_(\d{3})_END/.exec(JSON.stringify(r.body?.messages ?? []));
    if (m) counts[Number(m[1])]++;
  }
  return counts;
}

export interface Setup {
  key: string;
  judgeId: string;
  datasetId: string;
  itemIds: string[];
}

export async function setUp(inst: Instance): Promise<Setup> {
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
    const ev = await post('/v1/evaluators/', {
      name: `Durable ${e} ${Math.random()}`,
      intent: `Checks quality ${e}.`,
      rubric: 'High (1): right. Middling (0.5): partly. Low (0): wrong.',
    });
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

export async function startRun(inst: Instance, s: Setup): Promise<string> {
  const res = await inst.request('POST', `/v1/judges/${s.judgeId}/batch-execute/`, { key: s.key, body: { dataset_id: s.datasetId } });
  assert.equal(res.status, 202, JSON.stringify(res.body));
  return res.body.batch_execution_id;
}

export async function until(inst: Instance, key: string, id: string, done: (b: any) => boolean, ms = 40_000): Promise<any> {
  const deadline = Date.now() + ms;
  for (;;) {
    const res = await inst.request('GET', `/v1/judges/batch-executions/${id}/`, { key });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    if (done(res.body)) return res.body;
    if (Date.now() > deadline) throw new Error(`batch ${id} still ${JSON.stringify(res.body)}; output:\n${inst.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
export const ended = (b: any) => ['completed', 'failed', 'cancelled'].includes(b.status);

export async function allRows(inst: Instance, key: string, id: string): Promise<any[]> {
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

export async function allLogs(inst: Instance, key: string, id: string): Promise<any[]> {
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
export async function assertWhole(inst: Instance, s: Setup, id: string, run: any): Promise<void> {
  assert.equal(run.status, 'completed', JSON.stringify(run));
  assert.deepEqual([run.total, run.done, run.failed], [ITEMS, ITEMS, 0]);
  for (const e of run.summary) assert.deepEqual([e.n, e.errors], [ITEMS, 0]);
  assert.equal(run.summary.length, EVALUATORS);
  const rows = await allRows(inst, s.key, id);
  assert.deepEqual(
    rows.map((r) => r.position),
    [...Array(ITEMS).keys()],
    'each position once, in order',
  );
  assert.deepEqual(
    rows.map((r) => r.item_id),
    s.itemIds,
  );
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
