// The judge proxy's Responses API door (SPEC section 13) through the real `openai` SDK: JSON and
// streamed events passed on, the tribunal object (a last `tribunal` event when streamed), function
// calls judged as the assistant turn, the blocking guardrail as an incomplete response.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { toolAnswer } from './helpers/fake-anthropic.ts';
import { startProxyRig, type ProxyRig } from './helpers/proxy-rig.ts';

let rig: ProxyRig;
before(async () => {
  rig = await startProxyRig();
});
after(async () => {
  await rig.close();
});

describe('responses', () => {
  test('a response comes back as the upstream sent it, with the tribunal object', async () => {
    rig.fake.resetStats();
    rig.fake.enqueue(toolAnswer({ justification: 'Right.', score: 0.85 }));
    const response: any = await rig.client().responses.create({ model: 'app-model', instructions: 'Answer briefly.', input: 'What is the capital of France?' });
    assert.equal(response.output_text, 'Paris is the capital of France.');
    assert.equal(response.tribunal.score, 0.85);
    assert.equal(rig.upstream.requests.at(-1)!.path, '/v1/responses');
    assert.equal(rig.upstream.requests.at(-1)!.body.model, 'gpt-test');
    const log = (await rig.get(`/v1/execution-logs/${response.tribunal.execution_log_id}/`)).body;
    assert.equal(log.proxy.api, 'responses');
    assert.equal(log.system_prompt, 'Answer briefly.');
    assert.equal(log.turns[0].content, 'What is the capital of France?');
    assert.equal(log.proxy.input_tokens, 50);
  });

  test('streamed: the events pass on, the tribunal event comes last', async () => {
    const stream = await rig.client().responses.create({ model: 'app-model', input: [{ role: 'user', content: 'Capital of France?' }], stream: true });
    const events: any[] = [];
    for await (const e of stream) events.push(e);
    const text = events
      .filter((e) => e.type === 'response.output_text.delta')
      .map((e) => e.delta)
      .join('');
    assert.equal(text, 'Paris is the capital of France.');
    assert.ok(events.some((e) => e.type === 'response.completed'));
    const last = events.at(-1);
    assert.equal(last.type, 'tribunal');
    assert.equal(last.tribunal.evaluator_results.length, 1);
  });

  test('function calls are judged as the assistant turn', async () => {
    rig.upstream.reply = { content: '', tool_calls: [{ id: 'call_7', name: 'search', arguments: '{"q":"Paris"}' }] };
    try {
      const response: any = await rig.client().responses.create({ model: 'app-model', input: 'Find Paris.' });
      assert.equal(response.output[0].type, 'function_call');
      const log = (await rig.get(`/v1/execution-logs/${response.tribunal.execution_log_id}/`)).body;
      assert.deepEqual(log.turns.at(-1).tool_calls, [{ id: 'call_7', name: 'search', arguments: '{"q":"Paris"}' }]);
    } finally {
      rig.upstream.reply = { content: 'Paris is the capital of France.' };
    }
  });

  test('a blocking guardrail makes an incomplete response; streamed, the blocked text never arrives', async () => {
    const judge = await rig.newJudge({ guardrail: { threshold: 0.5, action: 'block', message: 'Blocked.' } });
    rig.fake.enqueue(toolAnswer({ justification: 'Bad.', score: 0.1 }));
    const response: any = await rig.client(judge.id).responses.create({ model: 'app-model', input: 'Capital?' });
    assert.equal(response.output_text, 'Blocked.');
    assert.equal(response.status, 'incomplete');
    assert.equal(response.incomplete_details.reason, 'content_filter');
    rig.fake.enqueue(toolAnswer({ justification: 'Bad.', score: 0.1 }));
    const stream = await rig.client(judge.id).responses.create({ model: 'app-model', input: 'Capital?', stream: true });
    const events: any[] = [];
    for await (const e of stream) events.push(e);
    const text = events
      .filter((e) => e.type === 'response.output_text.delta')
      .map((e) => e.delta)
      .join('');
    assert.equal(text, 'Blocked.');
    assert.equal(events.at(-1).tribunal.blocked, true);
  });
});
