// The OpenAI Batch API (room h-cost, src/engine/providers/openai-batch.ts) through the real openai SDK
// against a fake of files + batches on 127.0.0.1: the JSONL input holds the live forced-function
// requests, a batch goes in_progress then completed, answers come from the output file and failures
// from the error file, requests left unrun when it expires are named, cached prompt tokens are
// recorded, and cancel ends it with every request canceled.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newNonce } from '../src/conversation/fence.ts';
import { buildPrompt, SCORE_TOOL } from '../src/engine/prompt.ts';
import type { BatchOutcome } from '../src/engine/providers/anthropic-batch.ts';
import { OpenAIBatchClient } from '../src/engine/providers/openai-batch.ts';
import type { StructuredCall } from '../src/engine/providers/model.ts';
import { startFakeOpenAIBatches, type FakeOpenAIBatches } from './helpers/fake-openai-batches.ts';

let fake: FakeOpenAIBatches;
let client: OpenAIBatchClient;
const nonce = newNonce();
const evaluator = { name: 'Clarity', intent: 'Is it clear?', rubric: 'High (1): clear. Low (0): muddled. '.repeat(40), demonstrations: [] };
const call = (i: number): StructuredCall => ({ model: 'gpt-test', ...buildPrompt(evaluator, { request: `q${i}`, response: `a${i}` }, nonce), tool: SCORE_TOOL, maxTokens: 512 });

before(async () => {
  fake = await startFakeOpenAIBatches();
  client = new OpenAIBatchClient({ apiKey: 'sk-test-dummy', baseUrl: fake.url });
});
after(() => fake.close());

async function untilEnded(id: string) {
  const seen: string[] = [];
  for (let i = 0; i < 20; i++) {
    const b = await client.status(id);
    seen.push(b.provider_status);
    if (b.status === 'ended') return { batch: b, seen };
  }
  throw new Error(`batch ${id} never ended: ${seen.join(', ')}`);
}
const collect = async (id: string, ids: string[]) => {
  const out: BatchOutcome[] = [];
  for await (const o of client.results(id, ids, SCORE_TOOL.name)) out.push(o);
  return out.sort((a, b) => a.custom_id.localeCompare(b.custom_id));
};

describe('OpenAI Batch API', () => {
  it('uploads the live requests as JSONL, polls to completed, reads answers and errors', async () => {
    fake.respondWith((_l, i) =>
      i === 1
        ? { kind: 'error', status: 400, message: 'context too long' }
        : i === 3
          ? { kind: 'no_tool' }
          : { kind: 'ok', args: { justification: `ok ${i}`, score: 0.25 * (i % 4) } },
    );
    const ids = ['r0', 'r1', 'r2', 'r3', 'r4'];
    const submitted = await client.submit(ids.map((custom_id, i) => ({ custom_id, call: call(i) })));
    assert.equal(submitted.status, 'in_progress');
    const input = [...fake.files.values()][0]
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.equal(input.length, 5);
    assert.deepEqual(input[0].body.tool_choice, { type: 'function', function: { name: SCORE_TOOL.name } });
    assert.equal(input[0].url, '/v1/chat/completions');
    const { batch, seen } = await untilEnded(submitted.id);
    assert.deepEqual(seen, ['in_progress', 'in_progress', 'completed']);
    assert.equal(batch.counts.succeeded, 4);
    assert.equal(batch.counts.errored, 1);
    const outcomes = await collect(submitted.id, ids);
    assert.deepEqual(
      outcomes.map((o) => (o.ok ? 'ok' : o.kind)),
      ['ok', 'errored', 'ok', 'malformed', 'ok'],
    );
    const first = outcomes[0] as Extract<BatchOutcome, { ok: true }>;
    assert.deepEqual(first.answer.input, { justification: 'ok 0', score: 0 });
    // The repeated system prompt is read from the prefix cache after the first request.
    const later = outcomes[2] as Extract<BatchOutcome, { ok: true }>;
    assert.ok(later.answer.usage.cache_read_tokens! > 0 && first.answer.usage.cache_read_tokens === 0);
    assert.match((outcomes[1] as { message: string }).message, /context too long/);
  });

  it('names requests left unrun by an expired batch, and cancel cancels every request', async () => {
    fake.respondWith((_l, i) => (i === 0 ? { kind: 'ok', args: { justification: 'ok', score: 1 } } : { kind: 'not_run' }));
    const expired = await client.submit([0, 1].map((i) => ({ custom_id: `e${i}`, call: call(i) })));
    assert.equal((await untilEnded(expired.id)).batch.provider_status, 'expired');
    assert.deepEqual(
      (await collect(expired.id, ['e0', 'e1'])).map((o) => (o.ok ? 'ok' : o.kind)),
      ['ok', 'expired'],
    );

    const cancelled = await client.submit([0, 1, 2].map((i) => ({ custom_id: `c${i}`, call: call(i) })));
    assert.equal((await client.cancel(cancelled.id)).status, 'canceling');
    assert.equal((await untilEnded(cancelled.id)).batch.provider_status, 'cancelled');
    assert.deepEqual(
      (await collect(cancelled.id, ['c0', 'c1', 'c2'])).map((o) => (o.ok ? 'ok' : o.kind)),
      ['canceled', 'canceled', 'canceled'],
    );
  });
});
