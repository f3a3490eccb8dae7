// h-proxy: the judge's side of a proxied call (src/proxy/judge-check.ts). Its evaluators are loaded
// once per call (for the before-upstream check and for judging alike), after the upstream call has
// left once the judge version has passed the check, and a change to an evaluator since is still
// caught: that call answers with tribunal.error, the next is refused before any upstream call.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { startProxyRig, waitForLog, type ProxyRig } from './helpers/proxy-rig.ts';

let rig: ProxyRig;
before(async () => {
  rig = await startProxyRig();
});
after(async () => {
  await rig.close();
});

const MESSAGES = [{ role: 'user' as const, content: 'What is the capital of France?' }];

/** Counts the store's evaluator reads while `run` runs. */
async function evaluatorReads(run: () => Promise<unknown>): Promise<number> {
  const store = rig.server.store;
  const getEvaluator = store.getEvaluator;
  let reads = 0;
  store.getEvaluator = (id: string) => {
    reads++;
    return getEvaluator.call(store, id);
  };
  try {
    await run();
  } finally {
    store.getEvaluator = getEvaluator;
  }
  return reads;
}

describe('the judge check of the proxy', () => {
  test('a proxied call with sync judging reads its judge’s evaluators once, the first call of a judge version included', async () => {
    const judge = await rig.newJudge();
    for (const round of ['first', 'second']) {
      const reads = await evaluatorReads(() => rig.client(judge.id).chat.completions.create({ model: 'app-model', messages: MESSAGES }));
      assert.equal(reads, 1, `${round} call: one read of the judge's one evaluator`);
    }
  });

  test('async judging: the evaluators are read once, and the answer carries the log judged with them', async () => {
    const judge = await rig.newJudge();
    await rig.client(judge.id).chat.completions.create({ model: 'app-model', messages: MESSAGES });
    let id = '';
    const reads = await evaluatorReads(async () => {
      const answer: any = await rig.client(judge.id, { query: { async_judge: 'true' } }).chat.completions.create({ model: 'app-model', messages: MESSAGES });
      id = answer.tribunal.execution_log_id;
      const logged = await waitForLog(rig, id);
      assert.equal(logged.evaluator_results.length, 1);
      assert.equal(typeof logged.score, 'number');
    });
    assert.equal(reads, 1);
  });

  test('an evaluator edited to need contexts after its judge passed: one answer with tribunal.error, then refused before the upstream', async () => {
    const judge = await rig.newJudge();
    const ok: any = await rig.client(judge.id).chat.completions.create({ model: 'app-model', messages: MESSAGES });
    assert.equal(ok.tribunal.error, undefined);
    const evaluatorId = judge.evaluators?.[0]?.id ?? judge.evaluator_ids?.[0];
    assert.ok(evaluatorId, 'the judge names its evaluator');
    const edit = await rig.server.request('PATCH', `/v1/evaluators/${evaluatorId}/`, { key: rig.key, body: { requires_contexts: true } });
    assert.equal(edit.status, 200, JSON.stringify(edit.body));

    const upstreamBefore = rig.upstream.requests.length;
    const caught: any = await rig.client(judge.id).chat.completions.create({ model: 'app-model', messages: MESSAGES });
    assert.equal(caught.choices[0].message.content, 'Paris is the capital of France.', 'the application keeps its answer');
    assert.match(caught.tribunal.error, /needs `contexts`/);
    assert.equal(rig.upstream.requests.length, upstreamBefore + 1);
    const logged = await waitForLog(rig, caught.tribunal.execution_log_id);
    assert.equal(logged.type, 'proxy');
    assert.match(logged.proxy.error, /needs `contexts`/);

    await assert.rejects(rig.client(judge.id).chat.completions.create({ model: 'app-model', messages: MESSAGES }), (err: any) => {
      assert.ok(err instanceof OpenAI.BadRequestError, String(err));
      assert.match(err.message, /needs `contexts`/);
      return true;
    });
    assert.equal(rig.upstream.requests.length, upstreamBefore + 1, 'refused before any upstream call');
  });

  test('a judge that never passed is checked before the upstream, every time', async () => {
    const judge = await rig.newJudge({}, { requires_contexts: true });
    const upstreamBefore = rig.upstream.requests.length;
    for (let i = 0; i < 2; i++) {
      await assert.rejects(rig.client(judge.id).chat.completions.create({ model: 'app-model', messages: MESSAGES }), OpenAI.BadRequestError);
    }
    assert.equal(rig.upstream.requests.length, upstreamBefore);
  });
});
