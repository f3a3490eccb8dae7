// `tribunal migrate --from json --to postgres`: a JSON data directory copied into PostgreSQL with
// nothing lost, counted and verified; a second run copies nothing and verifies everything; a
// difference is found and reported; a directory a server holds is refused. Then datasets, batch
// runs and calibration runs made over REST on a JSON server: copied with ids, order and counters,
// answering the same over REST on PostgreSQL, a registered model's sealed key still opening with
// the same TRIBUNAL_SECRET_KEY, and a run left running in the JSON directory finishing on PostgreSQL.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { migrateRooms } from '../src/cli/migrate-rooms.ts';
import { syncPresets } from '../src/domain/presets.ts';
import { JsonStore } from '../src/store/json-store.ts';
import { PostgresStore } from '../src/store/postgres-store.ts';
import type { Page, PageQuery, Store } from '../src/store/types.ts';
import { DUMMY_KEY, evaluatorBody, TEST_MODEL } from './helpers/execute.ts';
import { startFakeAnthropic, type FakeAnthropic } from './helpers/fake-anthropic.ts';
import { startFakeOpenAI, type FakeOpenAI } from './helpers/fake-openai.ts';
import { createTestSchema, type TestSchema } from './helpers/postgres.ts';
import { startTestServer, tempDir, type TestServer } from './helpers/server.ts';
import { apiKey, evaluator, judge, log, org, project, registeredModel } from './store-contract.ts';
import { batch, row } from './store-contract-batches.ts';
import { annotation } from './store-contract-calibration.ts';
import { allItems } from './store-contract-datasets.ts';

const ROOT = path.resolve(import.meta.dirname, '..');

function tribunal(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['bin/tribunal.js', ...args], { cwd: ROOT, env: { ...process.env, DATABASE_URL: '', TRIBUNAL_STORE: '' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('exit', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

async function all<T extends { created_at: string; id: string }>(list: (p: PageQuery) => Promise<Page<T>>): Promise<T[]> {
  const items: T[] = [];
  let after: PageQuery['after'];
  do {
    const page = await list({ limit: 200, after });
    items.push(...page.items);
    after = page.last;
  } while (after);
  return items;
}

describe('tribunal migrate --from json --to postgres', () => {
  let dataDir: string;
  let schema: TestSchema;
  const orgIds: string[] = [];
  const evaluatorIds: string[] = [];
  const judgeIds: string[] = [];
  let logCount = 0;

  before(async () => {
    dataDir = tempDir('tribunal-migrate-');
    schema = await createTestSchema('trb_migrate');
    // A JSON data directory with a bit of everything, several versions, and 2,500 logs.
    const json = new JsonStore({ dataDir });
    await json.init();
    await syncPresets(json);
    for (let o = 0; o < 3; o++) {
      const organization = org({ name: `Org ${o}`, is_demo: o === 2, created_at: new Date(Date.UTC(2026, 0, 1 + o)).toISOString() });
      orgIds.push(organization.id);
      await json.createOrganization(organization);
      await json.createApiKey(apiKey(organization.id));
      await json.createModel(registeredModel(organization.id, { name: 'local' }));
      await json.createApiKey(apiKey(organization.id, { revoked_at: '2026-02-01T00:00:00.000Z', last_used_at: '2026-01-15T10:00:00.000Z' }));
      const def = project(organization.id, { name: 'Default', is_default: true });
      await json.createProject(def);
      await json.createProject(project(organization.id, { name: 'Search' }));
      const e = evaluator(organization.id, { project_id: def.id, visibility: o === 0 ? 'public' : 'private' });
      await json.createEvaluator(e);
      await json.updateEvaluator({ ...e, rubric: 'v2 rubric', version: 2, updated_at: new Date().toISOString() }, 1);
      await json.updateEvaluator({ ...e, rubric: 'v3 rubric', version: 3, updated_at: new Date().toISOString() }, 2);
      evaluatorIds.push(e.id);
      const j = judge(organization.id, [e.id, 'preset_answer_relevance'], { project_id: def.id, stage: o ? 'retrieval' : null });
      await json.createJudge(j);
      await json.updateJudge({ ...j, intent: 'edited', version: 2 }, 1);
      judgeIds.push(j.id);
      const appends: Array<Promise<void>> = [];
      for (let i = 0; i < 834; i++) {
        const isJudge = i % 2 === 0;
        appends.push(
          json.appendExecutionLog(
            log(organization.id, {
              type: isJudge ? 'judge' : 'evaluator',
              judge_id: isJudge ? j.id : null,
              judge_name: isJudge ? j.name : null,
              judge_version: isJudge ? 2 : null,
              evaluator_id: isJudge ? null : e.id,
              project_id: def.id,
              score: i % 7 === 0 ? null : (i % 100) / 100,
              cost_usd: i / 10_000,
              tags: i % 3 ? ['a', `n${i % 5}`] : [],
              contexts: i % 4 ? null : ['ctx one', 'ctx two'],
              user_id: i % 6 ? null : `user-${i}`,
              created_at: new Date(Date.UTC(2026, 1, 1) + i * 1000).toISOString(),
            }),
          ),
        );
        logCount++;
      }
      await Promise.all(appends); // one group commit instead of 834 fsyncs
      // People's annotations of two of those logs (one edited after it was made).
      const annotated = await json.listExecutionLogs({ org_id: organization.id, judge_id: j.id }, { limit: 2 });
      for (const [k, l] of annotated.items.entries()) {
        const a = annotation(organization.id, { execution_log_id: l.id, evaluator_id: e.id, judge_id: j.id, score: k / 2, note: k ? 'edited' : null });
        await json.createAnnotation(a);
        if (k) await json.updateAnnotation({ ...a, score: 0.9, updated_at: new Date().toISOString() });
      }
    }
    await json.close();
    // A crash mid-append left a torn last line: it was never acknowledged and is not migrated.
    fs.appendFileSync(path.join(dataDir, 'logs.jsonl'), '{"id":"log_torn","org_id":');
  });

  after(async () => {
    fs.rmSync(dataDir, { recursive: true, force: true });
    await schema?.drop();
  });

  it('copies everything, counted and verified, and it reads back the same through the store', async () => {
    const res = await tribunal(['migrate', '--from', 'json', '--to', 'postgres', '--data-dir', dataDir, '--database-url', schema.url]);
    assert.equal(res.code, 0, res.stdout + res.stderr);
    assert.match(res.stdout, /Every record is in PostgreSQL and reads back equal to the JSON data\./);
    const line = (kind: string) =>
      res.stdout
        .split('\n')
        .find((l) => l.trim().startsWith(`${kind} `))!
        .trim()
        .split(/\s+/)
        .slice(1)
        .map(Number);
    assert.deepEqual(line('execution_logs'), [logCount, logCount, logCount]);
    assert.deepEqual(line('organizations'), [3, 3, 3]);
    assert.deepEqual(line('api_keys'), [6, 6, 6]);
    assert.deepEqual(line('projects'), [6, 6, 6]);
    assert.deepEqual(line('models'), [3, 3, 3]);
    assert.deepEqual(line('annotations'), [6, 6, 6]);
    assert.doesNotMatch(res.stdout + res.stderr, /log_torn/);

    // Independent check through the Store interface: both stores answer the same.
    const json = new JsonStore({ dataDir, role: 'cli' });
    await json.init();
    const pg = new PostgresStore({ connectionString: schema.url, poolMax: 2 });
    await pg.init();
    try {
      const same = async (what: string, read: (s: Store) => Promise<unknown>) => assert.deepEqual(await read(pg), await read(json), what);
      for (const id of orgIds) {
        await same(`org ${id}`, (s) => s.getOrganization(id));
        await same(`keys of ${id}`, (s) => all((p) => s.listApiKeys(id, p)));
        await same(`projects of ${id}`, (s) => all((p) => s.listProjects(id, p)));
        await same(`models of ${id}`, (s) => all((p) => s.listModels(id, p)));
        await same(`evaluators of ${id}`, (s) => all((p) => s.listEvaluators({ org_id: id, include_public: true }, p)));
        await same(`judges of ${id}`, (s) => all((p) => s.listJudges({ org_id: id, include_public: true }, p)));
        const logs = await all((p) => pg.listExecutionLogs({ org_id: id }, p));
        assert.equal(logs.length, 834);
        await same(`logs of ${id}`, (s) => all((p) => s.listExecutionLogs({ org_id: id }, p)));
        await same(`annotations of ${id}`, (s) => all((p) => s.listAnnotations({ org_id: id }, p)));
        await same(`filtered logs of ${id}`, (s) => all((p) => s.listExecutionLogs({ org_id: id, tags: ['a', 'n2'], min_score: 0.3, max_cost: 0.05 }, p)));
      }
      for (const id of evaluatorIds) await same(`versions of ${id}`, (s) => s.listEvaluatorVersions(id));
      for (const id of judgeIds) await same(`versions of ${id}`, (s) => s.listJudgeVersions(id));
      await same('presets', (s) => all((p) => s.listEvaluators({ org_id: 'org_nobody', include_public: true, is_preset: true }, p)));
      await same('judges using an evaluator', (s) => s.findJudgesUsingEvaluator('preset_answer_relevance').then((r) => r.sort((a, b) => a.id.localeCompare(b.id))));
      assert.equal(await pg.getExecutionLog('log_torn'), null);
    } finally {
      await json.close();
      await pg.close();
    }
  });

  it('a second run copies nothing and verifies everything (safe to re-run)', async () => {
    const res = await tribunal(['migrate', '--from', 'json', '--to', 'postgres', '--data-dir', dataDir, '--database-url', schema.url, '--json']);
    assert.equal(res.code, 0, res.stderr);
    const report = JSON.parse(res.stdout);
    assert.equal(report.ok, true);
    for (const [kind, c] of Object.entries(report.counts) as Array<[string, { source: number; copied: number; verified: number }]>) {
      assert.equal(c.copied, 0, kind);
      assert.equal(c.verified, c.source, kind);
    }
    assert.equal(report.counts.execution_logs.source, logCount);
  });

  it('reports a record that differs in PostgreSQL and fails', async () => {
    const pg = new PostgresStore({ connectionString: schema.url, poolMax: 1 });
    await pg.init();
    const victim = (await pg.sql('SELECT id FROM execution_logs ORDER BY id LIMIT 1')).rows[0].id;
    await pg.sql('UPDATE execution_logs SET response = $2 WHERE id = $1', [victim, 'tampered']);
    await pg.close();
    const res = await tribunal(['migrate', '--from', 'json', '--to', 'postgres', '--data-dir', dataDir, '--database-url', schema.url]);
    assert.equal(res.code, 1);
    assert.match(res.stdout, new RegExp(`execution_logs: ${victim} differs in PostgreSQL`));
    assert.match(res.stdout, /Verification FAILED \(1 differences\)/);
  });

  it('refuses a data directory a running server holds, and bad arguments', async () => {
    const held = tempDir('tribunal-migrate-held-');
    const server = new JsonStore({ dataDir: held });
    await server.init();
    try {
      const res = await tribunal(['migrate', '--from', 'json', '--to', 'postgres', '--data-dir', held, '--database-url', schema.url]);
      assert.equal(res.code, 1);
      assert.match(res.stderr, /in use by a Tribunal server/);
    } finally {
      await server.close();
      fs.rmSync(held, { recursive: true, force: true });
    }
    const wrong = await tribunal(['migrate', '--from', 'postgres', '--to', 'json']);
    assert.equal(wrong.code, 2);
    assert.match(wrong.stderr, /--from json --to postgres/);
    const noUrl = await tribunal(['migrate', '--from', 'json', '--to', 'postgres', '--data-dir', dataDir]);
    assert.equal(noUrl.code, 2);
    assert.match(noUrl.stderr, /--database-url/);
  });
});

describe('tribunal migrate: datasets, batch runs, calibration runs, registered models', () => {
  let dataDir: string;
  let schema: TestSchema;
  let anthropic: FakeAnthropic;
  let openai: FakeOpenAI;
  const secret = randomBytes(32).toString('base64');
  const modelKey = `sk-test-${randomBytes(12).toString('hex')}`;
  let key: string;
  let orgId: string;
  let datasetId: string;
  let itemIds: string[];
  let judgeId: string;
  let mineEvaluatorId: string;
  let calibrationId: string;
  let datasetRunId: string;
  let inlineRunId: string;
  let runningId: string;
  /** What the JSON server answered over REST, by path: PostgreSQL must answer the same. */
  const answers = new Map<string, unknown>();
  const paths = () => [
    `/v1/datasets/${datasetId}/`,
    `/v1/datasets/${datasetId}/items/?limit=2`,
    ...itemIds.map((id) => `/v1/datasets/${datasetId}/items/${id}/`),
    `/v1/judges/batch-executions/${datasetRunId}/`,
    `/v1/judges/batch-executions/${inlineRunId}/`,
    `/v1/judges/batch-executions/${datasetRunId}/results/?limit=50`,
    `/v1/judges/batch-executions/${inlineRunId}/results/?limit=50`,
    `/v1/calibration-runs/${calibrationId}/`,
    `/v1/calibration-runs/${calibrationId}/items/?limit=50`,
    `/v1/calibration-runs/?judge_id=${judgeId}`,
    `/v1/judges/${judgeId}/`,
    `/v1/models/`,
  ];
  const env = () => ({
    ANTHROPIC_API_KEY: DUMMY_KEY,
    ANTHROPIC_BASE_URL: anthropic.url,
    TRIBUNAL_MODEL: TEST_MODEL,
    TRIBUNAL_MODEL_BACKOFF: '1ms',
    TRIBUNAL_MODEL_BACKOFF_MAX: '4ms',
    TRIBUNAL_RATE_LIMIT: '100000',
    TRIBUNAL_SECRET_KEY: secret,
  });
  const call = async (server: TestServer, method: string, p: string, body?: unknown) => server.request(method, p, { key, body });
  /** A GET, following next_cursor to the end: cursors are the store's own (a JSON position, a PostgreSQL row number). */
  const read = async (server: TestServer, p: string) => {
    const first = await call(server, 'GET', p);
    assert.equal(first.status, 200, `${p}: ${JSON.stringify(first.body)}`);
    if (!first.body || !('next_cursor' in first.body)) return first.body;
    const { next_cursor: _c, ...body } = first.body;
    let cursor: string | null = first.body.next_cursor;
    while (cursor) {
      const next = await call(server, 'GET', `${p}${p.includes('?') ? '&' : '?'}cursor=${encodeURIComponent(cursor)}`);
      assert.equal(next.status, 200, JSON.stringify(next.body));
      body.results.push(...next.body.results);
      cursor = next.body.next_cursor;
    }
    return body;
  };
  const waitEnded = async (server: TestServer, p: string) => {
    for (let i = 0; i < 800; i++) {
      const res = await call(server, 'GET', p);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      if (['completed', 'failed', 'cancelled'].includes(res.body.status)) return res.body;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`${p} did not end`);
  };

  before(async () => {
    dataDir = tempDir('tribunal-migrate-runs-');
    schema = await createTestSchema('trb_migrate_runs');
    anthropic = await startFakeAnthropic();
    openai = await startFakeOpenAI({ apiKey: modelKey });
    // A JSON server, whatever TRIBUNAL_TEST_STORE says: the migration's source is a JSON directory.
    const json = new JsonStore({ dataDir });
    await json.init();
    const server = await startTestServer(env(), { store: json });
    try {
      const demo = await server.demoUser();
      key = demo.api_key;
      orgId = demo.organization_id;
      const model = await call(server, 'POST', '/v1/models/', { name: 'mine', provider: 'openai', base_url: openai.url, model: 'm', api_key: modelKey });
      assert.equal(model.status, 201, JSON.stringify(model.body));
      mineEvaluatorId = (await call(server, 'POST', '/v1/evaluators/', evaluatorBody({ name: 'Migrate mine', model: 'mine' }))).body.id;
      assert.equal((await call(server, 'POST', `/v1/evaluators/${mineEvaluatorId}/execute/`, { request: 'q', response: 'a' })).status, 200);
      const grounded = (await call(server, 'POST', '/v1/evaluators/', evaluatorBody({ name: 'Migrate grounded' }))).body;
      judgeId = (await call(server, 'POST', '/v1/judges/', { name: 'Migrate judge', intent: 'Judges replies.', evaluator_ids: [grounded.id] })).body.id;
      datasetId = (await call(server, 'POST', '/v1/datasets/', { name: 'migrate golden', description: 'labelled' })).body.id;
      const added = await call(server, 'POST', `/v1/datasets/${datasetId}/items/`, {
        items: [
          { request: 'Q0', response: 'Open at 9.', expected_scores: { 'Migrate grounded': 1 }, tags: ['hours'] },
          { request: 'Q1', response: 'Open at 10.', expected_scores: { 'Migrate grounded': 0.2 }, metadata: { note: 'wrong day' } },
          {
            turns: [
              { role: 'user', content: 'Book me a table for two.' },
              { role: 'assistant', content: 'Which evening?', tool_calls: [{ name: 'lookup', arguments: { day: 'fri' } }] },
            ],
            system_prompt: 'You book tables.',
            expected_scores: { 'Migrate grounded': 0.8 },
          },
          { request: 'Q3', response: 'No idea.', contexts: ['The shop opens at 9.'], expected_scores: { 'Migrate grounded': 0 } },
        ],
      });
      assert.equal(added.status, 201, JSON.stringify(added.body));
      itemIds = added.body.ids;
      // A calibration run: a batch run over the dataset, measured against the people's scores.
      const started = await call(server, 'POST', '/v1/calibration-runs/', { judge_id: judgeId, dataset_id: datasetId });
      assert.equal(started.status, 202, JSON.stringify(started.body));
      calibrationId = started.body.id;
      const calibration = await waitEnded(server, `/v1/calibration-runs/${calibrationId}/`);
      assert.equal(calibration.status, 'completed');
      assert.ok(calibration.metrics?.length);
      datasetRunId = calibration.batch_execution_id;
      // A run over items given in the request.
      const inline = await call(server, 'POST', `/v1/judges/${judgeId}/batch-execute/`, { items: [{ request: 'x', response: 'a' }, { response: 'b' }] });
      assert.equal(inline.status, 202, JSON.stringify(inline.body));
      inlineRunId = inline.body.batch_execution_id;
      assert.equal((await waitEnded(server, `/v1/judges/batch-executions/${inlineRunId}/`)).status, 'completed');
      for (const p of paths()) answers.set(p, await read(server, p));
      assert.equal((answers.get(`/v1/datasets/${datasetId}/items/?limit=2`) as { results: unknown[] }).results.length, 4);
    } finally {
      await server.close();
    }
    // A run the server was stopped in the middle of: running, its planner part-way, one row recorded.
    const done = (await json.getBatchExecution(datasetRunId))!;
    const running = batch(orgId, {
      key_id: done.key_id,
      judge_id: judgeId,
      judge_version: done.judge_version,
      dataset_id: datasetId,
      status: 'running',
      total: 4,
      planned: 2,
      plan_cursor: 1,
      started_at: new Date().toISOString(),
      created_at: new Date().toISOString(),
      tags: ['resumed'],
    });
    runningId = running.id;
    await json.createBatchExecution(running);
    assert.equal(await json.recordBatchRow(runningId, row(0, { item_id: itemIds[0], execution_log_id: null, score: 0.7, cost_usd: 0.25 })), true);
    // An earlier migration stopped after the dataset and its first two items: the rest follow.
    const pg = new PostgresStore({ connectionString: schema.url, poolMax: 2 });
    await pg.init();
    await pg.createDataset((await json.getDataset(datasetId))!);
    await pg.addDatasetItems(datasetId, (await json.listDatasetItems(datasetId, { limit: 2 })).items);
    await pg.close();
    await json.close();
  });

  after(async () => {
    fs.rmSync(dataDir, { recursive: true, force: true });
    await schema?.drop();
    await anthropic?.close();
    await openai?.close();
  });

  it('copies them a page at a time, keeping ids, order, rows and counters, and they read back the same through the store', async () => {
    const { migrateJsonToPostgres, formatReport } = await import('../src/store/migrate-json.ts');
    const report = await migrateJsonToPostgres({ dataDir, databaseUrl: schema.url, batchSize: 2, rooms: migrateRooms });
    assert.equal(report.ok, true, formatReport(report));
    const c = report.counts;
    assert.deepEqual(c.datasets, { source: 1, copied: 0, verified: 1 }); // there already, from the interrupted run
    assert.deepEqual(c.dataset_items, { source: 4, copied: 2, verified: 4 });
    assert.deepEqual(c.batch_executions, { source: 3, copied: 3, verified: 3 });
    assert.deepEqual(c.batch_rows, { source: 4 + 2 + 1, copied: 7, verified: 7 });
    assert.deepEqual(c.batch_items, { source: 2, copied: 2, verified: 2 });
    assert.deepEqual(c.calibration_runs, { source: 1, copied: 1, verified: 1 });
    assert.deepEqual(c.models, { source: 1, copied: 1, verified: 1 });

    const json = new JsonStore({ dataDir, role: 'cli' });
    await json.init();
    const pg = new PostgresStore({ connectionString: schema.url, poolMax: 2 });
    await pg.init();
    try {
      const same = async (what: string, read: (s: Store) => Promise<unknown>) => assert.deepEqual(await read(pg), await read(json), what);
      await same('datasets', (s) => all((p) => s.listDatasets({ org_id: orgId }, p)));
      await same('items', (s) => allItems(s, datasetId, 3));
      assert.deepEqual(
        (await allItems(pg, datasetId, 10)).map((i) => i.id),
        itemIds,
      );
      assert.equal((await pg.getDatasetItem(datasetId, itemIds[2]))!.turns![1].tool_calls![0].name, 'lookup');
      await same('calibration runs', (s) => all((p) => s.listCalibrationRuns({ org_id: orgId }, p)));
      await same('models', (s) => all((p) => s.listModels(orgId, p)));
      for (const id of [datasetRunId, inlineRunId, runningId]) {
        await same(`rows of ${id}`, (s) => s.listBatchRows(id, { limit: 100 }));
        await same(`items of ${id}`, (s) => s.getBatchItems(id, 0, 100));
      }
      for (const id of [datasetRunId, inlineRunId]) await same(`run ${id}`, (s) => s.getBatchExecution(id));
      const completed = (await pg.getBatchExecution(datasetRunId))!;
      assert.deepEqual([completed.status, completed.total, completed.done + completed.failed], ['completed', 4, 4]);
      assert.equal((await pg.getBatchItems(inlineRunId, 0, 10)).length, 2);
      // The unfinished run: as it was, its planner reset so that PostgreSQL plans it from its first row.
      const running = (await json.getBatchExecution(runningId))!;
      assert.deepEqual(await pg.getBatchExecution(runningId), { ...running, planned: 0, planned_all: false, plan_cursor: null });
      assert.deepEqual([running.done, running.failed, running.cost_usd], [1, 0, 0.25]);
      assert.deepEqual(
        (await pg.listUnfinishedBatchExecutions()).map((b) => b.id),
        [runningId],
      );
    } finally {
      await json.close();
      await pg.close();
    }
  });

  it('a second run copies nothing and verifies everything: nothing is duplicated', async () => {
    const res = await tribunal(['migrate', '--from', 'json', '--to', 'postgres', '--data-dir', dataDir, '--database-url', schema.url, '--json']);
    assert.equal(res.code, 0, res.stdout + res.stderr);
    const report = JSON.parse(res.stdout);
    assert.equal(report.ok, true, res.stdout);
    for (const [kind, c] of Object.entries(report.counts) as Array<[string, { source: number; copied: number; verified: number }]>) {
      assert.equal(c.copied, 0, kind);
      assert.equal(c.verified, c.source, kind);
    }
    const pg = new PostgresStore({ connectionString: schema.url, poolMax: 1 });
    await pg.init();
    try {
      const count = async (table: string) => Number((await pg.sql(`SELECT count(*) AS n FROM ${table}`)).rows[0].n);
      assert.deepEqual(
        {
          datasets: await count('datasets'),
          items: await count('dataset_items'),
          runs: await count('batch_executions'),
          rows: await count('batch_rows'),
          inline: await count('batch_items'),
          calibrations: await count('calibration_runs'),
          models: await count('models'),
        },
        { datasets: 1, items: 4, runs: 3, rows: 7, inline: 2, calibrations: 1, models: 1 },
      );
      assert.equal((await pg.getDataset(datasetId))!.item_count, 4);
      const running = (await pg.getBatchExecution(runningId))!;
      assert.deepEqual([running.done, running.failed, running.cost_usd], [1, 0, 0.25]);
    } finally {
      await pg.close();
    }
  });

  it('reports an item that differs in PostgreSQL; a row missing there is copied again (its run then counts one too many)', async () => {
    const pg = new PostgresStore({ connectionString: schema.url, poolMax: 1 });
    await pg.init();
    const saved = (await pg.sql('SELECT record FROM dataset_items WHERE id = $1', [itemIds[1]])).rows[0].record;
    const savedRow = (await pg.sql('SELECT record FROM batch_rows WHERE batch_id = $1 AND position = 1', [inlineRunId])).rows[0].record;
    try {
      await pg.sql('UPDATE dataset_items SET record = $2 WHERE id = $1', [itemIds[1], JSON.stringify({ ...saved, response: 'tampered' })]);
      await pg.sql('DELETE FROM batch_rows WHERE batch_id = $1 AND position = 1', [inlineRunId]);
      const { migrateJsonToPostgres } = await import('../src/store/migrate-json.ts');
      // The deleted row is copied again (its counters are not: they count it already), the edited item is not.
      const report = await migrateJsonToPostgres({ dataDir, databaseUrl: schema.url, rooms: migrateRooms });
      assert.equal(report.ok, false);
      assert.deepEqual(report.mismatches, [`dataset_items: ${datasetId} ${itemIds[1]} differs in PostgreSQL`, `batch_executions: ${inlineRunId} differs in PostgreSQL`]);
      assert.equal(report.counts.batch_rows.copied, 1);
    } finally {
      await pg.sql('UPDATE dataset_items SET record = $2 WHERE id = $1', [itemIds[1], JSON.stringify(saved)]);
      await pg.sql('UPDATE batch_rows SET record = $3 WHERE batch_id = $1 AND position = $2', [inlineRunId, 1, JSON.stringify(savedRow)]);
      const b = (await pg.getBatchExecution(inlineRunId))!;
      await pg.sql('UPDATE batch_executions SET done = $2, failed = $3 WHERE id = $1', [
        inlineRunId,
        b.done - (savedRow.score !== null ? 1 : 0),
        b.failed - (savedRow.score !== null ? 0 : 1),
      ]);
      await pg.close();
    }
  });

  it('on PostgreSQL: REST answers the same, the sealed model key opens with the same secret, and the unfinished run finishes', async () => {
    const pg = new PostgresStore({ connectionString: schema.url, poolMax: 4 });
    await pg.init();
    const server = await startTestServer(env(), { store: pg });
    try {
      for (const [p, body] of answers) assert.deepEqual(await read(server, p), body, p);
      const before = openai.requests.length;
      const run = await call(server, 'POST', `/v1/evaluators/${mineEvaluatorId}/execute/`, { request: 'q', response: 'a' });
      assert.equal(run.status, 200, JSON.stringify(run.body));
      assert.ok(openai.requests.length > before);
      assert.equal(openai.requests.at(-1)!.headers.authorization, `Bearer ${modelKey}`);

      const resumed = await waitEnded(server, `/v1/judges/batch-executions/${runningId}/`);
      assert.equal(resumed.status, 'completed', JSON.stringify(resumed));
      assert.equal(resumed.done + resumed.failed, 4);
      const rows = (await call(server, 'GET', `/v1/judges/batch-executions/${runningId}/results/?limit=50`)).body.results;
      assert.deepEqual(
        rows.map((r: any) => r.position),
        [0, 1, 2, 3],
      );
      assert.deepEqual(
        rows.map((r: any) => r.item_id),
        itemIds,
      );
      // The row recorded in the JSON directory stands; the others were scored on PostgreSQL.
      assert.deepEqual([rows[0].score, rows[0].execution_log_id], [0.7, null]);
      assert.ok(rows.slice(1).every((r: any) => r.execution_log_id));
    } finally {
      await server.close();
      await pg.close();
    }
  });
});
