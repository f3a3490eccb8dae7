// Every request under the judge proxy's prefixes answers in OpenAI's error shape (issue 27 item 4),
// including those no proxy route takes: an empty judge id, a judge id that is not valid
// percent-encoding, a sub-path the proxy does not serve, a wrong method. REST paths beside them
// (GET /v1/judges/{id}/, /v1/judges/{id}/refine/) keep their problem+json answers.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { startProxyRig, type ProxyRig } from './helpers/proxy-rig.ts';

let rig: ProxyRig;
before(async () => {
  rig = await startProxyRig();
});
after(async () => {
  await rig.close();
});

const CHAT = JSON.stringify({ model: 'app-model', messages: [{ role: 'user', content: 'What is the capital of France?' }] });

async function send(method: string, path: string, body: string | undefined = method === 'GET' || method === 'HEAD' ? undefined : CHAT) {
  const res = await fetch(rig.server.url + path, { method, headers: { authorization: `Bearer ${rig.key}`, 'content-type': 'application/json' }, body });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text };
}

/** Asserts OpenAI's error shape ({error: {message, type, param, code}}) with this status and type; answers the error. */
async function openAIError(method: string, path: string, status: number, type: string, code: string): Promise<any> {
  const before = rig.upstream.requests.length;
  const res = await send(method, path);
  assert.equal(res.status, status, `${method} ${path}: ${res.text}`);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  const { error } = JSON.parse(res.text);
  assert.equal(typeof error.message, 'string');
  assert.ok(error.message.length > 20, error.message);
  assert.equal(error.type, type);
  assert.equal(error.code, code);
  assert.ok('param' in error);
  assert.equal(rig.upstream.requests.length, before, 'the upstream is never called');
  return error;
}

describe('paths the proxy does not serve', () => {
  test('an OpenAI client listing models through the proxy gets a NotFoundError', async () => {
    await assert.rejects(rig.client().models.list(), (err: any) => {
      assert.ok(err instanceof OpenAI.NotFoundError, String(err));
      assert.equal((err as any).error.type, 'not_found_error');
      assert.match(err.message, /no path GET \/v1\/judges\/.+\/openai\/models/);
      return true;
    });
  });

  test('unknown sub-paths under each base are 404s naming what is served', async () => {
    const id = rig.judge.id;
    for (const path of [
      `/v1/judges/${id}/openai/embeddings`,
      `/v1/judges/${id}/openai`,
      `/v1/judges/${id}/openai/chat/completions/extra`,
      '/v1/judges/openai/embeddings',
      '/v1/judges/openai/chat',
      `/v1/judges/${id}/refine/openai/responses`,
      `/v1/judges/${id}/refine/openai/`,
      `/v1/Judges/${id}/OpenAI/models`,
    ]) {
      const error = await openAIError('POST', path, 404, 'not_found_error', 'not_found');
      assert.match(error.message, /POST \{base\}\/chat\/completions/);
    }
  });
});

describe('a path that names no judge', () => {
  test('an empty judge id is a BadRequestError on each base', async () => {
    const client = new OpenAI({ apiKey: rig.key, baseURL: `${rig.server.url}/v1/judges//openai`, maxRetries: 0 });
    await assert.rejects(client.chat.completions.create({ model: 'app-model', messages: [{ role: 'user', content: 'Hi' }] }), (err: any) => {
      assert.ok(err instanceof OpenAI.BadRequestError, String(err));
      assert.equal((err as any).error.param, 'judge_id');
      assert.match(err.message, /names no judge/);
      return true;
    });
    await openAIError('POST', '/v1/judges//openai/responses', 400, 'invalid_request_error', 'validation_error');
    await openAIError('POST', '/v1/judges//refine/openai/chat/completions', 400, 'invalid_request_error', 'validation_error');
  });

  test('a judge id that is not valid percent-encoding is a 400 on each route', async () => {
    for (const path of ['/v1/judges/%ZZ/openai/chat/completions', '/v1/judges/%E0%A4%A/openai/responses', '/v1/judges/%FF/refine/openai/chat/completions']) {
      const error = await openAIError('POST', path, 400, 'invalid_request_error', 'validation_error');
      assert.match(error.message, /percent-encoding/);
    }
  });
});

describe('a wrong method', () => {
  test('GET, PUT, DELETE and HEAD on a proxy route are 405 with Allow: POST', async () => {
    const id = rig.judge.id;
    for (const [method, path] of [
      ['GET', `/v1/judges/${id}/openai/chat/completions`],
      ['PUT', '/v1/judges/openai/chat/completions'],
      ['DELETE', `/v1/judges/${id}/openai/responses`],
      ['PATCH', `/v1/judges/${id}/refine/openai/chat/completions`],
    ] as const) {
      const res = await send(method, path);
      assert.equal(res.headers.get('allow'), 'POST', `${method} ${path}`);
      const error = await openAIError(method, path, 405, 'invalid_request_error', 'method_not_allowed');
      assert.match(error.message, new RegExp(`^${method} is not allowed`));
    }
    const head = await send('HEAD', `/v1/judges/${id}/openai/chat/completions`);
    assert.equal(head.status, 405);
    assert.equal(head.headers.get('allow'), 'POST');
  });

  test('a GET through the OpenAI SDK is an APIError with status 405', async () => {
    await assert.rejects(rig.client().get('/chat/completions'), (err: any) => {
      assert.ok(err instanceof OpenAI.APIError, String(err));
      assert.equal(err.status, 405);
      assert.equal(err.error.type, 'invalid_request_error');
      return true;
    });
  });
});

describe('REST beside the proxy', () => {
  test('REST judge paths keep their answers and problem+json', async () => {
    const id = rig.judge.id;
    assert.equal((await rig.get(`/v1/judges/${id}/`)).status, 200);
    for (const [method, path, status] of [
      ['GET', '/v1/judges/openai/', 404],
      ['GET', `/v1/judges/${id}/refine/`, 404],
      ['GET', `/v1/judges/${id}/openaix/chat/completions`, 404],
    ] as const) {
      const res = await send(method, path);
      assert.equal(res.status, status, `${method} ${path}: ${res.text}`);
      assert.match(res.headers.get('content-type') ?? '', /^application\/problem\+json/, `${method} ${path}`);
    }
  });
});
