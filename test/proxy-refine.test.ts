// Refine (SPEC section 13): POST /v1/judges/{id}/refine/ (JSON and SSE) and the refining proxy
// /refine/openai/chat/completions through the `openai` SDK. The judge model and the rewriting model
// are the fake Anthropic server; scores and rewrites are scripted per tool.
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

const score = (s: number, why = `scored ${s}`) => toolAnswer({ justification: why, score: s });
const rewrite = (text: string) => toolAnswer({ improved_response: text });

describe('POST /v1/judges/{id}/refine/', () => {
  test('rewrites with the justifications as feedback until the threshold; the best version wins', async () => {
    rig.fake.resetStats();
    rig.fake.enqueueFor('submit_evaluation', score(0.4, 'Does not name the river.'), score(0.9));
    rig.fake.enqueueFor('submit_rewrite', rewrite('Paris, on the Seine, is the capital of France.'));
    const res = await rig.post(`/v1/judges/${rig.judge.id}/refine/`, { request: 'What is the capital of France?', response: 'Paris.' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.improved_response, 'Paris, on the Seine, is the capital of France.');
    assert.equal(res.body.original_response, 'Paris.');
    assert.equal(res.body.original_score, 0.4);
    assert.equal(res.body.score, 0.9);
    assert.equal(res.body.stopped, 'threshold');
    assert.deepEqual(
      res.body.iterations.map((i: any) => i.score),
      [0.4, 0.9],
    );
    assert.equal(res.body.original_evaluator_results[0].justification, 'Does not name the river.');
    const rewriteCall = rig.fake.requests.find((r) => r.toolName === 'submit_rewrite');
    assert.ok(rewriteCall);
    assert.match(rewriteCall.prompt, /Does not name the river\./);
    assert.match(rewriteCall.prompt, /Paris\./);
    const log = (await rig.get(`/v1/execution-logs/${res.body.execution_log_id}/`)).body;
    assert.equal(log.response, 'Paris, on the Seine, is the capital of France.');
  });

  test('a degenerate rewrite is never judged and never wins; patience ends the loop', async () => {
    rig.fake.enqueueFor('submit_evaluation', score(0.3));
    rig.fake.enqueueFor('submit_rewrite', rewrite('...'));
    const res = await rig.post(`/v1/judges/${rig.judge.id}/refine/`, { request: 'q?', response: 'A weak answer.', patience: 1 });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.improved_response, 'A weak answer.');
    assert.equal(res.body.stopped, 'patience');
    assert.equal(res.body.iterations[1].execution_log_id, null);
    assert.ok(res.body.iterations[1].rejected);
  });

  test('no improvement of min_improvement for `patience` rewrites stops; max_iterations bounds', async () => {
    rig.fake.enqueueFor('submit_evaluation', score(0.3), score(0.32), score(0.5), score(0.52));
    rig.fake.enqueueFor('submit_rewrite', rewrite('Version one.'), rewrite('Version two.'), rewrite('Version three.'));
    const res = await rig.post(`/v1/judges/${rig.judge.id}/refine/`, { request: 'q?', response: 'Original.', patience: 2, max_iterations: 3 });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(
      res.body.iterations.map((i: any) => i.score),
      [0.3, 0.32, 0.5, 0.52],
    );
    assert.equal(res.body.stopped, 'max_iterations');
    assert.equal(res.body.improved_response, 'Version three.');
  });

  test('stream: true answers an SSE event per iteration, then the result', async () => {
    rig.fake.enqueueFor('submit_evaluation', score(0.2), score(0.85));
    rig.fake.enqueueFor('submit_rewrite', rewrite('A better answer.'));
    const res = await fetch(`${rig.server.url}/v1/judges/${rig.judge.id}/refine/`, {
      method: 'POST',
      headers: { authorization: `Api-Key ${rig.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ request: 'q?', response: 'A bad answer.', stream: true }),
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /text\/event-stream/);
    const events = (await res.text())
      .trim()
      .split('\n\n')
      .map((e) => ({ name: /^event: (\w+)/.exec(e)?.[1], data: JSON.parse(e.split('\ndata: ')[1]!) }));
    assert.deepEqual(
      events.map((e) => e.name),
      ['iteration', 'iteration', 'result'],
    );
    assert.equal(events[1].data.response, 'A better answer.');
    assert.equal(events[2].data.improved_response, 'A better answer.');
  });

  test('bad settings are a 400 problem', async () => {
    const res = await rig.post(`/v1/judges/${rig.judge.id}/refine/`, { response: 'x', threshold: 3 });
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'validation_error');
  });
});

describe('the refining proxy', () => {
  test('/refine/openai/chat/completions answers with the refined content and the iterations', async () => {
    rig.fake.enqueueFor('submit_evaluation', score(0.5, 'Too short.'), score(0.95));
    rig.fake.enqueueFor('submit_rewrite', rewrite('Paris is the capital of France, and its largest city.'));
    const client = rig.client(`${rig.judge.id}/refine`);
    const completion: any = await client.chat.completions.create({ model: 'app-model', messages: [{ role: 'user', content: 'Capital of France?' }] });
    assert.equal(completion.choices[0].message.content, 'Paris is the capital of France, and its largest city.');
    assert.equal(completion.tribunal.score, 0.95);
    assert.equal(completion.tribunal.refine.original_response, 'Paris is the capital of France.');
    assert.equal(completion.tribunal.refine.iterations.length, 2);
    const log = (await rig.get(`/v1/execution-logs/${completion.tribunal.execution_log_id}/`)).body;
    assert.equal(log.type, 'proxy');
  });

  test('streamed, the refined answer arrives as chunks with the tribunal chunk last', async () => {
    rig.fake.enqueueFor('submit_evaluation', score(0.9));
    const stream = await rig
      .client(`${rig.judge.id}/refine`)
      .chat.completions.create({ model: 'app-model', messages: [{ role: 'user', content: 'Capital of France?' }], stream: true });
    const chunks: any[] = [];
    for await (const c of stream) chunks.push(c);
    assert.equal(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join(''), 'Paris is the capital of France.');
    assert.equal(chunks.at(-1).tribunal.refine.stopped, 'threshold');
  });
});
