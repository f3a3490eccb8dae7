// Prompt caching (docs/MODELS.md, "Caching"): the static part of a scoring prompt (instructions,
// rubric, demonstrations) is the same bytes on every call of one evaluator version, marked for
// Anthropic's prompt cache; the caching fake bills it as the API would, and each result records its
// cache-read and cache-write tokens, priced at the provider's rates, and the settings it was scored with.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { costUsd } from '../src/engine/providers/cost.ts';
import { versionNonce } from '../src/conversation/fence.ts';
import { startFakeOpenAI, type FakeOpenAI } from './helpers/fake-openai.ts';
import { evaluatorBody, startScoringRig, type ScoringRig } from './helpers/execute.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

/** Demonstrations long enough (well over 1,024 tokens) for the prompt cache to keep the prefix. */
const DEMONSTRATIONS = Array.from({ length: 6 }, (_, i) => ({
  request: `Example question ${i}: ${'How do I configure the billing export for a team account? '.repeat(12)}`,
  response: `Example answer ${i}: ${'Open Settings, then Billing, then Export, and pick the team. '.repeat(12)}`,
  score: i / 5,
  justification: `Example ${i} is scored ${i / 5} because ${'it follows the steps only in part. '.repeat(6)}`,
}));

describe('a stable prompt prefix, cached by Anthropic', () => {
  let rig: ScoringRig;
  before(async () => {
    rig = await startScoringRig({ TRIBUNAL_SECRET_KEY: randomBytes(32).toString('base64') });
  });
  after(() => rig.close());

  test('two calls of one evaluator version send identical system bytes; the second reads them from the cache', async () => {
    const evaluator = await rig.createEvaluator(evaluatorBody({ demonstrations: DEMONSTRATIONS }));
    rig.fake.resetStats();
    rig.fake.forgetCache();
    const first = await rig.post(`/v1/evaluators/${evaluator.id}/execute/`, { request: 'Q1', response: 'First answer.' });
    const second = await rig.post(`/v1/evaluators/${evaluator.id}/execute/`, { request: 'Q2 <b>', response: 'A different answer entirely.' });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal(second.status, 200, JSON.stringify(second.body));
    const [a, b] = rig.fake.requests;
    // The exact bytes: one system text block, marked for the cache, the same on both calls.
    assert.equal(JSON.stringify(a.body.system), JSON.stringify(b.body.system));
    assert.deepEqual(
      a.body.system.map((block: { cache_control?: unknown }) => block.cache_control),
      [{ type: 'ephemeral' }],
    );
    assert.ok(a.system.includes('# Scored examples'), 'the demonstrations are in the static part');
    assert.notEqual(a.prompt, b.prompt, 'the material differs');
    // The caching fake wrote the prefix once and read it once.
    assert.equal(rig.fake.cacheStats.writes, 1);
    assert.equal(rig.fake.cacheStats.reads, 1);

    const r1 = first.body.evaluator_results[0];
    const r2 = second.body.evaluator_results[0];
    assert.ok(r1.cache_write_tokens > 1024, JSON.stringify(r1));
    assert.equal(r1.cache_read_tokens, 0);
    assert.equal(r2.cache_read_tokens, r1.cache_write_tokens);
    assert.equal(r2.cache_write_tokens, 0);
    // input_tokens counts every prompt token, the cached ones included.
    assert.ok(r2.input_tokens > r2.cache_read_tokens);
    // Priced at Anthropic's rates for claude-sonnet-4-5 ($3 in, $15 out): writes 1.25x, reads 0.1x.
    const price = (r: any) =>
      ((r.input_tokens - r.cache_read_tokens - r.cache_write_tokens) * 3 + r.cache_write_tokens * 3.75 + r.cache_read_tokens * 0.3 + r.output_tokens * 15) / 1e6;
    assert.ok(Math.abs(r1.cost_usd - price(r1)) < 1e-8, `${r1.cost_usd} vs ${price(r1)}`);
    assert.ok(Math.abs(r2.cost_usd - price(r2)) < 1e-8, `${r2.cost_usd} vs ${price(r2)}`);
    assert.ok(r2.cost_usd < r1.cost_usd / 2, 'the cached call costs far less');
    // The log keeps the same figures.
    const log = await rig.get(`/v1/execution-logs/${second.body.execution_log_id}/`);
    assert.equal(log.body.evaluator_results[0].cache_read_tokens, r2.cache_read_tokens);
  });

  test('temperature 0 and the settings are recorded on the result and in the log', async () => {
    const evaluator = await rig.createEvaluator(evaluatorBody());
    rig.fake.resetStats();
    const res = await rig.post(`/v1/evaluators/${evaluator.id}/execute/`, { request: 'Q', response: 'A.' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(rig.fake.requests[0].body.temperature, 0, 'claude-sonnet-4-5 takes a temperature');
    const expected = { temperature: 0, max_tokens: rig.config.model.maxTokens, strategy: 'tool' };
    assert.deepEqual(res.body.evaluator_results[0].settings, expected);
    const log = await rig.get(`/v1/execution-logs/${res.body.execution_log_id}/`);
    assert.deepEqual(log.body.evaluator_results[0].settings, expected);
  });

  test('a new version of the evaluator changes the nonce and so the prefix: a fresh cache write', async () => {
    const evaluator = await rig.createEvaluator(evaluatorBody({ demonstrations: DEMONSTRATIONS }));
    await rig.post(`/v1/evaluators/${evaluator.id}/execute/`, { response: 'warm-up' });
    rig.fake.resetStats();
    const patched = await rig.server.request('PATCH', `/v1/evaluators/${evaluator.id}/`, { key: rig.key, body: { intent: 'Checks quality, version two.' } });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    const res = await rig.post(`/v1/evaluators/${evaluator.id}/execute/`, { response: 'after the edit' });
    assert.equal(res.status, 200);
    assert.equal(rig.fake.cacheStats.writes, 1);
    assert.equal(rig.fake.cacheStats.reads, 0);
    const nonce = (text: string) => /<response_([0-9a-f]{24})>/.exec(text)![1];
    assert.equal(nonce(rig.fake.requests[0].prompt), versionNonce(Buffer.from(rig.server.config.registry.secretKey!), evaluator.id, 2));
  });
});

describe('the nonce of an evaluator version', () => {
  test('is an HMAC of the secret and (evaluator id, version): stable, and different for another version, id or secret', () => {
    const secret = randomBytes(32);
    const n = versionNonce(secret, 'evl_a', 1);
    assert.match(n, /^[0-9a-f]{24}$/);
    assert.equal(versionNonce(Buffer.from(secret), 'evl_a', 1), n, 'the same secret after a restart: the same nonce');
    assert.notEqual(versionNonce(secret, 'evl_a', 2), n);
    assert.notEqual(versionNonce(secret, 'evl_b', 1), n);
    assert.notEqual(versionNonce(randomBytes(32), 'evl_a', 1), n);
    // Without TRIBUNAL_SECRET_KEY: a random secret of this process, still stable within it.
    assert.equal(versionNonce(null, 'evl_a', 1), versionNonce(null, 'evl_a', 1));
    assert.notEqual(versionNonce(null, 'evl_a', 1), n);
  });
});

describe('cache pricing', () => {
  const prices = { m: { input: 10, output: 20 }, custom: { input: 10, output: 20, cache_read: 2, cache_write: 11 } };
  test('Anthropic: writes at 1.25x input, reads at 0.1x; OpenAI: reads at 0.5x, no write charge; a price may name its own rates', () => {
    const usage = { input_tokens: 1_000_000, output_tokens: 0, cache_read_tokens: 600_000, cache_write_tokens: 300_000 };
    // 100k plain at 10 + 300k written at 12.5 + 600k read at 1.
    assert.equal(costUsd('m', usage, prices, 'anthropic'), 1 + 3.75 + 0.6);
    assert.equal(costUsd('m', usage, prices, 'openai'), 1 + 3 + 3);
    assert.equal(costUsd('custom', usage, prices, 'anthropic'), 1 + 3.3 + 1.2);
    // No cache tokens: the plain price, as before.
    assert.equal(costUsd('m', { input_tokens: 1_000_000, output_tokens: 1_000_000 }, prices), 30);
  });
});

describe('the openai provider: the same stable prefix, cached tokens priced at half', () => {
  let server: TestServer;
  let fake: FakeOpenAI;
  let key: string;
  before(async () => {
    fake = await startFakeOpenAI();
    server = await startTestServer({
      TRIBUNAL_SECRET_KEY: randomBytes(32).toString('base64'),
      TRIBUNAL_MODEL_BACKOFF: '1ms',
      TRIBUNAL_MODEL_BACKOFF_MAX: '4ms',
      TRIBUNAL_RATE_LIMIT: '100000',
    });
    key = (await server.demoUser()).api_key;
  });
  after(async () => {
    await server.close();
    await fake.close();
  });

  test('the system message repeats byte for byte; cached_tokens become cache_read_tokens', async () => {
    fake.cachedTokens = 512;
    const model = await server.request('POST', '/v1/models/', {
      key,
      body: { name: 'local', provider: 'openai', base_url: fake.url, model: 'judge-8b', price: { input: 1, output: 2 } },
    });
    assert.equal(model.status, 201, JSON.stringify(model.body));
    const ev = await server.request('POST', '/v1/evaluators/', { key, body: evaluatorBody({ model: 'local', demonstrations: DEMONSTRATIONS.slice(0, 1) }) });
    assert.equal(ev.status, 201, JSON.stringify(ev.body));
    const run = (response: string) => server.request('POST', `/v1/evaluators/${ev.body.id}/execute/`, { key, body: { request: 'Q', response } });
    const first = await run('one');
    const second = await run('two');
    assert.equal(second.status, 200, JSON.stringify(second.body));
    const [a, b] = fake.requests.slice(-2).map((r) => r.body);
    assert.equal(a.messages[0].role, 'system');
    assert.equal(a.messages[0].content, b.messages[0].content);
    assert.equal(a.temperature, 0);
    assert.equal(first.body.evaluator_results[0].cache_read_tokens, 0);
    const r = second.body.evaluator_results[0];
    assert.equal(r.cache_read_tokens, 512);
    // 488 plain at $1 + 512 cached at $0.50 + 100 out at $2, per million.
    assert.equal(r.cost_usd, (488 * 1 + 512 * 0.5 + 100 * 2) / 1e6);
    assert.deepEqual(r.settings, { temperature: 0, max_tokens: server.config.model.maxTokens, strategy: 'tool' });
  });
});
