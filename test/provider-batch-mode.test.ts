// Mode provider_batch on batch runs (issue 32, docs/COST.md): the server, through the real SDKs,
// against the fakes of Anthropic Message Batches and the OpenAI Batch API on 127.0.0.1. Submit,
// poll in_progress -> ended, results, partial errors, expiry, cancel, a restart mid-wait (nothing
// submitted twice, every row exactly one log), and a model without a batch API refused at the start.
// TRIBUNAL_TEST_STORE=postgres runs it on PostgreSQL.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { batchCostUsd } from '../src/engine/providers/anthropic-batch.ts';
import { DEFAULT_PRICES } from '../src/prices.ts';
import { startFakeAnthropicBatches, type FakeAnthropicBatches } from './helpers/fake-anthropic-batches.ts';
import { startFakeOpenAIBatches, type FakeOpenAIBatches } from './helpers/fake-openai-batches.ts';
import { evaluatorBody } from './helpers/execute.ts';
import { chromiumAvailable, launchBrowser } from './helpers/browser.ts';
import { runCli } from './helpers/cli.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

const MODEL = 'claude-sonnet-4-5';
let anthropic: FakeAnthropicBatches;
let openai: FakeOpenAIBatches;
let server: TestServer;
let key: string;
let lastRun: string;
const env = () => ({
  ANTHROPIC_API_KEY: 'sk-ant-test-dummy',
  ANTHROPIC_BASE_URL: anthropic.url,
  TRIBUNAL_MODEL: MODEL,
  TRIBUNAL_PROVIDER_BATCH_POLL: '30ms',
  TRIBUNAL_SECRET_KEY: randomBytes(32).toString('base64'),
});

const post = (path: string, body: unknown) => server.request('POST', path, { key, body });
const get = (path: string) => server.request('GET', path, { key });
async function judgeOf(evaluators: Array<Record<string, unknown>>): Promise<string> {
  const ids = [];
  for (const body of evaluators) {
    const ev = await post('/v1/evaluators/', evaluatorBody(body));
    assert.equal(ev.status, 201, JSON.stringify(ev.body));
    ids.push(ev.body.id);
  }
  const judge = await post('/v1/judges/', { name: `Provider batch judge ${Math.random()}`, intent: 'grade answers', evaluator_ids: ids });
  assert.equal(judge.status, 201, JSON.stringify(judge.body));
  return judge.body.id;
}
const items = (n: number) => Array.from({ length: n }, (_, i) => ({ request: `question ${i}`, response: `answer ${i}` }));
async function start(judgeId: string, n: number) {
  const res = await post(`/v1/judges/${judgeId}/batch-execute/`, { items: items(n), mode: 'provider_batch' });
  assert.equal(res.status, 202, JSON.stringify(res.body));
  return res.body.batch_execution_id as string;
}
async function until(id: string, done: (b: any) => boolean, ms = 20_000) {
  for (const deadline = Date.now() + ms; ; ) {
    const b = (await get(`/v1/judges/batch-executions/${id}/`)).body;
    if (done(b)) return b;
    if (Date.now() > deadline) throw new Error(`run ${id} never got there: ${JSON.stringify(b)}`);
    await new Promise((r) => setTimeout(r, 40));
  }
}
async function rowsOf(id: string) {
  return (await get(`/v1/judges/batch-executions/${id}/results/?limit=100`)).body.results as any[];
}

before(async () => {
  anthropic = await startFakeAnthropicBatches();
  openai = await startFakeOpenAIBatches();
  server = await startTestServer(env());
  key = (await server.demoUser()).api_key;
});
after(async () => {
  await server.close();
  await anthropic.close();
  await openai.close();
});

describe('mode provider_batch', () => {
  it('submits every call of the run as one Message Batch, polls it to its end, and prices each result at the batch rate', async () => {
    anthropic.pollsUntilEnded = 2;
    anthropic.respondWith(() => ({ kind: 'succeeded', input: { justification: 'Batch answer.', score: 0.8 }, output_tokens: 70 }));
    const before = anthropic.batches.length;
    const judgeId = await judgeOf([{}, {}]);
    const id = await start(judgeId, 5);
    const run = await until(id, (b) => b.status === 'completed');
    assert.equal(run.mode, 'provider_batch');
    assert.equal(run.done, 5);
    const mine = anthropic.batches.slice(before);
    assert.equal(mine.length, 1, 'one provider batch for the run');
    assert.equal(mine[0].requests.length, 10, '5 rows x 2 evaluators');
    assert.deepEqual(run.provider_batches, [{ id: mine[0].id, status: 'ended', requests: 10 }]);
    const rows = await rowsOf(id);
    assert.equal(rows.length, 5);
    assert.equal(new Set(rows.map((r) => r.execution_log_id)).size, 5, 'one log per row');
    for (const row of rows) {
      for (const r of row.evaluator_results) {
        assert.equal(r.score, 0.8);
        const usage = { input_tokens: r.input_tokens, output_tokens: r.output_tokens, cache_read_tokens: r.cache_read_tokens, cache_write_tokens: r.cache_write_tokens };
        assert.ok(Math.abs(r.cost_usd - batchCostUsd(MODEL, usage, DEFAULT_PRICES)!) < 1e-9, `batch price: ${JSON.stringify(r)}`);
      }
    }
    assert.ok(
      rows.some((r) => r.evaluator_results.some((e: any) => e.cache_read_tokens > 0)),
      'cache reads recorded as such',
    );
    // `tribunal batch status` shows the provider batch's state.
    const cli = await runCli(['batch', 'status', id], { env: { TRIBUNAL_URL: server.url, TRIBUNAL_API_KEY: key } });
    assert.equal(cli.code, 0, cli.stderr);
    assert.ok(cli.stdout.includes(`Provider batches: ${mine[0].id} ended (10 requests).`), cli.stdout);
    lastRun = id;
  });

  it('the web run page shows the provider batches', { skip: chromiumAvailable() ? false : 'Chromium is not installed' }, async () => {
    const b = await launchBrowser();
    try {
      await b.page.goto(`${server.url}/app/sign-in`);
      await b.page.getByRole('textbox', { name: 'API key', exact: true }).fill(key);
      await b.page.getByRole('button', { name: 'Sign in' }).click();
      await b.page.getByRole('heading', { level: 1, name: 'Judges' }).waitFor();
      await b.page.goto(`${server.url}/app/batches/${lastRun}`);
      const cell = b.page.locator('[data-provider-batches]');
      await cell.waitFor();
      assert.match((await cell.textContent()) ?? '', /Provider batch API \(half price\)\.\s+msgbatch_\d+ ended \(10 calls\)/);
      assert.deepEqual(b.errors, []);
    } finally {
      await b.close();
    }
  });

  it('fails only the rows whose requests errored or came back without the tool, with a clear error', async () => {
    anthropic.pollsUntilEnded = 1;
    anthropic.respondWith((req) =>
      req.custom_id.startsWith('r0-')
        ? { kind: 'errored', message: 'prompt is too long' }
        : req.custom_id.startsWith('r1-')
          ? { kind: 'no_tool' }
          : { kind: 'succeeded', input: { justification: 'ok', score: 1 } },
    );
    const id = await start(await judgeOf([{}]), 4);
    const run = await until(id, (b) => b.status === 'completed');
    assert.equal(run.done, 2);
    assert.equal(run.failed, 2);
    const rows = await rowsOf(id);
    assert.match(rows[0].error, /prompt is too long/);
    assert.match(rows[1].error, /without calling the tool/);
    assert.equal(rows[2].score, 1);
    assert.equal(new Set(rows.map((r) => r.execution_log_id)).size, 4, 'failed rows are logged too, once each');
  });

  it('fails the rows of an expired batch, saying it expired', async () => {
    anthropic.pollsUntilEnded = 0;
    anthropic.respondWith(() => ({ kind: 'expired' }));
    const id = await start(await judgeOf([{}]), 3);
    const run = await until(id, (b) => b.status === 'completed');
    assert.equal(run.failed, 3);
    for (const row of await rowsOf(id)) assert.match(row.error, /expired/);
  });

  it("cancel cancels the provider's batch; its rows end as cancelled", async () => {
    anthropic.pollsUntilEnded = 1_000_000;
    anthropic.respondWith(() => ({ kind: 'succeeded', input: { justification: 'ok', score: 1 } }));
    const before = anthropic.batches.length;
    const id = await start(await judgeOf([{}]), 3);
    await until(id, (b) => b.provider_batches?.[0]?.status === 'in_progress');
    const cancel = await post(`/v1/judges/batch-executions/${id}/cancel/`, {});
    assert.equal(cancel.status, 200, JSON.stringify(cancel.body));
    const batch = anthropic.batches[before];
    assert.equal(batch.canceled, true, 'the provider batch was cancelled');
    const run = await until(id, (b) => b.provider_batches?.[0]?.status === 'ended' && b.done + b.failed === 3);
    assert.equal(run.status, 'cancelled');
    for (const row of await rowsOf(id)) assert.match(row.error, /cancelled/);
  });

  it('goes through the OpenAI Batch API for a registered model whose base URL serves it', async () => {
    const reg = await post('/v1/models/', { name: `oa-batch-${Date.now()}`, provider: 'openai', base_url: openai.url, model: 'gpt-4o-mini', api_key: 'sk-test-dummy' });
    assert.equal(reg.status, 201, JSON.stringify(reg.body));
    const id = await start(await judgeOf([{ model: reg.body.name }]), 3);
    const run = await until(id, (b) => b.status === 'completed');
    assert.equal(run.done, 3, JSON.stringify(run));
    assert.equal(run.provider_batches.length, 1);
    assert.match(run.provider_batches[0].id, /^batch_/);
  });

  it("a jury: each juror's call goes to its own model's batch API (Anthropic and OpenAI in one run)", async () => {
    anthropic.pollsUntilEnded = 1;
    anthropic.respondWith(() => ({ kind: 'succeeded', input: { justification: 'ok', score: 0.8 } }));
    const a = await post('/v1/models/', { name: `juror-a-${Date.now()}`, provider: 'anthropic', base_url: anthropic.url, model: 'claude-juror', api_key: 'sk-ant-x' });
    const o = await post('/v1/models/', { name: `juror-o-${Date.now()}`, provider: 'openai', base_url: openai.url, model: 'gpt-juror', api_key: 'sk-x' });
    assert.equal(a.status, 201, JSON.stringify(a.body));
    assert.equal(o.status, 201, JSON.stringify(o.body));
    const id = await start(await judgeOf([{ models: [a.body.name, o.body.name], aggregation: 'mean' }]), 2);
    const run = await until(id, (b) => b.status === 'completed');
    assert.equal(run.done, 2, JSON.stringify(run));
    assert.equal(run.provider_batches.length, 2, 'one provider batch per model account');
    assert.deepEqual(run.provider_batches.map((p: any) => p.requests).sort(), [2, 2]);
    for (const row of await rowsOf(id)) assert.ok(Math.abs(row.score - 0.75) < 1e-9, `mean of the jurors 0.8 and 0.7: ${row.score}`);
  });

  it('a calibration run in mode provider_batch scores its batch through the provider', async () => {
    anthropic.pollsUntilEnded = 1;
    anthropic.respondWith(() => ({ kind: 'succeeded', input: { justification: 'ok', score: 1 } }));
    const ev = await post('/v1/evaluators/', evaluatorBody());
    const dataset = await post('/v1/datasets/', { name: `calibration ${Date.now()}` });
    const labelled = [1, 0.5, 0].map((score, i) => ({ request: `q${i}`, response: `a${i}`, expected_scores: { [ev.body.id]: score } }));
    assert.equal((await post(`/v1/datasets/${dataset.body.id}/items/`, { items: labelled })).status, 201);
    const cal = await post('/v1/calibration-runs/', { evaluator_id: ev.body.id, dataset_id: dataset.body.id, mode: 'provider_batch' });
    assert.equal(cal.status, 202, JSON.stringify(cal.body));
    const run = await until(cal.body.batch_execution_id, (b) => b.status === 'completed');
    assert.equal(run.mode, 'provider_batch');
    assert.equal(run.done, 3);
    assert.equal(run.provider_batches[0].status, 'ended');
  });

  it('refuses at the start a model without a batch API, naming it', async () => {
    const name = `no-batch-${Date.now()}`;
    // The Anthropic fake serves only /v1/messages/batches: GET /v1/batches is a 404 there.
    const reg = await post('/v1/models/', { name, provider: 'openai', base_url: `${anthropic.url}/v1`, model: 'gpt-4o-mini', api_key: 'sk-test-dummy' });
    assert.equal(reg.status, 201, JSON.stringify(reg.body));
    const judgeId = await judgeOf([{ model: name }]);
    const res = await post(`/v1/judges/${judgeId}/batch-execute/`, { items: items(2), mode: 'provider_batch' });
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.ok(res.body.detail.includes(name), res.body.detail);
    assert.match(res.body.detail, /no batch API/);
  });
});
