// The judge model's Messages API call without the SDK client's layers (src/engine/providers/messages-request.ts,
// issue 33) against @anthropic-ai/sdk's own client, on the same fake server and the same scripted
// answers: the same request (body, and the headers the API reads), the same answer, and failures of
// the same SDK error class, status and headers, so that anthropic-model.ts classifies them alike.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { MessagesEndpoint } from '../src/engine/providers/messages-request.ts';
import { errorAnswer, type FakeAnswer, type FakeAnthropic, startFakeAnthropic, toolAnswer } from './helpers/fake-anthropic.ts';

const KEY = 'sk-ant-test-dummy';
const params: Anthropic.MessageCreateParamsNonStreaming = {
  model: 'claude-sonnet-4-5',
  max_tokens: 256,
  system: [{ type: 'text', text: 'You are an impartial evaluator.', cache_control: { type: 'ephemeral' } }],
  messages: [{ role: 'user', content: 'Judge this: "ok" — ünïcode too' }],
  tools: [{ name: 'submit_evaluation', description: 'Record it.', input_schema: { type: 'object', properties: { score: { type: 'number' } }, required: ['score'] } }],
  tool_choice: { type: 'tool', name: 'submit_evaluation' },
};

/** What a call came to: the answer, or the error's class, status, retry-after header and message. */
async function outcome(call: () => Promise<unknown>) {
  try {
    return { ok: await call() };
  } catch (err) {
    const e = err as InstanceType<typeof Anthropic.APIError>;
    return { error: e.constructor.name, status: e.status, retryAfter: e.headers?.get?.('retry-after') ?? null, message: e.message };
  }
}

describe('Messages API call without the SDK client, against the SDK client', () => {
  let fake: FakeAnthropic;
  let sdk: Anthropic;
  let direct: MessagesEndpoint;
  before(async () => {
    fake = await startFakeAnthropic();
    sdk = new Anthropic({ apiKey: KEY, baseURL: fake.url, maxRetries: 0, timeout: 5_000 });
    direct = new MessagesEndpoint({ apiKey: KEY, baseUrl: fake.url, timeoutMs: 5_000 });
  });
  after(() => fake.close());

  const both = async (answer: FakeAnswer, opts: { timeoutMs?: number; signal?: AbortSignal } = {}) => {
    fake.resetStats();
    fake.enqueue(answer);
    const viaSdk = await outcome(() => sdk.messages.create(params, { ...(opts.timeoutMs ? { timeout: opts.timeoutMs } : {}), ...(opts.signal ? { signal: opts.signal } : {}) }));
    fake.enqueue(answer);
    const viaDirect = await outcome(() => direct.create(params, opts));
    return { viaSdk, viaDirect, requests: [...fake.requests] };
  };

  test('the same request: body, key, API version, content type', async () => {
    const { viaSdk, viaDirect, requests } = await both(toolAnswer({ score: 0.5 }));
    assert.equal(requests.length, 2);
    const [a, b] = requests;
    assert.deepEqual(b!.body, a!.body, 'the same JSON body');
    assert.equal(JSON.stringify(b!.body), JSON.stringify(params), 'the parameters, serialised as given');
    for (const h of ['authorization', 'x-api-key', 'anthropic-version', 'content-type', 'accept', 'user-agent']) assert.equal(b!.headers[h], a!.headers[h], h);
    assert.equal(b!.headers.authorization, `Bearer ${KEY}`);
    const strip = (m: unknown) => JSON.parse(JSON.stringify(m, (k, v) => (k === 'id' || k === '_request_id' ? undefined : v)));
    assert.deepEqual(strip(viaDirect.ok), strip(viaSdk.ok));
    assert.equal((viaDirect.ok as Anthropic.Message).content[0]!.type, 'tool_use');
  });

  for (const [name, answer] of [
    ['a 429 with Retry-After', errorAnswer(429, { errorType: 'rate_limit_error', message: 'slow down', headers: { 'retry-after': '7' } })],
    ['a 401', errorAnswer(401, { errorType: 'authentication_error', message: 'invalid x-api-key' })],
    ['a 529 overloaded', errorAnswer(529, { errorType: 'overloaded_error', message: 'Overloaded' })],
    ['a 500 whose body is not JSON', { kind: 'raw', status: 500, body: '<html>bad gateway</html>', headers: { 'content-type': 'text/html' } }],
    ['a 200 whose body is not JSON (text/plain)', { kind: 'raw', status: 200, body: 'hello', headers: { 'content-type': 'text/plain' } }],
    ['a 200 that says JSON but is not', { kind: 'raw', status: 200, body: '{not json', headers: { 'content-type': 'application/json' } }],
    // The headers read one by one (BufferedAnswer.header): a media type with parameters, a +json type, an empty JSON answer.
    ['a 200 JSON answer with a charset', { kind: 'raw', status: 200, body: '{"type":"message","content":[]}', headers: { 'content-type': 'application/json; charset=utf-8' } }],
    ['a 200 answer of a +json type', { kind: 'raw', status: 200, body: '{"type":"message","content":[]}', headers: { 'content-type': 'application/vnd.fake+json' } }],
    ['a 200 JSON answer with no body (content-length 0)', { kind: 'raw', status: 200, body: '', headers: { 'content-type': 'application/json' } }],
    ['a dropped connection', { kind: 'drop' }],
  ] as Array<[string, FakeAnswer]>) {
    test(`the same outcome for ${name}`, async () => {
      const { viaSdk, viaDirect } = await both(answer);
      if ('error' in viaSdk) {
        assert.equal(viaDirect.error, viaSdk.error, JSON.stringify({ viaSdk, viaDirect }));
        assert.equal(viaDirect.status, viaSdk.status);
        assert.equal(viaDirect.retryAfter, viaSdk.retryAfter);
        if (viaSdk.status) assert.equal(viaDirect.message, viaSdk.message);
      } else assert.deepEqual(viaDirect, viaSdk);
    });
  }

  test('a timeout is an APIConnectionTimeoutError, a cancelled call an APIUserAbortError, as from the SDK', async () => {
    const timedOut = await both({ kind: 'hang' }, { timeoutMs: 150 });
    assert.equal(timedOut.viaSdk.error, 'APIConnectionTimeoutError');
    assert.equal(timedOut.viaDirect.error, 'APIConnectionTimeoutError');
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    fake.enqueue({ kind: 'hang' }, { kind: 'hang' });
    const viaSdk = await outcome(() => sdk.messages.create(params, { signal: controller.signal }));
    const viaDirect = await outcome(() => direct.create(params, { signal: controller.signal }));
    assert.equal(viaSdk.error, 'APIUserAbortError');
    assert.equal(viaDirect.error, 'APIUserAbortError');
  });
});
