// Errors on the judge proxy speak OpenAI's protocol ({error: {message, type, code}}, the right
// status), so the `openai` SDK raises its usual exceptions: bad key, unknown judge or model, a judge
// needing contexts, upstream 4xx/5xx passed on, upstream unreachable, oversized bodies, rate limits.
// A judging failure never loses the answer; a client that leaves mid-stream cancels the upstream
// call and the log still records it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { serverError } from './helpers/fake-anthropic.ts';
import { startProxyRig, waitForLog, type ProxyRig } from './helpers/proxy-rig.ts';
import { until } from './helpers/wait.ts';

let rig: ProxyRig;
before(async () => {
  rig = await startProxyRig({ TRIBUNAL_MAX_BODY: '20000' });
});
after(async () => {
  await rig.close();
});

const MESSAGES = [{ role: 'user' as const, content: 'What is the capital of France?' }];

async function rejects(p: Promise<unknown>, cls: new (...a: any[]) => any, status: number, pattern: RegExp): Promise<any> {
  let caught: any;
  await assert.rejects(p, (err: any) => {
    caught = err;
    assert.ok(err instanceof cls, `expected ${cls.name}, got ${err?.constructor?.name}: ${err?.message}`);
    assert.equal(err.status, status);
    assert.match(err.message, pattern);
    return true;
  });
  return caught;
}

describe('refusals before the upstream is called', () => {
  test('a bad key is an AuthenticationError', async () => {
    const err = await rejects(
      rig.client(rig.judge.id, { apiKey: 'tribunal-not-a-key' }).chat.completions.create({ model: 'app-model', messages: MESSAGES }),
      OpenAI.AuthenticationError,
      401,
      /./,
    );
    assert.equal(err.error.type, 'authentication_error');
  });

  test('an unknown judge is a NotFoundError', async () => {
    await rejects(rig.client('jdg_00000000000000000000000000').chat.completions.create({ model: 'app-model', messages: MESSAGES }), OpenAI.NotFoundError, 404, /judge/i);
  });

  test('a model that is not registered is a NotFoundError naming how to register it', async () => {
    const before = rig.upstream.requests.length;
    await rejects(rig.client().chat.completions.create({ model: 'gpt-4o', messages: MESSAGES }), OpenAI.NotFoundError, 404, /not registered.*POST \/v1\/models\//);
    assert.equal(rig.upstream.requests.length, before);
  });

  test('a judge needing contexts is a BadRequestError before any upstream call', async () => {
    const judge = await rig.newJudge({}, { requires_contexts: true });
    const before = rig.upstream.requests.length;
    await rejects(rig.client(judge.id).chat.completions.create({ model: 'app-model', messages: MESSAGES }), OpenAI.BadRequestError, 400, /needs `contexts`/);
    assert.equal(rig.upstream.requests.length, before);
  });

  test("an oversized body is a 413 in OpenAI's shape", async () => {
    const err = await rejects(
      rig.client().chat.completions.create({ model: 'app-model', messages: [{ role: 'user', content: 'x'.repeat(30_000) }] }),
      OpenAI.APIError,
      413,
      /over the limit/,
    );
    assert.equal(err.error.type, 'invalid_request_error');
  });

  test("a body that is not JSON is a 400 in OpenAI's shape, read directly or through body-parser alike", async () => {
    // application/json is read directly (http/plain-json.ts); any other type goes through body-parser.
    for (const type of ['application/json', 'text/plain']) {
      const res = await fetch(`${rig.server.url}/v1/judges/${rig.judge.id}/openai/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${rig.key}`, 'content-type': type },
        body: '{"model": "app-model", "messages": [',
      });
      const body = (await res.json()) as any;
      assert.equal(res.status, 400, type);
      assert.equal(body.error.type, 'invalid_request_error', type);
      assert.match(body.error.message, /could not be read as JSON/, type);
    }
  });

  test('a JSON body is proxied whatever its content type says', async () => {
    for (const type of ['application/json', 'application/json; charset=utf-8', 'text/plain']) {
      const res = await fetch(`${rig.server.url}/v1/judges/${rig.judge.id}/openai/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${rig.key}`, 'content-type': type },
        body: JSON.stringify({ model: 'app-model', messages: MESSAGES }),
      });
      const body = (await res.json()) as any;
      assert.equal(res.status, 200, `${type}: ${JSON.stringify(body)}`);
      assert.equal(body.object, 'chat.completion', type);
      assert.match(body.tribunal.execution_log_id, /^log_/, type);
    }
  });

  test('missing messages is a BadRequestError', async () => {
    await rejects(rig.client().chat.completions.create({ model: 'app-model' } as any), OpenAI.BadRequestError, 400, /messages/);
  });
});

describe('the upstream fails', () => {
  test('an upstream 429 is passed on faithfully (RateLimitError, Retry-After) and logged', async () => {
    rig.upstream.enqueue({ status: 429, message: 'Rate limit reached for gpt-test', headers: { 'retry-after': '7' } });
    const err = await rejects(rig.client().chat.completions.create({ model: 'app-model', messages: MESSAGES }), OpenAI.RateLimitError, 429, /Rate limit reached for gpt-test/);
    assert.equal(err.headers.get('retry-after'), '7');
    // The failed exchange is logged after the error is answered (the client is not kept waiting for it).
    const log = await until(
      'the failed exchange to be logged',
      async () => (await rig.get(`/v1/execution-logs/?type=proxy&judge_id=${rig.judge.id}`)).body.results.find((l: any) => l.proxy.outcome === 'upstream_error'),
      10_000,
    );
    assert.equal(log.proxy.status, 429);
    assert.deepEqual(log.evaluator_results, []);
  });

  test("an upstream 500 is an InternalServerError with the upstream's message", async () => {
    rig.upstream.enqueue({ status: 500, message: 'upstream exploded' });
    await rejects(rig.client().chat.completions.create({ model: 'app-model', messages: MESSAGES }), OpenAI.InternalServerError, 500, /upstream exploded/);
  });

  test('an unreachable upstream is a 502 naming the model', async () => {
    const model = await rig.post('/v1/models/', { name: 'gone-model', provider: 'openai', base_url: 'http://127.0.0.1:9/v1', model: 'gpt-gone' });
    assert.equal(model.status, 201);
    await rejects(rig.client().chat.completions.create({ model: 'gone-model', messages: MESSAGES }), OpenAI.APIError, 502, /gone-model could not be reached/);
  });
});

describe('judging fails, the answer does not', () => {
  test('sync judging that fails returns the answer with tribunal.error', async () => {
    rig.fake.enqueue(serverError(500), serverError(500), serverError(500), serverError(500), serverError(500), serverError(500));
    const completion: any = await rig.client().chat.completions.create({ model: 'app-model', messages: MESSAGES });
    assert.equal(completion.choices[0].message.content, 'Paris is the capital of France.');
    assert.match(completion.tribunal.error, /judge model failed/);
    assert.equal(completion.tribunal.score, null);
    const log = (await rig.get(`/v1/execution-logs/${completion.tribunal.execution_log_id}/`)).body;
    assert.equal(log.type, 'proxy');
    assert.equal(log.response, 'Paris is the capital of France.');
  });
});

describe('the client leaves mid-stream', () => {
  test('the upstream call is cancelled and the log records what arrived', async () => {
    rig.upstream.reply = { content: 'one two three four five six seven eight nine ten', chunks: 10, chunkDelayMs: 60 };
    try {
      const abortedBefore = rig.upstream.replyStats.aborted;
      const controller = new AbortController();
      const stream = await rig.client().chat.completions.create({ model: 'app-model', messages: MESSAGES, stream: true }, { signal: controller.signal });
      let seen = 0;
      // The SDK ends the iteration (or throws an abort error) once the signal fires.
      try {
        for await (const chunk of stream) {
          if (chunk.choices[0]?.delta?.content && ++seen === 2) controller.abort();
        }
      } catch (err) {
        assert.match(String((err as Error).name), /Abort/);
      }
      assert.equal(seen, 2);
      for (let i = 0; i < 100 && rig.upstream.replyStats.aborted === abortedBefore; i++) await new Promise((r) => setTimeout(r, 20));
      assert.equal(rig.upstream.replyStats.aborted, abortedBefore + 1, 'the upstream stream was cancelled');
      let log: any;
      for (let i = 0; i < 100 && !log; i++) {
        const logs = (await rig.get(`/v1/execution-logs/?type=proxy&judge_id=${rig.judge.id}`)).body.results;
        log = logs.find((l: any) => l.proxy.outcome === 'client_disconnected');
        if (!log) await new Promise((r) => setTimeout(r, 20));
      }
      assert.ok(log, 'a log records the disconnect');
      assert.ok(log.response.startsWith('one'), log.response);
      assert.ok(log.response.length < 'one two three four five six seven eight nine ten'.length);
      assert.ok(await waitForLog(rig, log.id));
    } finally {
      rig.upstream.reply = { content: 'Paris is the capital of France.' };
    }
  });
});

describe('rate limit', () => {
  test('a key over its budget gets a RateLimitError with Retry-After, on the same budget as REST', async () => {
    const small = await startProxyRig({ TRIBUNAL_RATE_LIMIT: '12' });
    try {
      let err: any = null;
      for (let i = 0; i < 20 && !err; i++) {
        try {
          await small.client().chat.completions.create({ model: 'app-model', messages: MESSAGES });
        } catch (e) {
          err = e;
        }
      }
      assert.ok(err instanceof OpenAI.RateLimitError, String(err));
      assert.equal((err as any).error.type, 'rate_limit_error');
      assert.ok(Number(err.headers.get('retry-after')) >= 1);
      assert.equal((await small.get('/v1/judges/')).status, 429);
    } finally {
      await small.close();
    }
  });
});
