// `tribunal migrate --from json --to postgres`: a JSON data directory copied into PostgreSQL with
// nothing lost, counted and verified; a second run copies nothing and verifies everything; a
// difference is found and reported; a directory a server holds is refused.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { syncPresets } from '../src/domain/presets.ts';
import { JsonStore } from '../src/store/json-store.ts';
import { PostgresStore } from '../src/store/postgres-store.ts';
import type { Page, PageQuery, Store } from '../src/store/types.ts';
import { createTestSchema, type TestSchema } from './helpers/postgres.ts';
import { tempDir } from './helpers/server.ts';
import { apiKey, evaluator, judge, log, org, project, registeredModel } from './store-contract.ts';
import { annotation } from './store-contract-calibration.ts';

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
        appends.push(json.appendExecutionLog(
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
        ));
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
    const line = (kind: string) => res.stdout.split('\n').find((l) => l.trim().startsWith(`${kind} `))!.trim().split(/\s+/).slice(1).map(Number);
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
