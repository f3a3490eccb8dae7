// Two Tribunal processes on one PostgreSQL database, as in production behind a load balancer:
// they start together on a fresh database, what one writes the other serves, an MCP client whose
// requests alternate between them keeps working, and 1,000 concurrent runs spread over both leave
// exactly 1,000 execution logs.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import pg from 'pg';
import { loadPresets } from '../src/domain/presets.ts';
import { loadCheckPresets } from '../src/checks/presets.ts'; // h-checks: the check and code presets are seeded too
import { loadMigrations } from '../src/store/migrate-schema.ts';
import { startFakeAnthropic, type FakeAnthropic } from './helpers/fake-anthropic.ts';
import { startInstance, type Instance } from './helpers/instances.ts';
import { createTestSchema, type TestSchema } from './helpers/postgres.ts';

describe('two instances on one PostgreSQL', () => {
  let schema: TestSchema;
  let fake: FakeAnthropic;
  let a: Instance;
  let b: Instance;
  let db: pg.Client;
  let key: string;

  before(async () => {
    schema = await createTestSchema('trb_multi');
    fake = await startFakeAnthropic();
    const env = {
      TRIBUNAL_STORE: 'postgres',
      DATABASE_URL: schema.url,
      ANTHROPIC_API_KEY: 'sk-ant-test-dummy',
      ANTHROPIC_BASE_URL: fake.url,
      TRIBUNAL_MODEL_BACKOFF: '1ms',
      TRIBUNAL_MODEL_BACKOFF_MAX: '4ms',
      TRIBUNAL_RATE_LIMIT: '100000',
    };
    // Started at the same moment on an empty schema: both run the migrations and seed the presets.
    [a, b] = await Promise.all([startInstance(env), startInstance(env)]);
    db = new pg.Client({ connectionString: schema.url });
    await db.connect();
    const demo = await a.request('POST', '/create-demo-user/');
    assert.equal(demo.status, 201);
    key = demo.body.api_key;
  });

  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await db?.end();
    await fake?.close();
    await schema?.drop();
  });

  it('started together, they applied each migration and seeded each preset once', async () => {
    const migrations = await db.query('SELECT version FROM tribunal_migrations ORDER BY version');
    assert.deepEqual(
      migrations.rows.map((r) => r.version),
      loadMigrations().map((m) => m.version),
    );
    const presets = await db.query('SELECT count(*)::int AS n, max(version) AS v FROM evaluators WHERE is_preset');
    assert.deepEqual(presets.rows[0], { n: loadPresets().length + loadCheckPresets().length, v: 1 });
    for (const inst of [a, b]) {
      const health = await inst.request('GET', '/healthz');
      assert.equal(health.status, 200);
      assert.deepEqual(health.body.store, { kind: 'postgres', status: 'up' });
    }
  });

  it('a judge created through one instance runs through the other', async () => {
    const key2 = key;
    const evaluator = await a.request('POST', '/v1/evaluators/', {
      key: key2,
      body: { name: 'Politeness', intent: 'Is the reply polite?', rubric: '1: polite throughout. 0.5: curt. 0: rude.' },
    });
    assert.equal(evaluator.status, 201, JSON.stringify(evaluator.body));
    const judge = await b.request('POST', '/v1/judges/', {
      key: key2,
      body: { name: 'Support replies', intent: 'Judges support replies.', evaluator_ids: [evaluator.body.id, 'preset_answer_relevance'] },
    });
    assert.equal(judge.status, 201, JSON.stringify(judge.body));

    const run = await a.request('POST', `/v1/judges/${judge.body.id}/execute/`, {
      key: key2,
      body: { request: 'Where is my order?', response: 'It ships tomorrow.', tags: ['cross-instance'] },
    });
    assert.equal(run.status, 200, JSON.stringify(run.body));
    assert.deepEqual(
      run.body.evaluator_results.map((r: any) => r.evaluator_id),
      [evaluator.body.id, 'preset_answer_relevance'],
    );
    const logged = await b.request('GET', `/v1/execution-logs/${run.body.execution_log_id}/`, { key: key2 });
    assert.equal(logged.status, 200);
    assert.equal(logged.body.judge_id, judge.body.id);
    assert.deepEqual(logged.body.tags, ['cross-instance']);

    // An edit through one is the latest version through the other; a name clash is refused on both.
    const edited = await b.request('PATCH', `/v1/judges/${judge.body.id}/`, { key: key2, body: { intent: 'Judges support replies for tone and relevance.' } });
    assert.equal(edited.status, 200, JSON.stringify(edited.body));
    const seen = await a.request('GET', `/v1/judges/${judge.body.id}/`, { key: key2 });
    assert.equal(seen.body.version, 2);
    assert.equal(seen.body.intent, 'Judges support replies for tone and relevance.');
    const clash = await a.request('POST', '/v1/judges/', { key: key2, body: { name: 'Support replies', intent: 'again', evaluator_ids: [evaluator.body.id] } });
    assert.equal(clash.status, 409);
    const listed = await b.request('GET', '/v1/execution-logs/?tags=cross-instance', { key: key2 });
    assert.deepEqual(
      listed.body.results.map((l: any) => l.id),
      [run.body.execution_log_id],
    );
  });

  it('an MCP client whose requests alternate between the instances keeps working', async () => {
    const served: string[] = [];
    let turn = 0;
    // A load balancer without stickiness: each HTTP request goes to the next instance.
    const roundRobin = (input: string | URL | Request, init?: RequestInit) => {
      const target = [a, b][turn++ % 2];
      served.push(target.url);
      const url = new URL(typeof input === 'string' || input instanceof URL ? input.toString() : input.url);
      return fetch(target.url + url.pathname + url.search, init);
    };
    const transport = new StreamableHTTPClientTransport(new URL(`${a.url}/mcp`), {
      fetch: roundRobin,
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    });
    const client = new Client({ name: 'multi-instance-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const tools = await client.listTools();
      assert.equal(tools.tools.length, 14);
      const created = await client.callTool({
        name: 'create_evaluator',
        arguments: { name: 'MCP conciseness', intent: 'Is the answer concise?', rubric: '1: concise. 0.5: some padding. 0: rambling.' },
      });
      assert.equal(created.isError, undefined, JSON.stringify(created.content));
      const evaluatorId = (created.structuredContent as any).id;
      const ran = await client.callTool({ name: 'run_evaluator', arguments: { evaluator_id: evaluatorId, response: 'Yes.' } });
      assert.equal(ran.isError, undefined, JSON.stringify(ran.content));
      const logId = (ran.structuredContent as any).execution_log_id;
      const got = await client.callTool({ name: 'get_execution_log', arguments: { log_id: logId } });
      assert.equal(got.isError, undefined, JSON.stringify(got.content));
      assert.equal((got.structuredContent as any).evaluator_id, evaluatorId);
      const found = await client.callTool({ name: 'list_evaluators', arguments: { search: 'MCP conciseness' } });
      assert.deepEqual(
        (found.structuredContent as any).results.map((e: any) => e.id),
        [evaluatorId],
      );
    } finally {
      await client.close();
    }
    assert.ok(served.filter((u) => u === a.url).length >= 2 && served.filter((u) => u === b.url).length >= 2, `both instances served: ${served.join(' ')}`);
  });

  it('1,000 concurrent executions spread over both leave exactly 1,000 logs', async () => {
    const evaluator = await b.request('POST', '/v1/evaluators/', {
      key,
      body: { name: 'Load evaluator', intent: 'Counts runs.', rubric: '1: present. 0: absent.' },
    });
    assert.equal(evaluator.status, 201);
    const id = evaluator.body.id;
    const n = 1000;
    const results = await Promise.all(
      Array.from({ length: n }, (_, i) => (i % 2 ? a : b).request('POST', `/v1/evaluators/${id}/execute/`, { key, body: { response: `answer ${i}`, tags: [`run-${i % 10}`] } })),
    );
    const statuses = new Map<number, number>();
    for (const r of results) statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
    assert.deepEqual([...statuses], [[200, n]], `statuses: ${JSON.stringify([...statuses])}`);
    const logIds = new Set(results.map((r) => r.body.execution_log_id));
    assert.equal(logIds.size, n);

    const counted = await db.query('SELECT count(*)::int AS n FROM execution_logs WHERE evaluator_id = $1', [id]);
    assert.equal(counted.rows[0].n, n);
    // Paged through the API on the other instance: every run exactly once.
    const seen = new Set<string>();
    let cursor: string | null = null;
    do {
      const page: any = await a.request('GET', `/v1/execution-logs/?evaluator_id=${id}&limit=200${cursor ? `&cursor=${cursor}` : ''}`, { key });
      assert.equal(page.status, 200);
      for (const l of page.body.results) {
        assert.ok(!seen.has(l.id), 'no log twice');
        seen.add(l.id);
      }
      cursor = page.body.next_cursor;
    } while (cursor);
    assert.deepEqual(seen, logIds);
    const tagged = await b.request('GET', `/v1/execution-logs/?evaluator_id=${id}&tags=run-3&limit=200`, { key });
    assert.equal(tagged.body.results.length, n / 10);
  });
});
