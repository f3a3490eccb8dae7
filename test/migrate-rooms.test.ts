// `tribunal migrate --from json --to postgres` with this round's data: a JSON data directory made
// through a real server (REST, OTLP, the fake judge model) holding attachments, a review queue with
// items, leases and labels, evaluation rules with counters and queued units, spans and their
// evaluations, budget caps and counters, plus claim tokens, synthetic data and a provider batch.
// Migrated into a fresh PostgreSQL schema: each kind counted and verified, a second run copies
// nothing, a difference is reported, what is left behind is said; then a server on PostgreSQL
// answers the same (the files' bytes, the queue's items and labels, the rules and their status,
// the trace, the caps).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { migrateRooms } from '../src/cli/migrate-rooms.ts';
import { formatReport, migrateJsonToPostgres } from '../src/store/migrate-json.ts';
import { JsonStore } from '../src/store/json-store.ts';
import { PostgresStore } from '../src/store/postgres-store.ts';
import { pdf, png, upload } from './helpers/attachments.ts';
import { DUMMY_KEY, evaluatorBody, TEST_MODEL } from './helpers/execute.ts';
import { startFakeAnthropic, type FakeAnthropic } from './helpers/fake-anthropic.ts';
import { exportSpans, ExportResultCode, recordSpans } from './helpers/otel-export.ts';
import { createTestSchema, type TestSchema } from './helpers/postgres.ts';
import { startTestServer, tempDir, type TestServer } from './helpers/server.ts';

describe('tribunal migrate: attachments, review queues, evaluation rules, spans, budgets, surface, provider batches', () => {
  let dataDir: string;
  let schema: TestSchema;
  let anthropic: FakeAnthropic;
  let key: string;
  let orgId: string;
  let evaluatorId: string;
  let queueId: string;
  let ruleNow: string;
  let ruleLater: string;
  let traceId: string;
  const files: Array<{ id: string; data: Buffer }> = [];
  /** What the JSON server answered, by path: the server on PostgreSQL must answer the same. */
  const answers = new Map<string, any>();
  const env = () => ({ ANTHROPIC_API_KEY: DUMMY_KEY, ANTHROPIC_BASE_URL: anthropic.url, TRIBUNAL_MODEL: TEST_MODEL, TRIBUNAL_RATE_LIMIT: '100000' });
  const call = async (server: TestServer, method: string, p: string, body?: unknown, as = key) => {
    const res = await server.request(method, p, { key: as, body });
    assert.ok(res.status < 300, `${method} ${p}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const paths = () => [
    ...files.map((f) => `/v1/files/${f.id}/`),
    `/v1/review-queues/${queueId}/`,
    `/v1/review-queues/${queueId}/items/?limit=50`,
    `/v1/evaluation-rules/${ruleNow}/`,
    `/v1/traces/${traceId}/`,
  ];
  const migrate = () => migrateJsonToPostgres({ dataDir, databaseUrl: schema.url, batchSize: 2, rooms: migrateRooms });

  before(async () => {
    dataDir = tempDir('tribunal-migrate-rooms-');
    schema = await createTestSchema('trb_migrate_rooms');
    anthropic = await startFakeAnthropic();
    // A JSON server, whatever TRIBUNAL_TEST_STORE says: the migration's source is a JSON directory.
    const json = new JsonStore({ dataDir });
    await json.init();
    const server = await startTestServer(env(), { store: json });
    try {
      const { createOrganization } = await import('../src/domain/orgs.ts');
      const created = await createOrganization(server.store, { name: 'Migrating rooms', isDemo: false });
      [key, orgId] = [created.api_key, created.organization.id];
      const reviewers = [];
      for (let i = 0; i < 3; i++) reviewers.push((await call(server, 'POST', '/v1/api-keys/', { name: `reviewer ${i}` })).api_key as string);
      evaluatorId = (await call(server, 'POST', '/v1/evaluators/', evaluatorBody())).id;
      // Runs make logs for the queue and spend for the budget counters.
      const logIds: string[] = [];
      for (let i = 0; i < 3; i++) logIds.push((await call(server, 'POST', `/v1/evaluators/${evaluatorId}/execute/`, { request: `q${i}`, response: `a${i}` })).execution_log_id);
      await call(server, 'POST', `/v1/budgets/evaluators/${evaluatorId}/`, { daily_usd: 5 });
      // Attachments: two files, their bytes on disk in the JSON directory.
      for (const [name, data] of [
        ['chart.png', png(7)],
        ['invoice.pdf', pdf('Migrated invoice')],
      ] as const) {
        const res = await upload(server.url, key, data, name);
        assert.equal(res.status, 201, JSON.stringify(res.body));
        files.push({ id: res.body.id, data });
      }
      // A review queue: one item labelled by one person and skipped by another, one leased right now.
      const q = await call(server, 'POST', '/v1/review-queues/', { name: 'migrating', evaluator_ids: [evaluatorId], annotators_per_item: 2 });
      queueId = q.id;
      await call(server, 'POST', `/v1/review-queues/${queueId}/items/`, { execution_log_ids: logIds });
      const first = await call(server, 'POST', `/v1/review-queues/${queueId}/next/`, {}, reviewers[0]);
      await call(
        server,
        'POST',
        `/v1/review-queues/${queueId}/items/${first.item_id}/annotations/`,
        { annotations: [{ evaluator_id: evaluatorId, score: 0.8, note: 'fine' }] },
        reviewers[0],
      );
      const second = await call(server, 'POST', `/v1/review-queues/${queueId}/next/`, {}, reviewers[1]);
      await call(server, 'POST', `/v1/review-queues/${queueId}/items/${second.item_id}/skip/`, { reason: 'not my language' }, reviewers[1]);
      await call(server, 'POST', `/v1/review-queues/${queueId}/next/`, {}, reviewers[2]); // held when the server stops
      // Evaluation rules: one judges its spans at once, one waits an hour (its unit stays queued).
      const filter = (service: string) => [{ field: 'service.name', op: 'eq', value: service }];
      ruleNow = (await call(server, 'POST', '/v1/evaluation-rules/', { name: 'now', evaluator_id: evaluatorId, filter: filter('mig-now') })).id;
      ruleLater = (await call(server, 'POST', '/v1/evaluation-rules/', { name: 'later', evaluator_id: evaluatorId, filter: filter('mig-later'), delay_seconds: 3600 })).id;
      for (const service of ['mig-now', 'mig-later']) {
        const spans = await recordSpans(service, (tracer) => {
          tracer
            .startSpan(`chat ${service}`, {
              attributes: {
                'gen_ai.input.messages': JSON.stringify([{ role: 'user', content: 'Where is my parcel?' }]),
                'gen_ai.output.messages': JSON.stringify([{ role: 'assistant', content: 'On its way.' }]),
              },
            })
            .end();
        });
        if (service === 'mig-now') traceId = spans[0].spanContext().traceId;
        assert.equal((await exportSpans({ url: server.url, key, encoding: 'json' }, spans)).code, ExportResultCode.SUCCESS);
      }
      for (let i = 0; i < 400; i++) {
        const st = (await call(server, 'GET', `/v1/evaluation-rules/${ruleNow}/`)).status;
        if (st.done + st.failed >= 1) break;
        await new Promise((r) => setTimeout(r, 25));
      }
      assert.equal((await call(server, 'GET', `/v1/evaluation-rules/${ruleNow}/`)).status.done, 1);
      assert.equal((await call(server, 'GET', `/v1/evaluation-rules/${ruleLater}/`)).status.queued, 1);
      for (const p of paths()) answers.set(p, await call(server, 'GET', p));
      answers.set('budgets', await call(server, 'GET', '/v1/budgets/'));
      answers.set('later', await call(server, 'GET', `/v1/evaluation-rules/${ruleLater}/`));
    } finally {
      await server.close();
    }
    // Records the REST doors make only with a real provider or a demo claim: through the store.
    const now = new Date().toISOString();
    await json.createClaimToken({ token_hash: 'a'.repeat(64), judge_id: 'jdg_claimable', org_id: orgId, created_at: now, expires_at: now, used_at: null, used_by_org_id: null });
    await json.useClaimToken('a'.repeat(64), now, orgId);
    await json.putSyntheticData({
      judge_id: 'jdg_synthetic',
      org_id: orgId,
      key_id: 'key_1',
      status: 'ready',
      count: 1,
      name: 'Support',
      description: 'Answers customers',
      samples: [{ quality: 'low', request: 'q', response: 'a', fails_evaluator: evaluatorId, failure: 'off topic' }],
      error: null,
      created_at: now,
      updated_at: now,
    });
    await json.createProviderBatch({
      id: 'pbt_1',
      batch_id: 'bex_1',
      org_id: orgId,
      provider: 'anthropic',
      account: `server:${TEST_MODEL}`,
      provider_batch_id: 'msgbatch_1',
      status: 'in_progress',
      custom_ids: ['r0-abc', 'r1-def'],
      error: null,
      created_at: now,
      updated_at: now,
    });
    await json.close();
  });

  after(async () => {
    fs.rmSync(dataDir, { recursive: true, force: true });
    await schema?.drop();
    await anthropic?.close();
  });

  it('copies every kind, verifies it, and says what it left behind', async () => {
    const report = await migrate();
    assert.equal(report.ok, true, formatReport(report));
    const c = report.counts;
    const all = (n: number) => ({ source: n, copied: n, verified: n });
    assert.deepEqual(c.files, all(2));
    assert.deepEqual(c.review_queues, all(1));
    assert.deepEqual(c.review_items, all(3));
    assert.deepEqual(c.review_leases, all(3)); // done, skipped, and the one still held (it keeps its expiry)
    assert.deepEqual(c.review_labels, all(1));
    assert.deepEqual(c.evaluation_rules, all(2));
    assert.ok(c.rule_counters.source >= 3 && c.rule_counters.copied === c.rule_counters.source, JSON.stringify(c.rule_counters));
    assert.deepEqual(c.rule_units, all(1)); // the unit waiting out its delay
    assert.deepEqual(c.trace_spans, all(2));
    assert.deepEqual(c.span_evaluations, all(1));
    assert.deepEqual(c.budget_caps, all(1));
    assert.ok(c.budget_counters.source >= 2 && c.budget_counters.copied === c.budget_counters.source, JSON.stringify(c.budget_counters));
    assert.deepEqual(c.claim_tokens, all(1));
    assert.deepEqual(c.synthetic_data, all(1));
    assert.deepEqual(c.provider_batches, all(1));
    assert.deepEqual(report.not_copied, []); // nothing left behind here: budget reservations are the only such thing
  });

  it('a second run copies nothing and verifies everything', async () => {
    const report = await migrate();
    assert.equal(report.ok, true, formatReport(report));
    for (const [kind, n] of Object.entries(report.counts)) {
      assert.equal(n.copied, 0, `${kind} copied again`);
      assert.equal(n.verified, n.source, kind);
    }
  });

  it('reports a label, a cap and a file that differ in PostgreSQL', async () => {
    const pg = new PostgresStore({ connectionString: schema.url, poolMax: 1 });
    await pg.init();
    try {
      await pg.sql('UPDATE review_labels SET score = 0.1 WHERE queue_id = $1', [queueId]);
      await pg.sql('UPDATE budget_caps SET cap_usd = 1 WHERE org_id = $1', [orgId]);
      await pg.sql(`UPDATE files SET data = decode('00', 'hex') WHERE id = $1`, [files[0].id]);
      const report = await migrate();
      assert.equal(report.ok, false);
      assert.deepEqual(
        report.mismatches.map((m) => m.split(':')[0]),
        ['files', 'budget_caps', 'review_labels'],
      );
      assert.match(report.mismatches[0], /has other bytes in PostgreSQL/);
    } finally {
      await pg.sql('UPDATE review_labels SET score = 0.8 WHERE queue_id = $1', [queueId]);
      await pg.sql('UPDATE budget_caps SET cap_usd = 5 WHERE org_id = $1', [orgId]);
      await pg.sql('UPDATE files SET data = $2 WHERE id = $1', [files[0].id, files[0].data]);
      await pg.close();
    }
    assert.equal((await migrate()).ok, true);
  });

  it('an item PostgreSQL holds under another id is reported, not a crash; once removed, a run copies it back with its three leases and its label', async () => {
    const pg = new PostgresStore({ connectionString: schema.url, poolMax: 1 });
    await pg.init();
    try {
      const labelled = (await pg.sql('SELECT item_id FROM review_labels WHERE queue_id = $1', [queueId])).rows[0].item_id as string;
      const item = (await pg.sql('SELECT * FROM review_items WHERE id = $1', [labelled])).rows[0];
      await pg.sql('DELETE FROM review_items WHERE id = $1', [labelled]); // its leases and labels go with it
      await pg.sql('INSERT INTO review_items (id, queue_id, execution_log_id, source, created_at) VALUES ($1, $2, $3, $4, now())', [
        'rvi_stranger',
        queueId,
        item.execution_log_id,
        'manual',
      ]);
      const report = await migrate();
      assert.equal(report.ok, false);
      assert.deepEqual(report.mismatches.map((m) => m.split(':')[0]).sort(), ['review_items', 'review_labels', 'review_leases', 'review_leases', 'review_leases']);
      await pg.sql('DELETE FROM review_items WHERE id = $1', ['rvi_stranger']);
      const repaired = await migrate();
      assert.equal(repaired.ok, true, formatReport(repaired));
      assert.deepEqual([repaired.counts.review_items.copied, repaired.counts.review_leases.copied, repaired.counts.review_labels.copied], [1, 3, 1]);
    } finally {
      await pg.close();
    }
  });

  it('on PostgreSQL: the files, the queue, the rules, the trace and the caps answer as they did', async () => {
    const pg = new PostgresStore({ connectionString: schema.url });
    await pg.init();
    const server = await startTestServer(env(), { store: pg });
    try {
      for (const p of paths()) assert.deepEqual(await call(server, 'GET', p), answers.get(p), p);
      for (const f of files) assert.ok((await pg.files.read(orgId, f.id))?.equals(f.data), `bytes of ${f.id}`);
      // The unit waiting out its delay waits on PostgreSQL (its age moves on with the clock).
      const later = await call(server, 'GET', `/v1/evaluation-rules/${ruleLater}/`);
      const { oldest_queued_age_s: _a, ...status } = later.status;
      const { oldest_queued_age_s: _b, ...before } = answers.get('later').status;
      assert.deepEqual(status, before);
      assert.equal(status.queued, 1);
      const budgets = await call(server, 'GET', '/v1/budgets/');
      assert.deepEqual(budgets, answers.get('budgets'));
      assert.equal((await pg.getClaimToken('a'.repeat(64)))?.used_by_org_id, orgId);
      assert.equal((await pg.getSyntheticData('jdg_synthetic'))?.samples[0].failure, 'off topic');
      assert.deepEqual(
        (await pg.listProviderBatches('bex_1')).map((b) => [b.id, b.provider_batch_id, b.status]),
        [['pbt_1', 'msgbatch_1', 'in_progress']],
      );
    } finally {
      await server.close();
      await pg.close();
    }
  });
});
