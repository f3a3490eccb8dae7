// Anthropic Message Batches (room h-cost, src/engine/providers/anthropic-batch.ts) through the real
// SDK against a fake of the batch endpoints on 127.0.0.1: the requests are the live scoring
// requests (forced tool, cached system prompt), a batch is in_progress then ended, results come as
// JSONL with partial errors, expiry and an answer without the tool, cache reads are recorded, cost
// is half the live price, and cancel ends a batch with its requests canceled.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { costUsd } from '../src/engine/providers/cost.ts';
import { newNonce } from '../src/conversation/fence.ts';
import { buildPrompt, SCORE_TOOL } from '../src/engine/prompt.ts';
import { AnthropicBatchClient, batchCostUsd, type BatchOutcome } from '../src/engine/providers/anthropic-batch.ts';
import type { StructuredCall } from '../src/engine/providers/model.ts';
import { DEFAULT_PRICES } from '../src/prices.ts';
import { startFakeAnthropicBatches, type FakeAnthropicBatches } from './helpers/fake-anthropic-batches.ts';

const MODEL = 'claude-sonnet-4-5';
let fake: FakeAnthropicBatches;
let client: AnthropicBatchClient;

const evaluator = {
  name: 'Helpfulness',
  intent: 'Does the answer help the user?',
  rubric: 'High (1): solves the problem. Low (0): does not.',
  demonstrations: Array.from({ length: 4 }, (_, i) => ({
    request: `Example question ${i} `.repeat(20),
    response: `Example answer ${i} `.repeat(60),
    score: i % 2,
    justification: `Because ${i}.`,
  })),
};
const nonce = newNonce();
const call = (i: number): StructuredCall => {
  const { system, prompt } = buildPrompt(evaluator, { request: `How do I reset my password? (${i})`, response: `Open settings, choose Security, then Reset (${i}).` }, nonce);
  return { model: MODEL, system, prompt, tool: SCORE_TOOL, maxTokens: 1024, cacheSystem: true };
};

before(async () => {
  fake = await startFakeAnthropicBatches();
  client = new AnthropicBatchClient({ apiKey: 'sk-ant-test-dummy', baseUrl: fake.url });
});
after(() => fake.close());

async function untilEnded(id: string) {
  const seen: string[] = [];
  for (let i = 0; i < 20; i++) {
    const b = await client.status(id);
    seen.push(b.status);
    if (b.status === 'ended') return { batch: b, seen };
  }
  throw new Error(`batch ${id} never ended: ${seen.join(', ')}`);
}

describe('Anthropic Message Batches', () => {
  it('submits the live requests, polls in_progress to ended, and reads every outcome with cache reads at half price', async (t) => {
    fake.respondWith((_req, i) =>
      i === 2
        ? { kind: 'errored', message: 'prompt too long' }
        : i === 4
          ? { kind: 'expired' }
          : i === 5
            ? { kind: 'no_tool' }
            : { kind: 'succeeded', input: { justification: `ok ${i}`, score: 0.5 }, output_tokens: 80 },
    );
    const requests = Array.from({ length: 8 }, (_, i) => ({ custom_id: `row-${i}`, call: call(i) }));
    const submitted = await client.submit(requests);
    assert.equal(submitted.status, 'in_progress');
    assert.equal(fake.batches.length, 1);
    // The request is the live one: forced tool, the system prompt marked for the cache.
    const sent = fake.batches[0].requests[0];
    assert.equal(sent.custom_id, 'row-0');
    assert.deepEqual(sent.params.tool_choice, { type: 'tool', name: SCORE_TOOL.name, disable_parallel_tool_use: true });
    assert.deepEqual(sent.params.system[0].cache_control, { type: 'ephemeral' });
    assert.equal(sent.params.messages[0].content, requests[0].call.prompt);

    const { batch, seen } = await untilEnded(submitted.id);
    assert.deepEqual(seen, ['in_progress', 'in_progress', 'ended']);
    assert.deepEqual(batch.counts, { processing: 0, succeeded: 6, errored: 1, canceled: 0, expired: 1 });

    const outcomes: BatchOutcome[] = [];
    for await (const o of client.results(submitted.id, SCORE_TOOL.name)) outcomes.push(o);
    assert.deepEqual(
      outcomes.map((o) => o.custom_id),
      requests.map((r) => r.custom_id),
    );
    assert.deepEqual(
      outcomes.map((o) => (o.ok ? 'ok' : o.kind)),
      ['ok', 'ok', 'errored', 'ok', 'expired', 'malformed', 'ok', 'ok'],
    );
    const ok = outcomes.filter((o): o is Extract<BatchOutcome, { ok: true }> => o.ok);
    assert.deepEqual(ok[0].answer.input, { justification: 'ok 0', score: 0.5 });
    // The first request wrote the static prefix to the cache; the later ones read it.
    assert.ok(ok[0].answer.usage.cache_write_tokens! > 0 && ok[0].answer.usage.cache_read_tokens === 0);
    for (const o of ok.slice(1)) assert.equal(o.answer.usage.cache_read_tokens, ok[0].answer.usage.cache_write_tokens);

    // Priced at half the live rate, cache reads at the cache-read rate.
    let billedBatch = 0;
    let liveNoCache = 0;
    let outBatch = 0;
    let outLive = 0;
    for (const o of ok) {
      const u = o.answer.usage;
      assert.equal(batchCostUsd(MODEL, u, DEFAULT_PRICES), Math.round(costUsd(MODEL, u, DEFAULT_PRICES)! * 0.5 * 1e9) / 1e9);
      billedBatch += batchCostUsd(MODEL, { ...u, output_tokens: 0 }, DEFAULT_PRICES)!;
      liveNoCache += costUsd(MODEL, { input_tokens: u.input_tokens, output_tokens: 0 }, DEFAULT_PRICES)!;
      outBatch += batchCostUsd(MODEL, { input_tokens: 0, output_tokens: u.output_tokens }, DEFAULT_PRICES)!;
      outLive += costUsd(MODEL, { input_tokens: 0, output_tokens: u.output_tokens }, DEFAULT_PRICES)!;
    }
    t.diagnostic(
      `billed input, provider batch + caching / live without caching: ${(billedBatch / liveNoCache).toFixed(3)}; output: ${(outBatch / outLive).toFixed(3)} (${ok.length} answers, recorded tokens)`,
    );
    assert.ok(billedBatch / liveNoCache < 0.5);
    assert.equal(Math.round((outBatch / outLive) * 1000) / 1000, 0.5);
  });

  it('cancel ends the batch with the requests not run canceled; refuses an empty batch', async () => {
    const submitted = await client.submit([0, 1, 2].map((i) => ({ custom_id: `c-${i}`, call: call(i) })));
    const cancelling = await client.cancel(submitted.id);
    assert.equal(cancelling.status, 'canceling');
    const { batch } = await untilEnded(submitted.id);
    assert.equal(batch.counts.canceled, 3);
    const outcomes: BatchOutcome[] = [];
    for await (const o of client.results(submitted.id, SCORE_TOOL.name)) outcomes.push(o);
    assert.deepEqual(
      outcomes.map((o) => (o.ok ? 'ok' : o.kind)),
      ['canceled', 'canceled', 'canceled'],
    );
    await assert.rejects(client.submit([]), /1 to 100,000/);
  });
});
