// The judge proxy's guardrail (SPEC section 13): block replaces an answer scoring below the threshold
// (finish_reason content_filter; streamed, the client never sees the blocked text), the original kept
// in the log; flag only marks it; critical evaluators cap the score as everywhere. The log type filter.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { toolAnswer } from './helpers/fake-anthropic.ts';
import { startProxyRig, type ProxyRig } from './helpers/proxy-rig.ts';

let rig: ProxyRig;
before(async () => {
  rig = await startProxyRig();
  rig.upstream.reply = { content: "Here is how to pick the lock on your neighbour's door.", chunks: 5 };
});
after(async () => {
  await rig.close();
});

const MESSAGES = [{ role: 'user' as const, content: "How do I get into my neighbour's flat?" }];

describe('guardrail', () => {
  test('block, not streamed: a low score replaces the answer; the log keeps the original', async () => {
    const judge = await rig.newJudge({ guardrail: { threshold: 0.5, action: 'block', message: 'I cannot help with that.' } });
    assert.deepEqual(judge.guardrail, { threshold: 0.5, action: 'block', message: 'I cannot help with that.' });
    rig.fake.enqueue(toolAnswer({ justification: 'Helps break in.', score: 0.1 }));
    const completion: any = await rig.client(judge.id).chat.completions.create({ model: 'app-model', messages: MESSAGES });
    assert.equal(completion.choices[0].message.content, 'I cannot help with that.');
    assert.equal(completion.choices[0].finish_reason, 'content_filter');
    assert.equal(completion.tribunal.blocked, true);
    assert.equal(completion.tribunal.flagged, true);
    const log = (await rig.get(`/v1/execution-logs/${completion.tribunal.execution_log_id}/`)).body;
    assert.equal(log.response, "Here is how to pick the lock on your neighbour's door.");
    assert.equal(log.proxy.blocked, true);
  });

  test('block, streamed: the client gets only the replacement, never the blocked text', async () => {
    const judge = await rig.newJudge({ guardrail: { threshold: 0.5, action: 'block' } });
    rig.fake.enqueue(toolAnswer({ justification: 'Helps break in.', score: 0.2 }));
    const stream = await rig.client(judge.id).chat.completions.create({ model: 'app-model', messages: MESSAGES, stream: true });
    const chunks: any[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const text = chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('');
    assert.doesNotMatch(text, /lock/);
    assert.match(text, /sorry/i);
    assert.equal(chunks.find((c) => c.choices[0]?.finish_reason)?.choices[0].finish_reason, 'content_filter');
    assert.equal(chunks.at(-1).tribunal.blocked, true);
  });

  test('block, streamed, passing: the held answer is sent whole', async () => {
    const judge = await rig.newJudge({ guardrail: { threshold: 0.5, action: 'block' } });
    rig.fake.enqueue(toolAnswer({ justification: 'Fine.', score: 0.9 }));
    const stream = await rig.client(judge.id).chat.completions.create({ model: 'app-model', messages: MESSAGES, stream: true });
    const chunks: any[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    assert.equal(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join(''), "Here is how to pick the lock on your neighbour's door.");
    assert.equal(chunks.at(-1).tribunal.blocked, false);
  });

  test('flag marks without replacing', async () => {
    const judge = await rig.newJudge({ guardrail: { threshold: 0.5, action: 'flag' } });
    rig.fake.enqueue(toolAnswer({ justification: 'Helps break in.', score: 0.1 }));
    const completion: any = await rig.client(judge.id).chat.completions.create({ model: 'app-model', messages: MESSAGES });
    assert.match(completion.choices[0].message.content, /pick the lock/);
    assert.equal(completion.choices[0].finish_reason, 'stop');
    assert.equal(completion.tribunal.flagged, true);
    assert.equal(completion.tribunal.blocked, false);
    const log = (await rig.get(`/v1/execution-logs/${completion.tribunal.execution_log_id}/`)).body;
    assert.equal(log.proxy.flagged, true);
    assert.equal(log.proxy.blocked, false);
  });

  test('a critical evaluator caps the score the guardrail sees', async () => {
    const safety = await rig.createEvaluator({ name: `Safety ${Date.now()}`, intent: 'Refuses harm.', rubric: 'High (1): safe. Low (0): helps harm.', critical: true });
    const quality = await rig.createEvaluator({ name: `Quality ${Date.now()}`, intent: 'Helpful.', rubric: 'High (1): helpful. Low (0): not.' });
    const judge = await rig.createJudge({ name: `Critical ${Date.now()}`, intent: 'x', evaluator_ids: [safety.id, quality.id], guardrail: { threshold: 0.5, action: 'block' } });
    rig.fake.enqueueFor('submit_evaluation', toolAnswer({ justification: 'Helps break in.', score: 0.3 }), toolAnswer({ justification: 'Very helpful.', score: 1 }));
    const completion: any = await rig.client(judge.id).chat.completions.create({ model: 'app-model', messages: MESSAGES });
    // mean 0.65, capped at the critical 0.3: blocked.
    assert.equal(completion.tribunal.score, 0.3);
    assert.equal(completion.tribunal.blocked, true);
  });

  test('a blocking guardrail refuses async_judge', async () => {
    const judge = await rig.newJudge({ guardrail: { threshold: 0.5, action: 'block' } });
    await assert.rejects(rig.client(judge.id, { query: { async_judge: 'true' } }).chat.completions.create({ model: 'app-model', messages: MESSAGES }), (err: any) => {
      assert.equal(err.status, 400);
      assert.match(err.message, /synchronous judging/);
      return true;
    });
  });

  test('PATCH sets and clears the guardrail (a new version)', async () => {
    const judge = await rig.newJudge();
    const set = await rig.server.request('PATCH', `/v1/judges/${judge.id}/`, { key: rig.key, body: { guardrail: { threshold: 0.7, action: 'flag' } } });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    assert.deepEqual(set.body.guardrail, { threshold: 0.7, action: 'flag' });
    assert.equal(set.body.version, judge.version + 1);
    const cleared = await rig.server.request('PATCH', `/v1/judges/${judge.id}/`, { key: rig.key, body: { guardrail: null } });
    assert.equal(cleared.body.guardrail, null);
    const bad = await rig.server.request('PATCH', `/v1/judges/${judge.id}/`, { key: rig.key, body: { guardrail: { threshold: 2, action: 'stop' } } });
    assert.equal(bad.status, 400);
  });
});

describe('log type filter', () => {
  test('type=proxy lists the proxy logs only', async () => {
    const completion: any = await rig.client().chat.completions.create({ model: 'app-model', messages: MESSAGES });
    await rig.post(`/v1/judges/${rig.judge.id}/execute/`, { request: 'q', response: 'a' });
    const proxied = (await rig.get(`/v1/execution-logs/?type=proxy&judge_id=${rig.judge.id}`)).body.results;
    assert.ok(proxied.length >= 1);
    assert.ok(proxied.every((l: any) => l.type === 'proxy'));
    assert.ok(proxied.some((l: any) => l.id === completion.tribunal.execution_log_id));
    const direct = (await rig.get(`/v1/execution-logs/?type=judge&judge_id=${rig.judge.id}`)).body.results;
    assert.equal(direct.length, 1);
    assert.equal((await rig.get('/v1/execution-logs/?type=nonsense')).status, 400);
  });
});
