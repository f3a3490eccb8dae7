// A batch row's view of the judge model (ResilientJudgeModel.forBatch, batch/work.ts liveRetarget):
// its calls wait in the limiter's batch queue behind interactive calls, pass the run's gate once
// they have a slot, and give the slot back when the gate refuses; liveRetarget swaps each target's
// model once per chunk and hands every row the same copy.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { liveRetarget } from '../src/batch/work.ts';
import { Limiter } from '../src/engine/providers/limiter.ts';
import type { JudgeModel, StructuredAnswer, StructuredCall } from '../src/engine/providers/model.ts';
import { ModelCallError } from '../src/engine/providers/model-errors.ts';
import { ResilientJudgeModel } from '../src/engine/providers/resilient-model.ts';

const request = (prompt: string): StructuredCall => ({ model: 'm', system: 's', prompt, tool: { name: 't', description: 'd', input_schema: {} }, maxTokens: 10 });

/** An inner model that records the prompts it was called with and answers when `open` is called. */
function recordingModel() {
  const called: string[] = [];
  const waiting: Array<() => void> = [];
  const inner: JudgeModel = {
    configured: true,
    call: async (r) => {
      called.push(r.prompt);
      await new Promise<void>((resolve) => waiting.push(resolve));
      return { input: {}, model: 'm', usage: { input_tokens: 1, output_tokens: 1 } } satisfies StructuredAnswer;
    },
  };
  return { inner, called, open: () => waiting.shift()?.() };
}

const policy = { retries: 0, timeoutMs: 5_000, backoffMs: 1, backoffMaxMs: 1 };
const tick = () => new Promise((r) => setImmediate(r));

test("a batch view's call waits behind an interactive call queued after it", async () => {
  const { inner, called, open } = recordingModel();
  const model = new ResilientJudgeModel(inner, { limiter: new Limiter(1), policy });
  const batch = model.forBatch(async () => {});
  const first = model.call(request('first'));
  await tick();
  const queuedBatch = batch.call(request('batch'));
  const queuedInteractive = model.call(request('interactive'));
  await tick();
  assert.equal(model.limiter.queuedBatch, 1);
  open();
  await first;
  await tick();
  assert.deepEqual(called, ['first', 'interactive']);
  open();
  await queuedInteractive;
  await tick();
  open();
  await queuedBatch;
  assert.deepEqual(called, ['first', 'interactive', 'batch']);
});

test('a gate that refuses, at once or through its promise: the call does not start, fails as aborted, and gives its slot back', async () => {
  const refuse = () => {
    throw new Error('The batch run was cancelled before this judge-model call started.');
  };
  for (const gate of [refuse, async () => refuse()]) {
    const { inner, called } = recordingModel();
    const model = new ResilientJudgeModel(inner, { limiter: new Limiter(1), policy });
    const batch = model.forBatch(gate);
    await assert.rejects(batch.call(request('refused')), (err: unknown) => err instanceof ModelCallError && err.kind === 'aborted' && /cancelled/.test(err.message));
    assert.deepEqual(called, []);
    assert.equal(model.limiter.inFlight, 0);
  }
});

test('liveRetarget swaps a resilient model for its batch view once, and keeps any other model', async () => {
  const { inner, open } = recordingModel();
  const model = new ResilientJudgeModel(inner, { limiter: new Limiter(1), policy });
  let gated = 0;
  const retarget = liveRetarget(() => void gated++);
  const target = { model, modelName: 'm', prices: {} };
  const a = retarget(target);
  assert.notEqual(a.model, model);
  assert.equal(retarget(target), a, 'the same copy for every row of the chunk');
  assert.equal(retarget({ ...target }).model, a.model, 'one view per model');
  const other = { model: inner, modelName: 'm', prices: {} };
  assert.equal(retarget(other), other);
  const call = a.model.call(request('row'));
  await tick();
  assert.equal(gated, 1);
  assert.equal(model.limiter.inFlight, 1);
  open();
  await call;
  assert.equal(model.limiter.inFlight, 0);
});
