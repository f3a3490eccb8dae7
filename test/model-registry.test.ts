// The per-organization model registry (issue 17 part A): /v1/models/ with write-only, encrypted API
// keys, verify finding what a server honours, the `openai` provider through the official SDK against
// a fake Chat Completions server, the structured-answer strategies (forced tool, JSON schema, JSON in
// the prompt), an Anthropic-compatible server that ignores tool_choice, per-model price and
// concurrency, and organization isolation. TRIBUNAL_TEST_STORE=postgres runs it on PostgreSQL.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { startFakeAnthropic, type FakeAnthropic } from './helpers/fake-anthropic.ts';
import { startFakeOpenAI, type FakeOpenAI } from './helpers/fake-openai.ts';
import { evaluatorBody } from './helpers/execute.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

const SECRET = randomBytes(32).toString('base64');
// Built at run time so that no key-shaped literal sits in the source.
const MODEL_KEY = `sk-live-${randomBytes(12).toString('hex')}`;

const env = { TRIBUNAL_SECRET_KEY: SECRET, TRIBUNAL_MODEL_BACKOFF: '1ms', TRIBUNAL_MODEL_BACKOFF_MAX: '4ms', TRIBUNAL_MODEL_TIMEOUT: '5s', TRIBUNAL_RATE_LIMIT: '100000' };

describe('the model registry', () => {
  let server: TestServer;
  let fake: FakeOpenAI;
  let key: string;
  let other: string;
  const answers: string[] = [];
  const call = async (method: string, path: string, body?: unknown, as = key) => {
    const res = await server.request(method, path, { key: as, body });
    answers.push(JSON.stringify(res.body));
    return res;
  };
  const register = async (body: Record<string, unknown>) => {
    const res = await call('POST', '/v1/models/', { provider: 'openai', base_url: fake.url, model: 'judge-8b', api_key: MODEL_KEY, ...body });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body;
  };
  const scoreWith = async (model: string) => {
    const ev = await call('POST', '/v1/evaluators/', evaluatorBody({ model }));
    assert.equal(ev.status, 201, JSON.stringify(ev.body));
    return call('POST', `/v1/evaluators/${ev.body.id}/execute/`, { request: 'What is 2+2?', response: 'It is 4.' });
  };

  before(async () => {
    fake = await startFakeOpenAI({ apiKey: MODEL_KEY });
    server = await startTestServer(env);
    key = (await server.demoUser()).api_key;
    other = (await server.demoUser()).api_key;
  });
  after(async () => {
    await server.close();
    await fake.close();
  });

  test('a model is registered, read, edited and deleted; the key is write-only and shown as its last 4 characters', async () => {
    const made = await register({ name: 'crud', price: { input: 1, output: 2 } });
    assert.equal(made.api_key_hint, MODEL_KEY.slice(-4));
    assert.equal(made.capabilities, null);
    assert.equal('api_key' in made || 'api_key_encrypted' in made || 'org_id' in made, false);
    assert.equal((await call('GET', `/v1/models/${made.id}/`)).body.name, 'crud');
    assert.equal((await call('GET', '/v1/models/crud/')).body.id, made.id, 'by name too');
    const listed = await call('GET', '/v1/models/');
    assert.ok(listed.body.results.some((m: { id: string }) => m.id === made.id));
    const patched = await call('PATCH', `/v1/models/${made.id}/`, { max_concurrency: 3, name: 'crud-2' });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.equal(patched.body.max_concurrency, 3);
    assert.equal((await call('POST', '/v1/models/', { name: 'crud-2', provider: 'openai', model: 'x' })).status, 409, 'names are unique per org');
    assert.equal((await call('DELETE', `/v1/models/${made.id}/`)).status, 200);
    assert.equal((await call('GET', `/v1/models/${made.id}/`)).status, 404);
  });

  test('bad input is a 400 that names the field', async () => {
    const bad = await call('POST', '/v1/models/', { name: 'bad', provider: 'mistral', model: 'x' });
    assert.equal(bad.status, 400);
    assert.match(JSON.stringify(bad.body), /provider/);
    const url = await call('POST', '/v1/models/', { name: 'bad', provider: 'openai', model: 'x', base_url: 'ftp://host/' });
    assert.equal(url.status, 400);
    assert.match(url.body.detail, /http/);
    const typo = await call('POST', '/v1/models/', { name: 'bad', provider: 'openai', model: 'x', apiKey: 'k' });
    assert.equal(typo.status, 400, 'an unknown field (a misspelt api_key) is refused, not dropped');
    assert.match(JSON.stringify(typo.body), /apiKey/);
  });

  test('another organization can neither see nor use a model', async () => {
    const made = await register({ name: 'private-judge' });
    assert.equal((await call('GET', `/v1/models/${made.id}/`, undefined, other)).status, 404);
    assert.equal((await call('POST', `/v1/models/${made.id}/verify/`, undefined, other)).status, 404);
    assert.equal((await call('DELETE', `/v1/models/${made.id}/`, undefined, other)).status, 404);
    assert.equal((await call('GET', '/v1/models/', undefined, other)).body.results.length, 0);
    const ev = await call('POST', '/v1/evaluators/', evaluatorBody({ model: 'private-judge' }), other);
    assert.equal(ev.status, 400, 'an evaluator of another org cannot name it');
    assert.match(ev.body.detail, /registered/);
  });

  test('verify stores what the server honours; scoring forces the tool, at temperature 0, priced by the model', async () => {
    const made = await register({ name: 'full', price: { input: 2, output: 10 }, max_concurrency: 2 });
    const verified = await call('POST', `/v1/models/${made.id}/verify/`);
    assert.equal(verified.status, 200, JSON.stringify(verified.body));
    assert.deepEqual(verified.body.capabilities, { forced_tool: true, json_schema: true, logprobs: true });
    assert.ok(verified.body.verified_at);
    fake.answer = { justification: 'Correct and on topic.', score: 0.9 };
    const before = fake.requests.length;
    const run = await scoreWith('full');
    assert.equal(run.status, 200, JSON.stringify(run.body));
    const result = run.body.evaluator_results[0];
    assert.equal(result.score, 0.9);
    assert.equal(result.model, 'judge-8b');
    // 1000 in at $2/M + 100 out at $10/M
    assert.equal(result.cost_usd, 0.003);
    const sent = fake.requests[before].body;
    assert.equal(sent.tool_choice.function.name, 'submit_evaluation');
    assert.equal(sent.temperature, 0);
    assert.equal(sent.model, 'judge-8b');
  });

  test('an evaluator whose registered model was deleted fails with a clear error and calls nothing', async () => {
    await register({ name: 'short-lived' });
    const ev = await call('POST', '/v1/evaluators/', evaluatorBody({ model: 'short-lived' }));
    await call('DELETE', '/v1/models/short-lived/');
    const before = fake.requests.length;
    const run = await call('POST', `/v1/evaluators/${ev.body.id}/execute/`, { request: 'q', response: 'an answer' });
    assert.equal(run.status, 502, JSON.stringify(run.body));
    assert.match(run.body.detail, /"short-lived" is neither registered/);
    assert.equal(fake.requests.length, before);
  });

  test('a model without a price costs null (unknown), never 0', async () => {
    await register({ name: 'unpriced' });
    const run = await scoreWith('unpriced');
    assert.equal(run.status, 200, JSON.stringify(run.body));
    assert.equal(run.body.evaluator_results[0].cost_usd, null);
    assert.equal(run.body.cost_usd, null);
  });

  test('a refused key is a clear problem from verify, in the provider words, without the key', async () => {
    const made = await register({ name: 'wrong-key', api_key: `sk-wrong-${randomBytes(8).toString('hex')}` });
    const res = await call('POST', `/v1/models/${made.id}/verify/`);
    assert.equal(res.status, 502);
    assert.equal(res.body.code, 'model_unavailable');
    assert.match(res.body.detail, /refused the API key.*Incorrect API key/);
  });

  test('429 and 500 are retried by the same resilient layer', async () => {
    await register({ name: 'flaky' });
    fake.enqueue({ status: 429, headers: { 'retry-after': '0' } }, { status: 500 });
    const run = await scoreWith('flaky');
    assert.equal(run.status, 200, JSON.stringify(run.body));
    assert.equal(typeof run.body.evaluator_results[0].score, 'number');
  });

  test("max_concurrency caps the model's calls in flight", async () => {
    await register({ name: 'narrow', max_concurrency: 2 });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await call('POST', '/v1/evaluators/', evaluatorBody({ model: 'narrow' }))).body.id);
    const judge = await call('POST', '/v1/judges/', { name: `narrow judge ${Date.now()}`, intent: 'Checks answers.', evaluator_ids: ids });
    assert.equal(judge.status, 201, JSON.stringify(judge.body));
    const fresh = await startFakeOpenAI({ apiKey: MODEL_KEY });
    try {
      await call('PATCH', '/v1/models/narrow/', { base_url: fresh.url });
      fresh.latencyMs = 40;
      const run = await call('POST', `/v1/judges/${judge.body.id}/execute/`, { request: 'q', response: 'an answer' });
      assert.equal(run.status, 200, JSON.stringify(run.body));
      assert.equal(fresh.requests.length, 5);
      assert.equal(fresh.peakInFlight, 2);
    } finally {
      await fresh.close();
    }
  });

  test('the key never appears in any answer', () => {
    assert.ok(answers.length > 20);
    for (const a of answers) assert.ok(!a.includes(MODEL_KEY), `leaked in ${a.slice(0, 200)}`);
  });
});

describe('structured-answer strategies from the verified capabilities', () => {
  let server: TestServer;
  let key: string;
  before(async () => {
    server = await startTestServer(env);
    key = (await server.demoUser()).api_key;
  });
  after(() => server.close());

  async function verifyAndScore(honours: { tools?: boolean; jsonSchema?: boolean; logprobs?: boolean }, name: string) {
    const fake = await startFakeOpenAI({ honours });
    try {
      const made = await server.request('POST', '/v1/models/', { key, body: { name, provider: 'openai', base_url: fake.url, model: 'local' } });
      assert.equal(made.status, 201, JSON.stringify(made.body));
      const verified = await server.request('POST', `/v1/models/${made.body.id}/verify/`, { key });
      assert.equal(verified.status, 200, JSON.stringify(verified.body));
      fake.answer = { justification: 'Mostly right.', score: 0.6 };
      const ev = await server.request('POST', '/v1/evaluators/', { key, body: evaluatorBody({ model: name }) });
      const before = fake.requests.length;
      const run = await server.request('POST', `/v1/evaluators/${ev.body.id}/execute/`, { key, body: { request: 'q', response: 'an answer' } });
      assert.equal(run.status, 200, JSON.stringify(run.body));
      return { capabilities: verified.body.capabilities, score: run.body.evaluator_results[0].score, sent: fake.requests.slice(before).map((r) => r.body) };
    } finally {
      await fake.close();
    }
  }

  test('a server that ignores tool_choice but offers json_schema scores through the response format', async () => {
    const { capabilities, score, sent } = await verifyAndScore({ tools: false, jsonSchema: true, logprobs: false }, 'schema-only');
    assert.deepEqual(capabilities, { forced_tool: false, json_schema: true, logprobs: false });
    assert.equal(score, 0.6);
    assert.equal(sent.length, 1);
    assert.equal(sent[0].response_format.type, 'json_schema');
    assert.equal(sent[0].tools, undefined);
  });

  test('a server with neither scores through JSON asked for in the prompt, validated, never read from prose', async () => {
    const { capabilities, score, sent } = await verifyAndScore({ tools: false, jsonSchema: false, logprobs: false }, 'plain');
    assert.deepEqual(capabilities, { forced_tool: false, json_schema: false, logprobs: false });
    assert.equal(score, 0.6);
    assert.equal(sent[0].response_format, undefined);
    assert.match(sent[0].messages[1].content, /one JSON object/);
  });

  test('an unverified model on a server that ignores tool_choice gets prose, and prose is never scored', async () => {
    const fake = await startFakeOpenAI({ honours: { tools: false } });
    try {
      await server.request('POST', '/v1/models/', { key, body: { name: 'unverified', provider: 'openai', base_url: fake.url, model: 'local' } });
      const ev = await server.request('POST', '/v1/evaluators/', { key, body: evaluatorBody({ model: 'unverified' }) });
      const run = await server.request('POST', `/v1/evaluators/${ev.body.id}/execute/`, { key, body: { request: 'q', response: 'an answer' } });
      assert.equal(run.status, 502, JSON.stringify(run.body));
      assert.equal(fake.requests.length, 3, 'asked three times (the malformed-answer retries)');
      assert.match(run.body.detail, /without calling the function/);
    } finally {
      await fake.close();
    }
  });
});

describe('the anthropic provider at any base_url', () => {
  let server: TestServer;
  let fake: FakeAnthropic;
  let key: string;
  before(async () => {
    fake = await startFakeAnthropic();
    server = await startTestServer(env);
    key = (await server.demoUser()).api_key;
  });
  after(async () => {
    await server.close();
    await fake.close();
  });

  test("a Messages server that ignores tool_choice (Ollama's) still yields a validated score through JSON", async () => {
    // Like Ollama's Messages API: with a tool offered it writes prose; asked for JSON, it answers JSON.
    fake.respondWith((req) =>
      req.body.tools
        ? { kind: 'text', text: 'This answer deserves about 0.7.' }
        : /one JSON object/.test(req.prompt)
          ? { kind: 'text', text: '```json\n{"justification": "Right, a little terse.", "score": 0.7}\n```' }
          : { kind: 'text', text: 'no' },
    );
    const made = await server.request('POST', '/v1/models/', { key, body: { name: 'ollama-messages', provider: 'anthropic', base_url: fake.url, model: 'llama3.1:8b' } });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const verified = await server.request('POST', `/v1/models/${made.body.id}/verify/`, { key });
    assert.equal(verified.status, 200, JSON.stringify(verified.body));
    assert.deepEqual(verified.body.capabilities, { forced_tool: false, json_schema: false, logprobs: false });
    const ev = await server.request('POST', '/v1/evaluators/', { key, body: evaluatorBody({ model: 'ollama-messages' }) });
    const before = fake.requests.length;
    const run = await server.request('POST', `/v1/evaluators/${ev.body.id}/execute/`, { key, body: { request: 'q', response: 'an answer' } });
    assert.equal(run.status, 200, JSON.stringify(run.body));
    assert.equal(run.body.evaluator_results[0].score, 0.7);
    assert.equal(fake.requests[before].body.tools, undefined);
    assert.equal(fake.requests[before].body.model, 'llama3.1:8b');
  });

  test('a Messages server that honours the tool is verified as such and scored through it', async () => {
    fake.respondWith(null);
    const made = await server.request('POST', '/v1/models/', {
      key,
      body: { name: 'claude-here', provider: 'anthropic', base_url: fake.url, model: 'claude-sonnet-4-5', api_key: MODEL_KEY },
    });
    const verified = await server.request('POST', `/v1/models/${made.body.id}/verify/`, { key });
    assert.equal(verified.status, 200, JSON.stringify(verified.body));
    assert.equal(verified.body.capabilities.forced_tool, true);
    const headers = fake.requests.at(-1)!.headers;
    assert.ok(headers['x-api-key'] === MODEL_KEY || headers.authorization === `Bearer ${MODEL_KEY}`, 'the stored key is the one sent');
  });
});

describe('without TRIBUNAL_SECRET_KEY', () => {
  test('registering a model is refused with how to make a secret', async () => {
    const server = await startTestServer({ TRIBUNAL_SECRET_KEY: undefined });
    try {
      const key = (await server.demoUser()).api_key;
      const res = await server.request('POST', '/v1/models/', { key, body: { name: 'm', provider: 'openai', model: 'x' } });
      assert.equal(res.status, 503);
      assert.match(res.body.detail, /TRIBUNAL_SECRET_KEY.*randomBytes\(32\)/);
    } finally {
      await server.close();
    }
  });

  test('a malformed secret stops the start with how to make one', async () => {
    await assert.rejects(startTestServer({ TRIBUNAL_SECRET_KEY: 'too-short' }), /TRIBUNAL_SECRET_KEY.*32 random bytes/);
  });
});

describe('TRIBUNAL_MODEL_HOSTS', () => {
  test('restricts base_url to the listed hosts', async () => {
    const server = await startTestServer({ ...env, TRIBUNAL_MODEL_HOSTS: 'models.internal,127.0.0.1' });
    try {
      const key = (await server.demoUser()).api_key;
      const refused = await server.request('POST', '/v1/models/', { key, body: { name: 'm', provider: 'openai', model: 'x', base_url: 'http://169.254.169.254/v1' } });
      assert.equal(refused.status, 400);
      assert.match(refused.body.detail, /TRIBUNAL_MODEL_HOSTS/);
      const allowed = await server.request('POST', '/v1/models/', { key, body: { name: 'm', provider: 'openai', model: 'x', base_url: 'http://127.0.0.1:9/v1' } });
      assert.equal(allowed.status, 201, JSON.stringify(allowed.body));
    } finally {
      await server.close();
    }
  });
});
