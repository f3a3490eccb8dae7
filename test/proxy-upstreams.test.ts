// h-proxy (issue 27): the judge proxy's server-configured upstreams (TRIBUNAL_PROXY_UPSTREAMS), its
// one bound on upstream reads (engine/providers/bounded-body.ts), and a graceful shutdown that waits for
// async judging. Through the real `openai` SDK, against the fake upstream. Both stores.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { loadConfig } from '../src/config.ts';
import { sendWithTribunal } from '../src/proxy/chat.ts';
import { DUMMY_KEY, evaluatorBody, TEST_MODEL } from './helpers/execute.ts';
import { startFakeAnthropic, type FakeAnthropic } from './helpers/fake-anthropic.ts';
import { startFakeOpenAI, type FakeOpenAI } from './helpers/fake-openai.ts';
import { startProxyRig, waitForLog, type ProxyRig } from './helpers/proxy-rig.ts';
import { openTestStore, startTestServer, tempDir } from './helpers/server.ts';

const MESSAGES = [{ role: 'user' as const, content: 'What is the capital of France?' }];
const SERVER_KEY = 'sk-server-upstream-dummy';

describe('server-configured upstreams', () => {
  let rig: ProxyRig;
  let offered: FakeOpenAI;
  before(async () => {
    offered = await startFakeOpenAI({ apiKey: SERVER_KEY });
    offered.reply = { content: 'Paris, from the server upstream.' };
    rig = await startProxyRig({
      TEST_PROXY_UPSTREAM_KEY: SERVER_KEY,
      TRIBUNAL_PROXY_UPSTREAMS: JSON.stringify({
        'server-gpt': { base_url: offered.url, model: 'gpt-srv', api_key_env: 'TEST_PROXY_UPSTREAM_KEY', allow_demo: true, price: { input: 1, output: 2 } },
        'private-gpt': { base_url: offered.url, api_key_env: 'TEST_PROXY_UPSTREAM_KEY' },
        'app-model': { base_url: offered.url, api_key_env: 'TEST_PROXY_UPSTREAM_KEY', allow_demo: true },
      }),
    });
  });
  after(async () => {
    await rig?.close();
    await offered?.close();
  });

  test('a model the server offers by name is called with the key from its variable, never the caller’s', async () => {
    const completion: any = await rig.client().chat.completions.create({ model: 'server-gpt', messages: MESSAGES });
    assert.equal(completion.choices[0].message.content, 'Paris, from the server upstream.');
    const sent = offered.requests.at(-1)!;
    assert.equal(sent.headers.authorization, `Bearer ${SERVER_KEY}`);
    assert.equal(sent.body.model, 'gpt-srv');
    assert.ok(!JSON.stringify(sent.headers).includes(rig.key), 'the caller’s Tribunal key must not reach the upstream');
    assert.equal(typeof completion.tribunal.score, 'number');
    const log = await waitForLog(rig, completion.tribunal.execution_log_id);
    assert.equal(log.proxy.model, 'server-gpt');
    assert.equal(log.proxy.upstream_model, 'gpt-srv');
    assert.equal(log.proxy.cost_usd, (50 * 1 + 20 * 2) / 1_000_000);
  });

  test('streamed through a server upstream as well', async () => {
    const stream = await rig.client().chat.completions.create({ model: 'server-gpt', messages: MESSAGES, stream: true });
    let text = '';
    let tribunal: any;
    for await (const chunk of stream as any) {
      text += chunk.choices[0]?.delta?.content ?? '';
      if (chunk.tribunal) tribunal = chunk.tribunal;
    }
    assert.equal(text, 'Paris, from the server upstream.');
    assert.equal(typeof tribunal.score, 'number');
  });

  test('a registered model of the caller’s organization wins over a server upstream of the same name', async () => {
    const before = offered.requests.length;
    const completion: any = await rig.client().chat.completions.create({ model: 'app-model', messages: MESSAGES });
    assert.equal(completion.choices[0].message.content, 'Paris is the capital of France.');
    assert.equal(offered.requests.length, before);
  });

  test('a server upstream not offered to demo organizations is a PermissionDeniedError, before any call', async () => {
    const before = offered.requests.length;
    await assert.rejects(rig.client().chat.completions.create({ model: 'private-gpt', messages: MESSAGES }), (err: any) => {
      assert.ok(err instanceof OpenAI.PermissionDeniedError, err?.constructor?.name);
      assert.match(err.message, /not offered to demo organizations/);
      return true;
    });
    assert.equal(offered.requests.length, before);
  });

  test('an unknown name lists the server’s upstreams', async () => {
    await assert.rejects(rig.client().chat.completions.create({ model: 'gpt-4o', messages: MESSAGES }), (err: any) => {
      assert.ok(err instanceof OpenAI.NotFoundError);
      assert.match(err.message, /nor one of the server's upstreams \(server-gpt, private-gpt, app-model\)/);
      return true;
    });
  });
});

describe('TRIBUNAL_PROXY_UPSTREAMS is checked at start', () => {
  test('not set: the proxy says the server offers none', async () => {
    const rig = await startProxyRig();
    try {
      await assert.rejects(rig.client().chat.completions.create({ model: 'server-gpt', messages: MESSAGES }), (err: any) => {
        assert.ok(err instanceof OpenAI.NotFoundError);
        assert.match(err.message, /the server offers no upstreams of its own \(TRIBUNAL_PROXY_UPSTREAMS\)/);
        return true;
      });
    } finally {
      await rig.close();
    }
  });

  test('bad values are refused with what to fix; the key variable must be set', () => {
    assert.throws(() => loadConfig({ TRIBUNAL_PROXY_UPSTREAMS: '{nope' }), /TRIBUNAL_PROXY_UPSTREAMS: is not valid JSON/);
    assert.throws(() => loadConfig({ TRIBUNAL_PROXY_UPSTREAMS: '{"a": {"base_url": "ftp://x"}}' }), /TRIBUNAL_PROXY_UPSTREAMS: a\.base_url: must be an http\(s\) URL/);
    assert.throws(() => loadConfig({ TRIBUNAL_PROXY_UPSTREAMS: '{"a": {"base_url": "https://x.test/v1", "key": "sk-inline"}}' }), /TRIBUNAL_PROXY_UPSTREAMS: a: .*api_key_env/);
    assert.throws(
      () => loadConfig({ TRIBUNAL_PROXY_UPSTREAMS: '{"a": {"base_url": "https://x.test/v1", "api_key_env": "NOT_SET_ANYWHERE"}}' }),
      /TRIBUNAL_PROXY_UPSTREAMS\.a\.api_key_env: the variable NOT_SET_ANYWHERE is not set/,
    );
    const ok = loadConfig({ TRIBUNAL_PROXY_UPSTREAMS: '{"a": {"base_url": "https://x.test/v1/", "api_key_env": "K"}}', K: 'sk-k' }).proxy.upstreams.get('a');
    assert.deepEqual(ok, { name: 'a', baseUrl: 'https://x.test/v1', model: 'a', apiKey: 'sk-k', price: null, allowDemo: false });
  });
});

describe('one bound on upstream reads', () => {
  test('an upstream answer over the bound ends as an OpenAI-shaped 502, and is logged', async () => {
    const rig = await startProxyRig();
    try {
      rig.upstream.reply = { content: 'x'.repeat(16 * 1024 * 1024 + 10) };
      let caught: any;
      await assert.rejects(rig.client().chat.completions.create({ model: 'app-model', messages: MESSAGES }), (err: any) => {
        caught = err;
        return err instanceof OpenAI.InternalServerError;
      });
      assert.equal(caught.status, 502);
      assert.match(caught.message, /The upstream answer is over 16777216 bytes/);
      assert.equal(caught.error.type, 'server_error');
      let last: any;
      for (let i = 0; i < 100 && !last; i++) {
        const logs = await rig.get(`/v1/execution-logs/?type=proxy&judge_id=${rig.judge.id}`);
        assert.equal(logs.status, 200);
        last = logs.body.results.find((l: any) => l.proxy?.outcome === 'upstream_error');
        if (!last) await new Promise((r) => setTimeout(r, 20));
      }
      assert.ok(last, 'the failed exchange is logged');
      assert.match(last.proxy.error, /over 16777216 bytes/);
    } finally {
      await rig.close();
    }
  });
});

describe('graceful shutdown', () => {
  test('waits for async judging in flight: the log the answer named exists after close', async () => {
    const fake: FakeAnthropic = await startFakeAnthropic({ latencyMs: 400 });
    const upstream = await startFakeOpenAI();
    upstream.reply = { content: 'Paris is the capital of France.' };
    const store = await openTestStore(tempDir());
    const server = await startTestServer(
      {
        ANTHROPIC_API_KEY: DUMMY_KEY,
        ANTHROPIC_BASE_URL: fake.url,
        TRIBUNAL_MODEL: TEST_MODEL,
        TRIBUNAL_RATE_LIMIT: '100000',
        TRIBUNAL_SECRET_KEY: Buffer.alloc(32, 7).toString('base64'),
      },
      { store },
    );
    try {
      const demo = await server.demoUser();
      const post = async (p: string, body: unknown) => {
        const res = await server.request('POST', p, { key: demo.api_key, body });
        assert.equal(res.status, 201, JSON.stringify(res.body));
        return res.body;
      };
      await post('/v1/models/', { name: 'app-model', provider: 'openai', base_url: upstream.url, model: 'gpt-test', api_key: 'sk-dummy' });
      const ev = await post('/v1/evaluators/', evaluatorBody());
      const judge = await post('/v1/judges/', { name: 'Shutdown judge', intent: 'Judges answers.', evaluator_ids: [ev.id] });
      const client = new OpenAI({ apiKey: demo.api_key, baseURL: `${server.url}/v1/judges/${judge.id}/openai`, maxRetries: 0, defaultQuery: { async_judge: 'true' } });
      const completion: any = await client.chat.completions.create({ model: 'app-model', messages: MESSAGES });
      assert.equal(completion.tribunal.pending, true);
      const id = completion.tribunal.execution_log_id;
      assert.equal(await store.getExecutionLog(id), null, 'the judge model takes 400 ms: the run is still in flight');
      await server.close(); // stopServices(services, 1000)
      const log = await store.getExecutionLog(id);
      assert.ok(log, 'the async-judged log was written before the shutdown finished');
      assert.equal(log.type, 'proxy');
      assert.equal(typeof log.score, 'number');
    } finally {
      await store.close();
      await upstream.close();
      await fake.close();
    }
  });
});

describe('the JSON answer goes out as the upstream wrote it', () => {
  const capture = () => {
    const out = { status: 0, headers: {} as Record<string, string>, body: '' };
    const res = { setHeader: (k: string, v: string) => (out.headers[k] = v), end: (b: string) => (out.body = b) } as any;
    Object.defineProperty(res, 'statusCode', { set: (v: number) => (out.status = v) });
    return { res, out };
  };
  const tribunal = { execution_log_id: 'log_1', score: 0.8, evaluator_results: [] };

  test('its text is kept byte for byte, with tribunal as the last member', () => {
    const text = '{"id":"chatcmpl-1",  "choices": [{"index":0}],\n "usage":{"total_tokens":3}}\n';
    const { res, out } = capture();
    sendWithTribunal(res, 200, text, JSON.parse(text), tribunal);
    assert.equal(out.status, 200);
    assert.equal(out.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(out.body, `{"id":"chatcmpl-1",  "choices": [{"index":0}],\n "usage":{"total_tokens":3},"tribunal":${JSON.stringify(tribunal)}}`);
    assert.deepEqual(JSON.parse(out.body).tribunal, tribunal);
  });

  test('an empty object, and one that already has a tribunal member (replaced, never duplicated)', () => {
    let { res, out } = capture();
    sendWithTribunal(res, 200, ' {} ', {}, tribunal);
    assert.deepEqual(JSON.parse(out.body), { tribunal });
    ({ res, out } = capture());
    sendWithTribunal(res, 200, '{"tribunal":"upstream","a":1}', { tribunal: 'upstream', a: 1 }, tribunal);
    assert.deepEqual(JSON.parse(out.body), { tribunal, a: 1 });
    assert.equal(out.body.match(/"tribunal"/g)?.length, 1);
  });
});
