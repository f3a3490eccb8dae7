// The judge proxy with a client no one here wrote besides the openai SDK: the Vercel AI SDK (`ai`
// 6 with @ai-sdk/openai-compatible) pointed at the proxy, generating and streaming text, and a tool
// call, against the fake upstream. The tribunal object reaches the raw response body.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, jsonSchema, streamText, tool } from 'ai';
import { startProxyRig, type ProxyRig } from './helpers/proxy-rig.ts';

let rig: ProxyRig;
before(async () => {
  rig = await startProxyRig();
});
after(async () => {
  await rig.close();
});

const provider = () => createOpenAICompatible({ name: 'tribunal', baseURL: `${rig.server.url}/v1/judges/${rig.judge.id}/openai`, apiKey: rig.key });

describe('Vercel AI SDK through the proxy', () => {
  test('generateText gets the upstream text; the tribunal object is in the response body; the exchange is logged', async () => {
    const result = await generateText({ model: provider()('app-model'), prompt: 'What is the capital of France?', maxRetries: 0 });
    assert.equal(result.text, 'Paris is the capital of France.');
    const body = result.response.body as any;
    assert.equal(typeof body.tribunal.execution_log_id, 'string');
    const log = (await rig.get(`/v1/execution-logs/${body.tribunal.execution_log_id}/`)).body;
    assert.equal(log.type, 'proxy');
    assert.equal(log.turns[0].content, 'What is the capital of France?');
  });

  test('streamText streams the text as the upstream sends it', async () => {
    rig.upstream.reply = { content: 'Paris is the capital of France.', chunks: 5, chunkDelayMs: 10 };
    try {
      const result = streamText({ model: provider()('app-model'), prompt: 'Capital of France?', maxRetries: 0 });
      const parts: string[] = [];
      for await (const part of result.textStream) parts.push(part);
      assert.ok(parts.length > 1, `text came in ${parts.length} part(s)`);
      assert.equal(parts.join(''), 'Paris is the capital of France.');
      assert.equal(await result.finishReason, 'stop');
    } finally {
      rig.upstream.reply = { content: 'Paris is the capital of France.' };
    }
  });

  test('a tool call arrives as the SDK expects it', async () => {
    rig.upstream.reply = { content: '', tool_calls: [{ id: 'call_3', name: 'weather', arguments: '{"city":"Paris"}' }] };
    try {
      const result = await generateText({
        model: provider()('app-model'),
        prompt: 'Weather in Paris?',
        maxRetries: 0,
        tools: {
          weather: tool({
            description: 'weather of a city',
            inputSchema: jsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }),
          }),
        },
      });
      assert.deepEqual(
        result.toolCalls.map((c) => [c.toolName, c.input]),
        [['weather', { city: 'Paris' }]],
      );
    } finally {
      rig.upstream.reply = { content: 'Paris is the capital of France.' };
    }
  });

  test('a proxy error reaches the SDK as an API error with the status', async () => {
    await assert.rejects(generateText({ model: provider()('not-registered'), prompt: 'x', maxRetries: 0 }), (err: any) => {
      assert.equal(err.statusCode, 404);
      assert.match(err.message, /not registered/);
      return true;
    });
  });
});
