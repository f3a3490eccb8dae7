// The Store contract: one suite, run against every store (test/store-json.test.ts,
// test/store-postgres.test.ts) with the same assertions. A store that passes it can back the server.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { purgeExpiredDemoOrganizations } from '../src/demo-purge.ts';
import { reviewStore } from '../src/review/store.ts';
import type { ReviewQueueRecord } from '../src/review/types.ts';
import { ruleStoreOf } from '../src/traces/rules/store.ts';
import type { RuleRecord } from '../src/traces/rules/types.ts';
import { traceStoreOf } from '../src/traces/store.ts';
import type { Span } from '../src/traces/types.ts';
import { newId } from '../src/ids.ts';
import type { Organization } from '../src/schemas.ts';
import {
  newestFirst,
  StoreConflictError,
  type ApiKeyRecord,
  type EvaluatorRecord,
  type ExecutionLogRecord,
  type JudgeRecord,
  type LogFilter,
  type ModelRecord,
  type Page,
  type PageQuery,
  type ProjectRecord,
  type Store,
} from '../src/store/types.ts';
import { defineCalibrationContract } from './store-contract-calibration.ts';
import { defineBatchContract } from './store-contract-batches.ts';
import { defineDatasetContract } from './store-contract-datasets.ts';
import { defineResultCacheContract } from './store-contract-result-cache.ts';
import { defineSurfaceContract } from './store-contract-surface.ts';
import { defineFilesContract } from './store-contract-files.ts';
import { defineChecksContract } from './store-contract-checks.ts'; // h-checks
import { defineBudgetContract } from './store-contract-budgets.ts';

// Record builders: complete, valid records with every field set, overridable.

const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms).toISOString();

export function org(over: Partial<Organization> = {}): Organization {
  return { id: newId('org'), name: 'Acme', is_demo: false, created_at: at(0), ...over };
}

export function apiKey(orgId: string, over: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  const id = newId('key');
  return {
    id,
    org_id: orgId,
    name: 'ci key',
    prefix: `trb_${id.slice(-16)}`,
    hash: 'a'.repeat(64),
    created_at: at(0),
    expires_at: null,
    last_used_at: null,
    revoked_at: null,
    ...over,
  };
}

export function registeredModel(orgId: string, over: Partial<ModelRecord> = {}): ModelRecord {
  return {
    id: newId('mdl'),
    org_id: orgId,
    name: `Model ${newId('mdl').slice(-6)}`,
    provider: 'openai',
    base_url: 'http://127.0.0.1:11434/v1',
    model: 'llama3.1:8b',
    api_key_hint: 'wxyz',
    api_key_encrypted: 'v1.iv.tag.body',
    max_concurrency: 4,
    price: { input: 0.1, output: 0.2 },
    capabilities: null,
    verified_at: null,
    created_at: at(0),
    updated_at: at(0),
    ...over,
  };
}

export function project(orgId: string, over: Partial<ProjectRecord> = {}): ProjectRecord {
  return { id: newId('prj'), org_id: orgId, name: `Project ${newId('prj').slice(-6)}`, description: 'for tests', is_default: false, created_at: at(0), ...over };
}

export function evaluator(orgId: string | null, over: Partial<EvaluatorRecord> = {}): EvaluatorRecord {
  return {
    id: newId('evl'),
    org_id: orgId,
    name: `Evaluator ${newId('evl').slice(-8)}`,
    intent: 'Checks that the answer is grounded in the given contexts.',
    rubric: '1.0: every claim supported. 0.5: some unsupported claims. 0.0: contradicts the contexts.',
    requires_contexts: true,
    requires_expected_output: false,
    demonstrations: [{ request: 'Q?', response: 'A.', contexts: ['ctx'], score: 0.8, justification: 'mostly supported' }],
    model: null,
    visibility: 'private',
    is_preset: false,
    project_id: 'prj_none',
    version: 1,
    created_at: at(0),
    updated_at: at(0),
    ...over,
  };
}

export function judge(orgId: string, evaluatorIds: string[], over: Partial<JudgeRecord> = {}): JudgeRecord {
  return {
    id: newId('jdg'),
    org_id: orgId,
    name: `Judge ${newId('jdg').slice(-8)}`,
    intent: 'Scores customer support answers.',
    stage: null,
    visibility: 'private',
    project_id: 'prj_none',
    evaluators: evaluatorIds.map((id) => ({ id, name: `name of ${id}`, version: null })),
    version: 1,
    created_at: at(0),
    updated_at: at(0),
    ...over,
  };
}

export function log(orgId: string, over: Partial<ExecutionLogRecord> = {}): ExecutionLogRecord {
  return {
    id: newId('log'),
    org_id: orgId,
    type: 'evaluator',
    judge_id: null,
    judge_name: null,
    judge_version: null,
    evaluator_id: 'evl_x',
    evaluator_name: 'X',
    evaluator_version: 1,
    project_id: 'prj_a',
    request: 'What is 2+2?',
    response: '4',
    contexts: null,
    expected_output: null,
    user_id: null,
    tags: [],
    evaluator_results: [
      {
        evaluator_id: 'evl_x',
        evaluator_name: 'X',
        evaluator_version: 1,
        score: 0.5,
        justification: 'fine',
        model: 'claude-sonnet-4-5',
        input_tokens: 10,
        output_tokens: 5,
        cost_usd: 0.001,
        latency_ms: 12,
      },
    ],
    score: 0.5,
    cost_usd: 0.001,
    latency_ms: 15,
    created_at: at(0),
    ...over,
  };
}

/** Every item of a listing, page by page, checking the pages as it goes. */
export async function collect<T extends { created_at: string; id: string }>(list: (page: PageQuery) => Promise<Page<T>>, limit: number): Promise<T[]> {
  const all: T[] = [];
  let after: PageQuery['after'];
  for (let guard = 0; guard < 10_000; guard++) {
    const page = await list({ limit, after });
    assert.ok(page.items.length <= limit, 'a page holds at most `limit` items');
    all.push(...page.items);
    if (!page.last) return all;
    assert.equal(page.items.length, limit, 'a page with more after it is full');
    assert.deepEqual(page.last, { created_at: page.items[page.items.length - 1].created_at, id: page.items[page.items.length - 1].id });
    after = page.last;
  }
  throw new Error('pagination does not end');
}

const ids = (items: Array<{ id: string }>) => items.map((i) => i.id);
const sortedNewestFirst = <T extends { created_at: string; id: string }>(items: T[]) => [...items].sort(newestFirst);

export interface ContractOptions {
  /** Makes a fresh, empty, initialized store. The suite closes it. */
  makeStore: () => Promise<Store>;
}

export function defineStoreContract(name: string, { makeStore }: ContractOptions): void {
  const open: Store[] = [];
  const fresh = async () => {
    const store = await makeStore();
    open.push(store);
    return store;
  };
  after(async () => {
    // A few at a time: on PostgreSQL each close drops a schema of ~100 tables and indexes, and
    // hundreds of DROP SCHEMA ... CASCADE at once ran out of the server's shared lock table.
    for (let i = 0; i < open.length; i += 4) await Promise.all(open.slice(i, i + 4).map((s) => s.close()));
  });

  describe(`Store contract: ${name}`, () => {
    it('pings while open', async () => {
      const store = await fresh();
      await store.ping();
    });

    defineDatasetContract(fresh);
    defineResultCacheContract(fresh);
    defineCalibrationContract(fresh);
    defineBatchContract(fresh);
    defineSurfaceContract(fresh); // room surface
    defineChecksContract(fresh); // h-checks
    defineBudgetContract(fresh); // room h-cost
    defineFilesContract(fresh); // h-attach

    describe('organizations', () => {
      it('creates, reads and finds the oldest non-demo organization by name', async () => {
        const store = await fresh();
        const first = org({ name: 'Acme', created_at: at(1000) });
        const later = org({ name: 'Acme', created_at: at(2000) });
        const demo = org({ name: 'Acme', is_demo: true, created_at: at(0) });
        for (const o of [later, demo, first]) await store.createOrganization(o);
        assert.deepEqual(await store.getOrganization(first.id), first);
        assert.deepEqual(await store.getOrganization(demo.id), demo);
        assert.equal(await store.getOrganization('org_missing'), null);
        assert.deepEqual(await store.findOrganizationByName('Acme'), first);
        assert.equal(await store.findOrganizationByName('Nobody'), null);
      });

      it('purges demo organizations past retention with everything they own, and nothing else', async () => {
        const store = await fresh();
        const made = async (o: Organization) => {
          await store.createOrganization(o);
          const k = apiKey(o.id);
          const p = project(o.id, { is_default: true });
          const e = evaluator(o.id, { project_id: p.id, visibility: 'public' });
          const j = judge(o.id, [e.id], { project_id: p.id, visibility: 'public' });
          const l = log(o.id, { project_id: p.id, evaluator_id: e.id });
          await store.createApiKey(k);
          await store.createProject(p);
          await store.createEvaluator(e);
          await store.updateEvaluator({ ...e, version: 2, rubric: 'v2' }, 1);
          await store.createJudge(j);
          await store.updateJudge({ ...j, version: 2, name: `${j.name} v2` }, 1);
          await store.appendExecutionLog(l);
          // The rooms kept beside the Store over the same database leave with the org too.
          const t = Date.parse(at(0)) + 29 * 86_400_000;
          const span: Span = {
            trace_id: randomBytes(16).toString('hex'),
            span_id: 'a1b2c3d4e5f60718',
            parent_span_id: null,
            name: 'chat',
            kind: 'client',
            service_name: 'app',
            start_time: new Date(t).toISOString(),
            end_time: new Date(t + 1000).toISOString(),
            start_time_unix_nano: `${t}000000`,
            end_time_unix_nano: `${t + 1000}000000`,
            status: { code: 'unset', message: null },
            attributes: {},
            resource_attributes: {},
            events: [],
            scope: { name: null, version: null },
            received_at: new Date(t).toISOString(),
          };
          await (await traceStoreOf(store)).insertSpans(o.id, [span], 100);
          const rule = {
            id: `rul_${randomBytes(6).toString('hex')}`,
            org_id: o.id,
            key_id: k.id,
            name: 'r',
            judge_id: j.id,
            evaluator_id: null,
            scope: 'span',
            filter: [],
            sampling_rate: 1,
            delay_seconds: 0,
          };
          await (await ruleStoreOf(store)).createRule({
            ...rule,
            budget: null,
            active: true,
            extractor: null,
            queue_limit: 10,
            shed_policy: 'drop_oldest',
            created_at: at(0),
            updated_at: at(0),
          } as RuleRecord);
          const queue = {
            id: `rvq_${randomBytes(6).toString('hex')}`,
            org_id: o.id,
            name: 'q',
            judge_id: j.id,
            evaluator_ids: [e.id],
            annotators_per_item: 1,
            lease_seconds: 600,
            sources: {},
          };
          await reviewStore(store).createQueue({ ...queue, show_justification: false, created_at: at(0), updated_at: at(0) } as ReviewQueueRecord);
          return { o, k, p, e, j, l, span, rule, queue };
        };
        const rooms = async (x: { o: Organization; span: Span }) => ({
          spans: await (await traceStoreOf(store)).countSpans(x.o.id),
          rules: (await (await ruleStoreOf(store)).listRules(x.o.id)).length,
          queues: (await reviewStore(store).listQueues(x.o.id, { limit: 10 })).items.length,
        });
        const day = 86_400_000;
        const now = Date.parse(at(0)) + 30 * day;
        const expired = await made(org({ is_demo: true, created_at: at(0) }));
        const recentDemo = await made(org({ is_demo: true, created_at: at(29 * day) }));
        const real = await made(org({ created_at: at(0) }));
        const purged = await purgeExpiredDemoOrganizations(store, { demoKeyTtlMs: day, demoRetentionMs: 7 * day }, now);
        assert.equal(purged, 1);
        assert.equal(await store.getOrganization(expired.o.id), null);
        assert.equal(await store.getApiKeyByPrefix(expired.k.prefix), null);
        assert.equal(await store.getApiKey(expired.k.id), null);
        assert.equal(await store.getProject(expired.p.id), null);
        assert.equal(await store.getEvaluator(expired.e.id), null);
        assert.deepEqual(await store.listEvaluatorVersions(expired.e.id), []);
        assert.equal(await store.getJudge(expired.j.id), null);
        assert.deepEqual(await store.listJudgeVersions(expired.j.id), []);
        assert.equal(await store.getExecutionLog(expired.l.id), null);
        assert.deepEqual((await store.listExecutionLogs({ org_id: expired.o.id }, { limit: 5 })).items, []);
        assert.deepEqual(await rooms(expired), { spans: 0, rules: 0, queues: 0 }, 'spans, rules and review queues leave with the org');
        for (const kept of [recentDemo, real]) {
          assert.deepEqual(await store.getOrganization(kept.o.id), kept.o);
          assert.deepEqual(await store.getApiKeyByPrefix(kept.k.prefix), kept.k);
          assert.equal((await store.listEvaluatorVersions(kept.e.id)).length, 2);
          assert.equal((await store.listJudgeVersions(kept.j.id)).length, 2);
          assert.deepEqual(await store.getExecutionLog(kept.l.id), kept.l);
          assert.deepEqual(await rooms(kept), { spans: 1, rules: 1, queues: 1 });
        }
        assert.equal(await purgeExpiredDemoOrganizations(store, { demoKeyTtlMs: day, demoRetentionMs: 7 * day }, now), 0);
        // The purged key's prefix is free again: no index of prefixes still holds it.
        const reused = apiKey(real.o.id, { prefix: expired.k.prefix });
        await store.createApiKey(reused);
        assert.deepEqual(await store.getApiKeyByPrefix(expired.k.prefix), reused);
      });
    });

    describe('API keys', () => {
      it('finds a key by prefix and by id, refuses a second key with the same prefix', async () => {
        const store = await fresh();
        const key = apiKey('org_a', { expires_at: at(86_400_000) });
        await store.createApiKey(key);
        assert.deepEqual(await store.getApiKeyByPrefix(key.prefix), key);
        assert.deepEqual(await store.getApiKey(key.id), key);
        assert.equal(await store.getApiKeyByPrefix('trb_0000000000000000'), null);
        assert.equal(await store.getApiKey('key_missing'), null);
        await assert.rejects(store.createApiKey(apiKey('org_b', { prefix: key.prefix })), StoreConflictError);
      });

      it('revokes and records last use; unknown ids answer null', async () => {
        const store = await fresh();
        const key = apiKey('org_a');
        await store.createApiKey(key);
        const used = await store.updateApiKey(key.id, { last_used_at: at(5000) });
        assert.equal(used?.last_used_at, at(5000));
        assert.equal(used?.revoked_at, null);
        const revoked = await store.updateApiKey(key.id, { revoked_at: at(6000) });
        assert.deepEqual(revoked, { ...key, last_used_at: at(5000), revoked_at: at(6000) });
        assert.deepEqual(await store.getApiKeyByPrefix(key.prefix), revoked);
        assert.equal(await store.updateApiKey('key_missing', { revoked_at: at(1) }), null);
      });

      it('reads a key with its organization in one call, fresh each time', async () => {
        const store = await fresh();
        const owner = org({ id: 'org_kw', name: 'Key \u0000 owner' });
        await store.createOrganization(owner);
        const key = apiKey(owner.id, { expires_at: at(86_400_000) });
        await store.createApiKey(key);
        assert.deepEqual(await store.getApiKeyWithOrganization(key.prefix), { key, org: owner });
        assert.equal(await store.getApiKeyWithOrganization('trb_0000000000000000'), null);
        // A revoke is seen on the very next read (nothing cached between them).
        const revoked = await store.updateApiKey(key.id, { revoked_at: at(6000) });
        assert.deepEqual(await store.getApiKeyWithOrganization(key.prefix), { key: revoked, org: owner });
        // A key whose organization is gone comes back with org null (authentication then refuses it).
        const orphan = apiKey('org_gone');
        await store.createApiKey(orphan);
        assert.deepEqual(await store.getApiKeyWithOrganization(orphan.prefix), { key: orphan, org: null });
      });

      it("lists only the org's keys, newest first, across pages", async () => {
        const store = await fresh();
        const mine = Array.from({ length: 7 }, (_, i) => apiKey('org_a', { created_at: at(i * 1000) }));
        for (const k of mine) await store.createApiKey(k);
        await store.createApiKey(apiKey('org_b'));
        const listed = await collect((p) => store.listApiKeys('org_a', p), 3);
        assert.deepEqual(ids(listed), ids(sortedNewestFirst(mine)));
      });
    });

    describe('registered models', () => {
      it('creates, reads by id and by name within its org only, updates, deletes; names are unique per org', async () => {
        const store = await fresh();
        const m = registeredModel('org_a', { name: 'local' });
        await store.createModel(m);
        assert.deepEqual(await store.getModel(m.id), m);
        assert.deepEqual(await store.getModelByName('org_a', 'local'), m);
        assert.equal(await store.getModelByName('org_b', 'local'), null);
        await store.createModel(registeredModel('org_b', { name: 'local' }));
        await assert.rejects(
          store.createModel(registeredModel('org_a', { name: 'local' })),
          (err: unknown) => err instanceof StoreConflictError && err.reason.kind === 'name_taken',
        );
        const verified = { ...m, capabilities: { forced_tool: false, json_schema: true, logprobs: true }, verified_at: at(9) };
        assert.equal(await store.updateModel(verified), true);
        assert.deepEqual(await store.getModel(m.id), verified);
        assert.equal(await store.updateModel(registeredModel('org_a')), false, 'an unknown id is not created by update');
        assert.equal(await store.deleteModel(m.id), true);
        assert.equal(await store.getModel(m.id), null);
        assert.equal(await store.deleteModel(m.id), false);
      });

      it("lists only the org's models, newest first, across pages; purging the org removes them", async () => {
        const store = await fresh();
        await store.createOrganization(org({ id: 'org_m' }));
        const mine = Array.from({ length: 5 }, (_, i) => registeredModel('org_m', { created_at: at(i * 1000) }));
        for (const m of mine) await store.createModel(m);
        await store.createModel(registeredModel('org_b'));
        assert.deepEqual(ids(await collect((p) => store.listModels('org_m', p), 2)), ids(sortedNewestFirst(mine)));
        await store.purgeOrganization('org_m');
        assert.equal((await store.listModels('org_m', { limit: 10 })).items.length, 0);
        assert.equal((await store.listModels('org_b', { limit: 10 })).items.length, 1);
      });
    });

    describe('conflicts carry their reason as data', () => {
      it('gives the same reason on every store', async () => {
        const store = await fresh();
        const reason = async (write: () => Promise<unknown>) => {
          const err = await write().then(
            () => null,
            (e: unknown) => e,
          );
          assert.ok(err instanceof StoreConflictError, String(err));
          return err.reason;
        };
        const e = evaluator('org_a', { name: 'Same' });
        await store.createEvaluator(e);
        assert.deepEqual(await reason(() => store.createEvaluator(evaluator('org_a', { name: 'Same' }))), { kind: 'name_taken', resource: 'evaluator', name: 'Same' });
        assert.deepEqual(await reason(() => store.createEvaluator({ ...e, name: 'Else' })), { kind: 'id_taken', resource: 'evaluator', id: e.id });
        const j = judge('org_a', [e.id], { name: 'J' });
        await store.createJudge(j);
        assert.deepEqual(await reason(() => store.createJudge(judge('org_a', [e.id], { name: 'J' }))), { kind: 'name_taken', resource: 'judge', name: 'J' });
        await store.createProject(project('org_a', { name: 'P', is_default: true }));
        assert.deepEqual(await reason(() => store.createProject(project('org_a', { name: 'Q', is_default: true }))), { kind: 'default_project_exists' });
        assert.deepEqual(await reason(() => store.createProject(project('org_a', { name: 'P' }))), { kind: 'name_taken', resource: 'project', name: 'P' });
        const k = apiKey('org_a');
        await store.createApiKey(k);
        assert.deepEqual(await reason(() => store.createApiKey(apiKey('org_a', { prefix: k.prefix }))), { kind: 'key_prefix_taken' });
        const l = log('org_a');
        await store.appendExecutionLog(l);
        assert.deepEqual(await reason(() => store.appendExecutionLog(l)), { kind: 'id_taken', resource: 'execution_log', id: l.id });
      });
    });

    describe('projects', () => {
      it('keeps one default project per organization and unique names per organization', async () => {
        const store = await fresh();
        const def = project('org_a', { name: 'Default', is_default: true });
        await store.createProject(def);
        assert.deepEqual(await store.getProject(def.id), def);
        assert.deepEqual(await store.getDefaultProject('org_a'), def);
        assert.equal(await store.getDefaultProject('org_b'), null);
        await assert.rejects(store.createProject(project('org_a', { name: 'Another default', is_default: true })), StoreConflictError);
        await assert.rejects(store.createProject(project('org_a', { name: 'Default' })), StoreConflictError);
        // Other organizations have their own namespace and their own default.
        await store.createProject(project('org_b', { name: 'Default', is_default: true }));
        const extra = project('org_a', { name: 'Search', created_at: at(10) });
        await store.createProject(extra);
        assert.deepEqual(ids(await collect((p) => store.listProjects('org_a', p), 1)), [extra.id, def.id]);
        assert.equal(await store.getProject('prj_missing'), null);
      });
    });

    for (const kind of ['evaluator', 'judge'] as const) {
      describe(`${kind}s (versioned)`, () => {
        const make = (orgId: string, over: Partial<EvaluatorRecord & JudgeRecord> = {}): EvaluatorRecord | JudgeRecord =>
          kind === 'evaluator' ? evaluator(orgId, over) : judge(orgId, ['evl_a'], over);
        const api = (store: Store) =>
          kind === 'evaluator'
            ? {
                create: (r: any) => store.createEvaluator(r),
                get: (id: string) => store.getEvaluator(id),
                getVersion: (id: string, v: number) => store.getEvaluatorVersion(id, v),
                versions: (id: string) => store.listEvaluatorVersions(id),
                update: (r: any, v: number) => store.updateEvaluator(r, v),
                remove: (id: string) => store.deleteEvaluator(id),
                list: (f: any, p: PageQuery) => store.listEvaluators(f, p) as Promise<Page<any>>,
              }
            : {
                create: (r: any) => store.createJudge(r),
                get: (id: string) => store.getJudge(id),
                getVersion: (id: string, v: number) => store.getJudgeVersion(id, v),
                versions: (id: string) => store.listJudgeVersions(id),
                update: (r: any, v: number) => store.updateJudge(r, v),
                remove: (id: string) => store.deleteJudge(id),
                list: (f: any, p: PageQuery) => store.listJudges(f, p) as Promise<Page<any>>,
              };

        it('creates and reads back every field unchanged', async () => {
          const store = await fresh();
          const rec = make('org_a', { name: 'Grounded «ünïcode» ✓', intent: 'Line one.\nLine "two".', visibility: 'public' });
          await api(store).create(rec);
          assert.deepEqual(await api(store).get(rec.id), rec);
          assert.deepEqual(await api(store).getVersion(rec.id, 1), rec);
          assert.equal(await api(store).get(`${kind}_missing`), null);
        });

        it('keeps the key order of nested documents (code compares them serialized)', async () => {
          const store = await fresh();
          const rec =
            kind === 'evaluator'
              ? evaluator('org_a', { demonstrations: [{ score: 1, response: 'z', justification: 'b', request: 'a' }] })
              : judge('org_a', [], { evaluators: [{ version: 3, name: 'zz', id: 'evl_b' } as any] });
          await api(store).create(rec);
          const got = (await api(store).get(rec.id)) as any;
          const field = kind === 'evaluator' ? 'demonstrations' : 'evaluators';
          assert.equal(JSON.stringify(got[field]), JSON.stringify((rec as any)[field]));
          assert.equal(JSON.stringify(((await api(store).getVersion(rec.id, 1)) as any)[field]), JSON.stringify((rec as any)[field]));
        });

        it('keeps names unique per organization', async () => {
          const store = await fresh();
          const rec = make('org_a', { name: 'Faithfulness' });
          await api(store).create(rec);
          await assert.rejects(api(store).create(make('org_a', { name: 'Faithfulness' })), StoreConflictError);
          await assert.rejects(api(store).create({ ...make('org_b'), id: rec.id }), StoreConflictError, 'ids are unique');
          await api(store).create(make('org_b', { name: 'Faithfulness' }));
          // Renaming onto a taken name is refused as well, and changes nothing.
          const other = make('org_a', { name: 'Relevance' });
          await api(store).create(other);
          await assert.rejects(api(store).update({ ...other, name: 'Faithfulness', version: 2 }, 1), StoreConflictError);
          assert.deepEqual(await api(store).get(other.id), other);
        });

        it('updates optimistically and keeps every version', async () => {
          const store = await fresh();
          const v1 = make('org_a', { name: 'v1 name' });
          await api(store).create(v1);
          const v2 = { ...v1, name: 'v2 name', version: 2, updated_at: at(100) };
          assert.equal(await api(store).update(v2, 1), true);
          assert.equal(await api(store).update({ ...v1, name: 'lost update', version: 2 }, 1), false, 'a stale expected version loses');
          assert.equal(await api(store).update({ ...v1, id: `${kind}_missing`, version: 2 }, 1), false);
          const v3 = { ...v2, intent: 'v3 intent', version: 3, updated_at: at(200) };
          assert.equal(await api(store).update(v3, 2), true);
          assert.deepEqual(await api(store).get(v1.id), v3);
          assert.deepEqual(await api(store).getVersion(v1.id, 1), v1);
          assert.deepEqual(await api(store).getVersion(v1.id, 2), v2);
          assert.equal(await api(store).getVersion(v1.id, 9), null);
          assert.deepEqual(await api(store).versions(v1.id), [v3, v2, v1]);
        });

        it('lets exactly one of many concurrent updates of one version win', async () => {
          const store = await fresh();
          const v1 = make('org_a');
          await api(store).create(v1);
          const results = await Promise.all(Array.from({ length: 20 }, (_, i) => api(store).update({ ...v1, intent: `attempt ${i}`, version: 2 }, 1)));
          assert.equal(results.filter(Boolean).length, 1);
          const latest = await api(store).get(v1.id);
          assert.equal(latest?.version, 2);
          assert.equal(latest?.intent, `attempt ${results.indexOf(true)}`);
          assert.equal((await api(store).versions(v1.id)).length, 2);
        });

        it('deletes with all its versions', async () => {
          const store = await fresh();
          const rec = make('org_a', { name: 'Doomed' });
          await api(store).create(rec);
          await api(store).update({ ...rec, version: 2, intent: 'changed' }, 1);
          assert.equal(await api(store).remove(rec.id), true);
          assert.equal(await api(store).get(rec.id), null);
          assert.equal(await api(store).getVersion(rec.id, 1), null);
          assert.deepEqual(await api(store).versions(rec.id), []);
          assert.equal(await api(store).remove(rec.id), false);
          await api(store).create(make('org_a', { name: 'Doomed' })); // the name is free again
        });

        it('lists what the caller may see: own, plus public when include_public', async () => {
          const store = await fresh();
          const ownPrivate = make('org_a', { visibility: 'private', created_at: at(1) });
          const ownPublic = make('org_a', { visibility: 'public', created_at: at(2) });
          const otherPublic = make('org_b', { visibility: 'public', created_at: at(3) });
          const otherPrivate = make('org_b', { visibility: 'private', created_at: at(4) });
          for (const r of [ownPrivate, ownPublic, otherPublic, otherPrivate]) await api(store).create(r);
          const visible = async (include_public: boolean) => ids(await collect((p) => api(store).list({ org_id: 'org_a', include_public }, p), 2));
          assert.deepEqual(await visible(true), [otherPublic.id, ownPublic.id, ownPrivate.id]);
          assert.deepEqual(await visible(false), [ownPublic.id, ownPrivate.id]);
          assert.deepEqual(ids(await collect((p) => api(store).list({ org_id: 'org_c', include_public: true }, p), 5)), [otherPublic.id, ownPublic.id]);
        });

        it('filters by project, exact name and case-insensitive search', async () => {
          const store = await fresh();
          const a = make('org_a', { project_id: 'prj_1', name: 'Tone check', intent: 'Is the TONE polite?', created_at: at(1) });
          const b = make('org_a', { project_id: 'prj_2', name: 'Facts', intent: 'Are the claims true?', created_at: at(2), ...(kind === 'judge' ? { stage: 'Retrieval' } : {}) });
          const c = make('org_b', { project_id: 'prj_3', name: 'Tone check', visibility: 'public', created_at: at(3) });
          for (const r of [a, b, c]) await api(store).create(r);
          const list = async (f: object) => ids((await api(store).list({ org_id: 'org_a', include_public: true, ...f }, { limit: 50 })).items);
          assert.deepEqual(await list({ project_id: 'prj_1' }), [a.id]);
          assert.deepEqual(await list({ name: 'Tone check' }), [c.id, a.id]);
          assert.deepEqual(await list({ name: 'tone check' }), [], 'names are exact');
          assert.deepEqual(await list({ search: 'tone' }), [c.id, a.id], 'search ignores case');
          assert.deepEqual(await list({ search: 'CLAIMS' }), [b.id], 'search looks in the intent');
          if (kind === 'judge') assert.deepEqual(await list({ search: 'retriev' }), [b.id], 'judge search looks in the stage');
          assert.deepEqual(await list({ search: 'tone', include_public: false }), [a.id]);
          assert.deepEqual(await list({ search: '%' }), [], 'search is literal');
        });
      });
    }

    describe('evaluator specifics', () => {
      it('treats presets (no organization) as public and filters on is_preset', async () => {
        const store = await fresh();
        const preset = evaluator(null, { id: 'preset_faithfulness', name: 'Faithfulness', visibility: 'public', is_preset: true, project_id: null, created_at: at(-1) });
        const own = evaluator('org_a', { name: 'Faithfulness', created_at: at(1) });
        await store.createEvaluator(preset);
        await store.createEvaluator(own);
        await assert.rejects(store.createEvaluator(evaluator(null, { id: 'preset_other', name: 'Faithfulness', is_preset: true, visibility: 'public' })), StoreConflictError);
        assert.deepEqual(await store.getEvaluator('preset_faithfulness'), preset);
        const list = async (f: object) => ids((await store.listEvaluators({ org_id: 'org_a', include_public: true, ...f }, { limit: 50 })).items);
        assert.deepEqual(await list({}), [own.id, preset.id]);
        assert.deepEqual(await list({ is_preset: true }), [preset.id]);
        assert.deepEqual(await list({ is_preset: false }), [own.id]);
        assert.deepEqual(await list({ include_public: false }), [own.id]);
        // issue 26: own and the presets, without other organizations' public evaluators.
        const theirs = evaluator('org_b', { name: 'Shared by b', visibility: 'public', created_at: at(2) });
        await store.createEvaluator(theirs);
        assert.deepEqual(await list({}), [theirs.id, own.id, preset.id]);
        assert.deepEqual(await list({ include_public: false, include_presets: true }), [own.id, preset.id]);
        assert.deepEqual(await list({ include_public: false, include_presets: true, is_preset: true }), [preset.id]);
      });

      it('keeps a jury (models, aggregation) and the scoring mode through every read and version', async () => {
        const store = await fresh();
        const jury = evaluator('org_a', { model: null, models: ['judge-a', 'judge-b', 'judge-c'], aggregation: 'majority', scoring: 'logprobs' });
        await store.createEvaluator(jury);
        assert.deepEqual(await store.getEvaluator(jury.id), jury);
        const next = { ...jury, models: ['judge-b', 'judge-a'], aggregation: 'median' as const, scoring: 'direct' as const, version: 2 };
        assert.equal(await store.updateEvaluator(next, 1), true);
        assert.deepEqual(await store.getEvaluator(jury.id), next);
        assert.deepEqual(await store.getEvaluatorVersion(jury.id, 1), jury, 'the old version keeps its jury');
        assert.deepEqual(
          (await store.listEvaluatorVersions(jury.id)).map((v) => [v.models, v.aggregation, v.scoring]),
          [
            [['judge-b', 'judge-a'], 'median', 'direct'],
            [['judge-a', 'judge-b', 'judge-c'], 'majority', 'logprobs'],
          ],
        );
        const cleared = { ...next, models: null, aggregation: null, version: 3 };
        assert.equal(await store.updateEvaluator(cleared, 2), true);
        assert.deepEqual((await store.listEvaluators({ org_id: 'org_a', include_public: false }, { limit: 10 })).items, [cleared]);
        // An evaluator stored before the fields existed reads back without them.
        const older = evaluator('org_a');
        await store.createEvaluator(older);
        const read = (await store.getEvaluator(older.id))!;
        assert.equal('models' in read || 'aggregation' in read || 'scoring' in read, false);
      });
    });

    describe('judge specifics', () => {
      it('keeps the generation state of a generated judge (draft, answers in order, open questions) through every read', async () => {
        const store = await fresh();
        const draft = judge('org_a', ['evl_1'], {
          generation: {
            status: 'draft',
            context_aware: true,
            answers: { tone: 'Warm, «never» sarcastic.\nNo "jargon".', audience: 'Home cooks', brand: '' },
            open_questions: [{ form_field_name: 'refund_policy', form_field_description: 'What is your refund policy?' }],
          },
        });
        await store.createJudge(draft);
        assert.deepEqual(await store.getJudge(draft.id), draft);
        assert.deepEqual(await store.getJudgeVersion(draft.id, 1), draft);
        assert.equal(JSON.stringify((await store.getJudge(draft.id))!.generation), JSON.stringify(draft.generation), 'key order kept');
        const done: JudgeRecord = {
          ...draft,
          version: 2,
          generation: { status: 'complete', context_aware: true, answers: { ...draft.generation!.answers, refund_policy: '30 days' }, open_questions: [] },
        };
        assert.equal(await store.updateJudge(done, 1), true);
        assert.deepEqual(await store.getJudge(draft.id), done);
        assert.deepEqual(
          (await store.listJudgeVersions(draft.id)).map((v) => v.generation),
          [done.generation, draft.generation],
        );
        assert.deepEqual((await store.listJudges({ org_id: 'org_a', include_public: false }, { limit: 10 })).items, [done]);
        // Hand-made (null) and stored before the field existed (absent) both read back as given.
        const handMade = judge('org_a', ['evl_1'], { generation: null });
        const older = judge('org_a', ['evl_1']);
        await store.createJudge(handMade);
        await store.createJudge(older);
        assert.deepEqual(await store.getJudge(handMade.id), handMade);
        assert.equal('generation' in (await store.getJudge(older.id))!, false);
      });

      it('finds the judges whose latest version applies an evaluator, in any organization', async () => {
        const store = await fresh();
        const j1 = judge('org_a', ['evl_1', 'evl_2']);
        const j2 = judge('org_b', ['evl_2']);
        const j3 = judge('org_a', ['evl_3']);
        for (const j of [j1, j2, j3]) await store.createJudge(j);
        const using = async (id: string) => (await store.findJudgesUsingEvaluator(id)).sort((a, b) => a.id.localeCompare(b.id));
        assert.deepEqual(
          await using('evl_2'),
          [j1, j2].map((j) => ({ id: j.id, name: j.name, org_id: j.org_id })).sort((a, b) => a.id.localeCompare(b.id)),
        );
        assert.deepEqual(await using('evl_1'), [{ id: j1.id, name: j1.name, org_id: 'org_a' }]);
        assert.deepEqual(await using('evl_none'), []);
        // Only the latest version counts.
        assert.equal(await store.updateJudge({ ...j1, evaluators: [{ id: 'evl_3', name: 'three', version: 2 }], version: 2 }, 1), true);
        assert.deepEqual(await using('evl_1'), []);
        assert.deepEqual(ids(await using('evl_3')).sort(), [j1.id, j3.id].sort());
        await store.deleteJudge(j3.id);
        assert.deepEqual(ids(await using('evl_3')), [j1.id]);
      });
    });

    describe('newest-first pagination', () => {
      it('walks pages with `after`: no duplicates, no gaps, ties on created_at broken by id', async () => {
        const store = await fresh();
        // 23 evaluators in 5 groups sharing a created_at, inserted in shuffled order.
        const recs = Array.from({ length: 23 }, (_, i) => evaluator('org_a', { created_at: at((i % 5) * 1000) }));
        const shuffled = [...recs].sort(() => Math.random() - 0.5);
        for (const r of shuffled) await store.createEvaluator(r);
        const expected = ids(sortedNewestFirst(recs));
        for (const limit of [1, 4, 5, 22, 23, 50]) {
          const listed = await collect((p) => store.listEvaluators({ org_id: 'org_a', include_public: false }, p), limit);
          assert.deepEqual(ids(listed), expected, `page size ${limit}`);
        }
        // A cursor whose item was deleted still continues where it was.
        const first = await store.listEvaluators({ org_id: 'org_a', include_public: false }, { limit: 5 });
        await store.deleteEvaluator(first.items[4].id);
        const rest = await collect((p) => store.listEvaluators({ org_id: 'org_a', include_public: false }, { ...p, after: p.after ?? first.last }), 6);
        assert.deepEqual(ids(rest), expected.slice(5));
      });

      it('answers an empty page past the end', async () => {
        const store = await fresh();
        const page = await store.listJudges({ org_id: 'org_a', include_public: true }, { limit: 10 });
        assert.deepEqual(page, { items: [], last: undefined });
        const past = await store.listExecutionLogs({ org_id: 'org_a' }, { limit: 10, after: { created_at: at(0), id: 'log_0' } });
        assert.deepEqual(past.items, []);
        assert.equal(past.last, undefined);
      });
    });

    describe('execution logs', () => {
      it('keeps a log at the configured limits: 50 tags of 200 three-byte characters, 100 evaluators (index rows fit)', async () => {
        const store = await fresh();
        // Random CJK characters (three bytes each in UTF-8) so that PostgreSQL cannot compress the index row.
        const tags = Array.from({ length: 50 }, () => String.fromCharCode(...Array.from({ length: 200 }, () => 0x4e00 + Math.floor(Math.random() * 0x5000))));
        const [result] = log('org_a').evaluator_results;
        const results = Array.from({ length: 100 }, (_, i) => ({ ...result, evaluator_id: `evl_${String(i).padStart(26, '0')}` }));
        const big = log('org_a', { type: 'judge', judge_id: 'jdg_1', evaluator_id: null, tags, evaluator_results: results });
        await store.appendExecutionLog(big);
        assert.deepEqual(await store.getExecutionLog(big.id), big);
        const found = await store.listExecutionLogs({ org_id: 'org_a', tags: [tags[3], tags[49]], evaluator_id: results[99].evaluator_id }, { limit: 5 });
        assert.deepEqual(
          found.items.map((l) => l.id),
          [big.id],
        );
      });

      it('appends and reads back every field; ids are unique', async () => {
        const store = await fresh();
        const full = log('org_a', {
          type: 'judge',
          judge_id: 'jdg_1',
          judge_name: 'Support',
          judge_version: 3,
          evaluator_id: null,
          evaluator_name: null,
          evaluator_version: null,
          contexts: ['first snippet', 'second ✓'],
          expected_output: '4',
          user_id: 'user-42',
          tags: ['prod', 'eu'],
          evaluator_results: [
            { ...log('x').evaluator_results[0], evaluator_id: 'evl_1', score: null, justification: null, error: 'model timed out', model: null },
            { ...log('x').evaluator_results[0], evaluator_id: 'evl_2', score: 1 },
          ],
          score: 1,
          cost_usd: 0.123456789,
          latency_ms: 1234.5,
        });
        await store.appendExecutionLog(full);
        const got = await store.getExecutionLog(full.id);
        assert.deepEqual(got, full);
        assert.equal(JSON.stringify(got?.evaluator_results), JSON.stringify(full.evaluator_results), 'nested key order kept');
        assert.equal(await store.getExecutionLog('log_missing'), null);
        await assert.rejects(store.appendExecutionLog({ ...log('org_a'), id: full.id }), StoreConflictError);
      });

      it('applies every filter, alone and combined, within the organization', async () => {
        const store = await fresh();
        const logs: ExecutionLogRecord[] = [];
        const add = (over: Partial<ExecutionLogRecord>) => {
          const l = log('org_a', { created_at: at(logs.length * 60_000), ...over });
          logs.push(l);
          return l;
        };
        const results = (evaluatorIds: string[]) => evaluatorIds.map((id) => ({ ...log('x').evaluator_results[0], evaluator_id: id }));
        add({
          type: 'judge',
          judge_id: 'jdg_1',
          evaluator_id: null,
          evaluator_results: results(['evl_1', 'evl_2']),
          project_id: 'prj_a',
          score: 0.9,
          cost_usd: 0.01,
          tags: ['prod', 'eu'],
        });
        add({
          type: 'judge',
          judge_id: 'jdg_1',
          evaluator_id: null,
          evaluator_results: results(['evl_1', 'evl_2']),
          project_id: 'prj_a',
          score: 0.2,
          cost_usd: 0.02,
          tags: ['prod'],
          batch_execution_id: 'bat_1',
        });
        add({ type: 'judge', judge_id: 'jdg_2', evaluator_id: null, evaluator_results: results(['evl_3']), project_id: 'prj_b', score: null, cost_usd: 0.03, tags: ['eu'] });
        add({ evaluator_id: 'evl_1', evaluator_results: results(['evl_1']), project_id: 'prj_b', score: 0.5, cost_usd: 0.04, tags: [] });
        add({ evaluator_id: 'evl_2', evaluator_results: results(['evl_2']), project_id: 'prj_a', score: 1, cost_usd: 0, tags: ['prod', 'eu', 'beta'] });
        add({ evaluator_id: 'evl_3', evaluator_results: results(['evl_3']), project_id: 'prj_a', score: 0, cost_usd: 0.05, tags: ['beta'] });
        // An unpriced model: cost unknown (null), stored as such and matched by no cost filter.
        add({ evaluator_id: 'evl_1', evaluator_results: [{ ...results(['evl_1'])[0], cost_usd: null }], project_id: 'prj_a', score: 0.7, cost_usd: null, tags: ['prod'] });
        const otherOrg = log('org_b', { judge_id: 'jdg_1', evaluator_id: 'evl_1', project_id: 'prj_a', tags: ['prod'], created_at: at(0) });
        for (const l of [...logs].sort(() => Math.random() - 0.5)) await store.appendExecutionLog(l);
        await store.appendExecutionLog(otherOrg);

        const expect = async (filter: Omit<LogFilter, 'org_id'>, pick: (l: ExecutionLogRecord) => boolean, message: string) => {
          const want = ids(sortedNewestFirst(logs.filter(pick)));
          assert.ok(want.length > 0 || message.includes('none'), `the case "${message}" selects something`);
          const got = ids(await collect((p) => store.listExecutionLogs({ org_id: 'org_a', ...filter }, p), 2));
          assert.deepEqual(got, want, message);
        };
        await expect({}, () => true, 'no filter: all of the org');
        await expect({ judge_id: 'jdg_1' }, (l) => l.judge_id === 'jdg_1', 'judge');
        await expect(
          { evaluator_id: 'evl_1' },
          (l) => l.evaluator_id === 'evl_1' || l.evaluator_results.some((r) => r.evaluator_id === 'evl_1'),
          'evaluator: single runs and judge runs that applied it',
        );
        await expect({ evaluator_id: 'evl_3' }, (l) => l.evaluator_id === 'evl_3' || l.evaluator_results.some((r) => r.evaluator_id === 'evl_3'), 'evaluator 3');
        await expect({ project_id: 'prj_b' }, (l) => l.project_id === 'prj_b', 'project');
        await expect({ in_batch: true }, (l) => !!l.batch_execution_id, 'in_batch: only batch rows');
        await expect({ in_batch: false, judge_id: 'jdg_1' }, (l) => !l.batch_execution_id && l.judge_id === 'jdg_1', 'in_batch false: runs of their own');
        await expect({ min_score: 0.5 }, (l) => l.score !== null && l.score >= 0.5, 'min score, inclusive, null excluded');
        await expect({ max_score: 0.5 }, (l) => l.score !== null && l.score <= 0.5, 'max score, inclusive, null excluded');
        await expect({ min_score: 0.2, max_score: 0.9 }, (l) => l.score !== null && l.score >= 0.2 && l.score <= 0.9, 'score range');
        await expect({ min_score: 0 }, (l) => l.score !== null, 'min score 0 still excludes null');
        await expect({ min_cost: 0.02, max_cost: 0.04 }, (l) => l.cost_usd !== null && l.cost_usd >= 0.02 && l.cost_usd <= 0.04, 'cost range');
        await expect({ max_cost: 0 }, (l) => l.cost_usd === 0, 'max cost 0');
        await expect({ min_cost: 0 }, (l) => l.cost_usd !== null, 'min cost 0 excludes an unknown cost');
        await expect({ max_cost: 1000 }, (l) => l.cost_usd !== null, 'max cost excludes an unknown cost');
        assert.equal((await store.getExecutionLog(logs.at(-1)!.id))?.cost_usd, null, 'an unknown cost reads back as null');
        await expect({ tags: ['prod'] }, (l) => l.tags.includes('prod'), 'one tag');
        await expect({ tags: ['prod', 'eu'] }, (l) => l.tags.includes('prod') && l.tags.includes('eu'), 'all tags must match');
        await expect({ tags: [] }, () => true, 'empty tag list: no filter');
        await expect({ tags: ['nope'] }, () => false, 'unknown tag: none');
        await expect({ date_from: at(60_000), date_to: at(180_000) }, (l) => l.created_at >= at(60_000) && l.created_at <= at(180_000), 'date range, inclusive');
        await expect({ date_from: at(240_000) }, (l) => l.created_at >= at(240_000), 'date from');
        await expect({ date_to: at(0) }, (l) => l.created_at <= at(0), 'date to');
        await expect(
          { project_id: 'prj_a', min_score: 0.5, tags: ['prod'], evaluator_id: 'evl_2', date_to: at(300_000) },
          (l) => l.project_id === 'prj_a' && l.score !== null && l.score >= 0.5 && l.tags.includes('prod') && l.evaluator_results.some((r) => r.evaluator_id === 'evl_2'),
          'combination',
        );
        await expect({ judge_id: 'jdg_1', max_score: 0.1 }, () => false, 'combination that matches none');
        assert.deepEqual(ids((await store.listExecutionLogs({ org_id: 'org_b', judge_id: 'jdg_1' }, { limit: 10 })).items), [otherOrg.id], 'other org sees only its own');
        assert.deepEqual((await store.listExecutionLogs({ org_id: 'org_c' }, { limit: 10 })).items, []);
      });

      it('filters by trace_id and span_id (issue 28) and reads them back; a log without them reads back without them', async () => {
        const store = await fresh();
        const T1 = 'a'.repeat(32);
        const T2 = 'b'.repeat(32);
        const logs = [
          log('org_a', { created_at: at(0), trace_id: T1, span_id: '1'.repeat(16), tags: ['evaluation_rule:rul_1'] }),
          log('org_a', { created_at: at(60_000), trace_id: T1, span_id: '2'.repeat(16) }),
          log('org_a', { created_at: at(120_000), trace_id: T2, span_id: '1'.repeat(16) }),
          log('org_a', { created_at: at(180_000) }),
        ];
        for (const l of logs) await store.appendExecutionLog(l);
        await store.appendExecutionLog(log('org_b', { created_at: at(0), trace_id: T1, span_id: '1'.repeat(16) }));
        const list = async (f: Omit<LogFilter, 'org_id'>) => ids(await collect((p) => store.listExecutionLogs({ org_id: 'org_a', ...f }, p), 1));
        assert.deepEqual(await list({ trace_id: T1 }), [logs[1]!.id, logs[0]!.id], 'a trace: its logs, newest first, own org only');
        assert.deepEqual(await list({ span_id: '1'.repeat(16) }), [logs[2]!.id, logs[0]!.id], 'a span id alone matches it in any trace');
        assert.deepEqual(await list({ trace_id: T1, span_id: '1'.repeat(16) }), [logs[0]!.id], 'trace and span together');
        assert.deepEqual(await list({ trace_id: T1, tags: ['evaluation_rule:rul_1'] }), [logs[0]!.id], 'with a tag');
        assert.deepEqual(await list({ trace_id: 'c'.repeat(32) }), [], 'an unknown trace: none');
        assert.deepEqual(await list({ trace_id: T2, date_to: at(60_000) }), [], 'with a date bound');
        assert.deepEqual(await store.getExecutionLog(logs[0]!.id), logs[0], 'trace_id and span_id read back');
        const plain = await store.getExecutionLog(logs[3]!.id);
        assert.deepEqual(plain, logs[3]);
        assert.ok(plain && !('trace_id' in plain) && !('span_id' in plain), 'absent fields stay absent');
      });

      it('pages through many logs with equal timestamps and a filter', async () => {
        const store = await fresh();
        const logs = Array.from({ length: 60 }, (_, i) => log('org_a', { created_at: at(Math.floor(i / 7) * 1000), tags: i % 3 === 0 ? ['keep'] : ['drop'] }));
        await Promise.all(logs.map((l) => store.appendExecutionLog(l)));
        const kept = ids(sortedNewestFirst(logs.filter((l) => l.tags.includes('keep'))));
        for (const limit of [1, 3, 7, 20]) {
          assert.deepEqual(ids(await collect((p) => store.listExecutionLogs({ org_id: 'org_a', tags: ['keep'] }, p), limit)), kept, `page size ${limit}`);
        }
        assert.deepEqual(ids(await collect((p) => store.listExecutionLogs({ org_id: 'org_a' }, p), 9)), ids(sortedNewestFirst(logs)));
      });
    });

    describe('any text', () => {
      it('stores NUL and other unusual characters unchanged, and finds them again', async () => {
        const store = await fresh();
        const odd = 'a\u0000b \u{F0000} \u{F0000}0 ✓ \\0';
        const e = evaluator('org_a', { name: `name ${odd}`, intent: `intent ${odd}`, demonstrations: [{ response: odd, score: 1 }] });
        await store.createEvaluator(e);
        assert.deepEqual(await store.getEvaluator(e.id), e);
        const list = async (f: object) => ids((await store.listEvaluators({ org_id: 'org_a', include_public: false, ...f }, { limit: 5 })).items);
        assert.deepEqual(await list({ name: e.name }), [e.id]);
        assert.deepEqual(await list({ name: 'name a' }), []);
        assert.deepEqual(await list({ search: 'A\u0000B' }), [e.id]);
        const l = log('org_a', { response: odd, request: odd, user_id: odd, tags: [odd, 'plain'] });
        await store.appendExecutionLog(l);
        assert.deepEqual(await store.getExecutionLog(l.id), l);
        assert.deepEqual(ids((await store.listExecutionLogs({ org_id: 'org_a', tags: [odd] }, { limit: 5 })).items), [l.id]);
        assert.deepEqual((await store.listExecutionLogs({ org_id: 'org_a', tags: ['a'] }, { limit: 5 })).items, []);
        // Lookups with such characters answer "not found", never an error.
        assert.equal(await store.getEvaluator(`${e.id}\u0000`), null);
        assert.equal(await store.getJudge('\u0000'), null);
        assert.equal(await store.getExecutionLog('log_\u0000'), null);
        assert.equal(await store.getApiKeyByPrefix('trb_\u0000'), null);
        assert.equal(await store.findOrganizationByName('\u0000'), null);
        assert.deepEqual((await store.listExecutionLogs({ org_id: 'org_a', judge_id: '\u0000', project_id: '\u0000' }, { limit: 5 })).items, []);
      });
    });

    describe('concurrency', () => {
      it('200 concurrent creates of each kind leave exactly 200', async () => {
        const store = await fresh();
        const n = 200;
        const evaluators = Array.from({ length: n }, () => evaluator('org_a'));
        const logs = Array.from({ length: n }, () => log('org_a', { created_at: new Date().toISOString() }));
        const keys = Array.from({ length: n }, () => apiKey('org_a'));
        await Promise.all([...evaluators.map((e) => store.createEvaluator(e)), ...logs.map((l) => store.appendExecutionLog(l)), ...keys.map((k) => store.createApiKey(k))]);
        const listedEvaluators = await collect((p) => store.listEvaluators({ org_id: 'org_a', include_public: false }, p), 200);
        const listedLogs = await collect((p) => store.listExecutionLogs({ org_id: 'org_a' }, p), 200);
        const listedKeys = await collect((p) => store.listApiKeys('org_a', p), 200);
        assert.equal(listedEvaluators.length, n);
        assert.equal(new Set(ids(listedEvaluators)).size, n);
        assert.deepEqual(new Set(ids(listedLogs)), new Set(ids(logs)));
        assert.equal(listedKeys.length, n);
      });

      it('of 20 concurrent creates with one name, exactly one wins', async () => {
        const store = await fresh();
        const outcomes = await Promise.allSettled(Array.from({ length: 20 }, () => store.createJudge(judge('org_a', ['evl_1'], { name: 'Same' }))));
        assert.equal(outcomes.filter((o) => o.status === 'fulfilled').length, 1);
        for (const o of outcomes) if (o.status === 'rejected') assert.ok(o.reason instanceof StoreConflictError, String(o.reason));
        assert.equal((await store.listJudges({ org_id: 'org_a', include_public: false, name: 'Same' }, { limit: 50 })).items.length, 1);
      });
    });
  });
}
