// The judge proxy's Chat Completions door (SPEC section 13) through the real `openai` SDK: the
// upstream's answer passed on (JSON and streamed, tool calls), judged as a conversation, the
// `tribunal` object, logs of type proxy with the upstream's tokens and cost apart. Both stores.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { png } from './helpers/attachments.ts';
import { toolAnswer } from './helpers/fake-anthropic.ts';
import { startProxyRig, UPSTREAM_KEY, waitForLog, type ProxyRig } from './helpers/proxy-rig.ts';

let rig: ProxyRig;
before(async () => {
  rig = await startProxyRig();
});
after(async () => {
  await rig.close();
});

const MESSAGES = [
  { role: 'system' as const, content: 'You answer geography questions.' },
  { role: 'user' as const, content: 'What is the capital of France?' },
];

describe('chat completions, not streamed', () => {
  test('the upstream answer comes back as it was, with the tribunal object; the upstream got the registered key and model', async () => {
    rig.upstream.requests.length = 0;
    rig.fake.resetStats();
    rig.fake.enqueue(toolAnswer({ justification: 'Correct capital.', score: 0.9 }));
    const completion: any = await rig.client().chat.completions.create({ model: 'app-model', messages: MESSAGES });
    assert.equal(completion.choices[0].message.content, 'Paris is the capital of France.');
    assert.equal(completion.choices[0].finish_reason, 'stop');
    assert.equal(completion.model, 'gpt-test');
    assert.equal(completion.usage.prompt_tokens, 50);
    assert.equal(completion.tribunal.score, 0.9);
    assert.equal(completion.tribunal.evaluator_results.length, 1);
    assert.equal(completion.tribunal.evaluator_results[0].justification, 'Correct capital.');
    const sent = rig.upstream.requests[0];
    assert.equal(sent.headers.authorization, `Bearer ${UPSTREAM_KEY}`);
    assert.equal(sent.body.model, 'gpt-test');
    assert.deepEqual(sent.body.messages, MESSAGES);
    // The judge saw the conversation: the user's question as a turn, the answer as the judged turn, the system prompt.
    const prompt: string = rig.fake.requests[0].body.messages[0].content;
    assert.match(prompt, /What is the capital of France\?/);
    assert.match(prompt, /role="assistant">\nParis is the capital of France\./);
    assert.match(JSON.stringify(rig.fake.requests[0].body), /You answer geography questions\./);

    const log = (await rig.get(`/v1/execution-logs/${completion.tribunal.execution_log_id}/`)).body;
    assert.equal(log.type, 'proxy');
    assert.equal(log.judge_id, rig.judge.id);
    assert.equal(log.response, 'Paris is the capital of France.');
    assert.equal(log.system_prompt, 'You answer geography questions.');
    assert.equal(log.proxy.model, 'app-model');
    assert.equal(log.proxy.upstream_model, 'gpt-test');
    assert.equal(log.proxy.input_tokens, 50);
    assert.equal(log.proxy.output_tokens, 20);
    // $1/$2 per million tokens: 50 in, 20 out.
    assert.equal(log.proxy.cost_usd, 0.00009);
    assert.equal(log.proxy.outcome, 'answered');
    assert.equal(log.proxy.streamed, false);
    // The judging's own tokens are the evaluator results', not the upstream's.
    assert.notEqual(log.evaluator_results[0].input_tokens, 50);
  });

  test('tool calls pass through and are judged as the assistant turn', async () => {
    rig.upstream.reply = { content: '', tool_calls: [{ id: 'call_9', name: 'get_weather', arguments: '{"city":"Paris"}' }] };
    rig.fake.resetStats();
    try {
      const completion: any = await rig.client().chat.completions.create({
        model: 'app-model',
        messages: [{ role: 'user', content: 'Weather in Paris?' }],
        tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
      });
      assert.deepEqual(completion.choices[0].message.tool_calls, [{ id: 'call_9', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }]);
      assert.equal(completion.choices[0].finish_reason, 'tool_calls');
      assert.equal(typeof completion.tribunal.score, 'number');
      const log = (await rig.get(`/v1/execution-logs/${completion.tribunal.execution_log_id}/`)).body;
      assert.deepEqual(log.turns.at(-1).tool_calls, [{ id: 'call_9', name: 'get_weather', arguments: '{"city":"Paris"}' }]);
      assert.match(rig.fake.requests[0].body.messages[0].content, /get_weather/);
    } finally {
      rig.upstream.reply = { content: 'Paris is the capital of France.' };
    }
  });

  test('the judge-less path takes X-Judge-Id (or ?judge_id=)', async () => {
    const client = new OpenAI({ apiKey: rig.key, baseURL: `${rig.server.url}/v1/judges/openai`, maxRetries: 0, defaultHeaders: { 'X-Judge-Id': rig.judge.id } });
    const byHeader: any = await client.chat.completions.create({ model: 'app-model', messages: MESSAGES });
    assert.equal(byHeader.choices[0].message.content, 'Paris is the capital of France.');
    const log = (await rig.get(`/v1/execution-logs/${byHeader.tribunal.execution_log_id}/`)).body;
    assert.equal(log.judge_id, rig.judge.id);
    const res = await fetch(`${rig.server.url}/v1/judges/openai/chat/completions?judge_id=${rig.judge.id}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${rig.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'app-model', messages: MESSAGES }),
    });
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as any).tribunal.evaluator_results.length, 1);
  });
});

describe('chat completions, streamed', () => {
  test('chunks arrive as the upstream sends them; the tribunal object is the last chunk before [DONE]', async () => {
    rig.upstream.reply = { content: 'Paris is the capital of France.', chunks: 6, chunkDelayMs: 40 };
    try {
      const before = rig.upstream.replyStats.chunksWritten;
      const stream = await rig.client().chat.completions.create({ model: 'app-model', messages: MESSAGES, stream: true });
      let text = '';
      let writtenAtFirstText: number | null = null;
      const chunks: any[] = [];
      for await (const chunk of stream) {
        chunks.push(chunk);
        const delta = chunk.choices[0]?.delta?.content;
        if (delta && writtenAtFirstText === null) writtenAtFirstText = rig.upstream.replyStats.chunksWritten - before;
        if (delta) text += delta;
      }
      assert.equal(text, 'Paris is the capital of France.');
      // The first words reached the client while the upstream was still writing (passed on, not buffered).
      assert.ok(writtenAtFirstText !== null && writtenAtFirstText < 8, `first text after ${writtenAtFirstText} upstream chunks`);
      const last = chunks.at(-1);
      assert.deepEqual(last.choices, []);
      assert.equal(typeof last.tribunal.execution_log_id, 'string');
      assert.equal(last.tribunal.evaluator_results.length, 1);
      // The client did not ask for usage: the usage chunk the proxy asked for is not passed on.
      assert.ok(chunks.every((c) => !c.usage));
      assert.equal(chunks.filter((c) => c.choices[0]?.finish_reason === 'stop').length, 1);
      const log = (await rig.get(`/v1/execution-logs/${last.tribunal.execution_log_id}/`)).body;
      assert.equal(log.proxy.streamed, true);
      assert.equal(log.proxy.output_tokens, 20);
      assert.equal(log.response, 'Paris is the capital of France.');
    } finally {
      rig.upstream.reply = { content: 'Paris is the capital of France.' };
    }
  });

  test('streamed tool calls are passed on and put together for judging; usage asked for is passed on', async () => {
    rig.upstream.reply = { content: '', tool_calls: [{ id: 'call_1', name: 'lookup', arguments: '{"q":"capital of France"}' }] };
    try {
      const stream = await rig.client().chat.completions.create({ model: 'app-model', messages: MESSAGES, stream: true, stream_options: { include_usage: true } });
      const chunks: any[] = [];
      for await (const chunk of stream) chunks.push(chunk);
      const args = chunks
        .flatMap((c) => c.choices[0]?.delta?.tool_calls ?? [])
        .map((t: any) => t.function?.arguments ?? '')
        .join('');
      assert.equal(args, '{"q":"capital of France"}');
      assert.equal(chunks.filter((c) => c.usage).length, 1);
      const log = (await rig.get(`/v1/execution-logs/${chunks.at(-1).tribunal.execution_log_id}/`)).body;
      assert.deepEqual(log.turns.at(-1).tool_calls, [{ id: 'call_1', name: 'lookup', arguments: '{"q":"capital of France"}' }]);
    } finally {
      rig.upstream.reply = { content: 'Paris is the capital of France.' };
    }
  });
});

describe('async_judge', () => {
  test('answers at once with the log id; the run is logged afterwards', async () => {
    rig.fake.setLatency(150);
    try {
      const completion: any = await rig.client(rig.judge.id, { query: { async_judge: 'true' } }).chat.completions.create({ model: 'app-model', messages: MESSAGES });
      assert.equal(completion.choices[0].message.content, 'Paris is the capital of France.');
      assert.equal(completion.tribunal.pending, true);
      assert.equal(completion.tribunal.score, null);
      const log = await waitForLog(rig, completion.tribunal.execution_log_id);
      assert.equal(log.type, 'proxy');
      assert.equal(log.proxy.async_judge, true);
      assert.equal(log.evaluator_results.length, 1);
    } finally {
      rig.fake.setLatency(0);
    }
  });

  test('streamed: the tribunal chunk carries the log id', async () => {
    const stream = await rig.client(rig.judge.id, { query: { async_judge: 'true' } }).chat.completions.create({ model: 'app-model', messages: MESSAGES, stream: true });
    const chunks: any[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const tribunal = chunks.at(-1).tribunal;
    assert.equal(tribunal.pending, true);
    const log = await waitForLog(rig, tribunal.execution_log_id);
    assert.equal(log.proxy.streamed, true);
  });
});

describe('images in the exchange (issue 30 item 4)', () => {
  test('an inline image reaches the upstream unchanged and the judge model as its own image block; a remote URL is only named', async () => {
    rig.upstream.requests.length = 0;
    rig.fake.resetStats();
    rig.fake.enqueue(toolAnswer({ justification: 'Describes the chart.', score: 0.8 }));
    const dataUrl = `data:image/png;base64,${png(9).toString('base64')}`;
    const messages: any = [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What does this chart show?' },
          { type: 'image_url', image_url: { url: dataUrl } },
          { type: 'image_url', image_url: { url: 'http://169.254.169.254/latest/meta-data.png' } },
        ],
      },
    ];
    const completion: any = await rig.client().chat.completions.create({ model: 'app-model', messages });
    assert.equal(completion.tribunal.score, 0.8);
    assert.deepEqual(rig.upstream.requests[0].body.messages, messages, 'the upstream gets the parts as sent');
    const content = rig.fake.requests[0].body.messages.find((m: any) => m.role === 'user').content;
    assert.deepEqual(content[0], { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png(9).toString('base64') } });
    assert.equal(content.filter((c: any) => c.type === 'image').length, 1, 'the remote URL is not fetched');
    assert.match(content.at(-1).text, /\[image_url\]/);
  });
});

describe('tribunal judges proxy-url', () => {
  test('prints the proxy base URL a real OpenAI client works with, and the snippets', async () => {
    const { runCli } = await import('./helpers/cli.ts');
    const out = await runCli(['judges', 'proxy-url', rig.judge.name, '--model', 'app-model', '--json'], { env: { TRIBUNAL_URL: rig.server.url, TRIBUNAL_API_KEY: rig.key } });
    assert.equal(out.code, 0, out.stderr);
    const printed = JSON.parse(out.stdout);
    assert.equal(printed.base_url, `${rig.server.url}/v1/judges/${rig.judge.id}/openai`);
    assert.match(printed.snippets.vercel_ai, /createOpenAICompatible/);
    const completion: any = await new OpenAI({ apiKey: rig.key, baseURL: printed.base_url, maxRetries: 0 }).chat.completions.create({ model: 'app-model', messages: MESSAGES });
    assert.equal(completion.tribunal.evaluator_results.length, 1);
  });
});
