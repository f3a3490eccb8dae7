// Provider batches and caching against live calls without caching (issue 32), from recorded tokens:
// N rows (default 1,000; the figure is 10,000) x 3 evaluators with 4 demonstrations each are
// scored through Anthropic Message Batches (the real SDK against test/helpers/fake-anthropic-batches.ts,
// which reports cache writes and reads as the API does). The same requests' tokens are then priced
// two ways with the price table (src/prices.ts): live without caching (every prompt token at the
// input rate) and as billed (batch rate, cache reads and writes at their rates). Goals: billed input
// <= 0.1x, billed output <= 0.5x.
//
//   node --import tsx bench/provider-batch.bench.ts [--rows N]
import { parseArgs } from 'node:util';
import { costUsd } from '../src/engine/providers/cost.ts';
import { versionNonce } from '../src/conversation/fence.ts';
import { buildPrompt, SCORE_TOOL } from '../src/engine/prompt.ts';
import { AnthropicBatchClient, batchCostUsd } from '../src/engine/providers/anthropic-batch.ts';
import { DEFAULT_PRICES } from '../src/prices.ts';
import { startFakeAnthropicBatches } from '../test/helpers/fake-anthropic-batches.ts';

const { values } = parseArgs({ options: { rows: { type: 'string', default: '1000' } } });
const ROWS = Number(values.rows);
const MODEL = 'claude-sonnet-4-5';
// Evaluators as authors write them: a rubric of a few bands and four scored examples of a support answer.
const evaluators = ['Helpfulness', 'Faithfulness', 'Tone'].map((name, e) => ({
  id: `evl_${e}`,
  name,
  intent: `Measures ${name.toLowerCase()} of a support answer.`,
  rubric: `High (1): the answer is fully ${name.toLowerCase()} for the user's question. Middling (0.5): partly. Low (0): not at all. Judge only what the answer says.`,
  demonstrations: Array.from({ length: 4 }, (_, i) => ({
    request: `Customer question ${i}: my order ${1000 + i} arrived damaged; the box was crushed and two items are broken. What can I do?`,
    response: `Support answer ${i}: I am sorry to hear that. ${'You can request a replacement or a refund from the Orders page within 30 days; attach a photo of the damage and we will ship the replacement at no cost. '.repeat(3)}`,
    score: i % 2 ? 1 : 0.5,
    justification: `Example ${i}: the answer ${i % 2 ? 'gives the exact steps and the deadline' : 'is polite but leaves out the deadline'}.`,
  })),
}));

const fake = await startFakeAnthropicBatches();
fake.pollsUntilEnded = 0;
fake.respondWith(() => ({ kind: 'succeeded', input: { justification: 'The answer names the steps and the deadline the customer needs.', score: 0.8 }, output_tokens: 90 }));
const client = new AnthropicBatchClient({ apiKey: 'sk-ant-bench-dummy', baseUrl: fake.url, timeoutMs: 600_000 });
let live = { input: 0, output: 0 };
let billed = { input: 0, output: 0 };
let answers = 0;
try {
  // One batch per evaluator (each well under the 100,000-request limit), submitted as a runner would.
  for (const ev of evaluators) {
    const nonce = versionNonce(null, ev.id, 1);
    const requests = Array.from({ length: ROWS }, (_, r) => {
      const { system, prompt } = buildPrompt(
        ev,
        { request: `How do I return item ${r}?`, response: `Open Orders, pick item ${r}, choose Return, print the label and drop the parcel at any post office within 30 days.` },
        nonce,
      );
      return { custom_id: `row-${r}`, call: { model: MODEL, system, prompt, tool: SCORE_TOOL, maxTokens: 1024, cacheSystem: true } };
    });
    const batch = await client.submit(requests);
    while ((await client.status(batch.id)).status !== 'ended');
    for await (const o of client.results(batch.id, SCORE_TOOL.name)) {
      if (!o.ok) throw new Error(`${o.custom_id}: ${o.message}`);
      const u = o.answer.usage;
      answers++;
      live.input += costUsd(MODEL, { input_tokens: u.input_tokens, output_tokens: 0 }, DEFAULT_PRICES)!;
      live.output += costUsd(MODEL, { input_tokens: 0, output_tokens: u.output_tokens }, DEFAULT_PRICES)!;
      billed.input += batchCostUsd(MODEL, { ...u, output_tokens: 0 }, DEFAULT_PRICES)!;
      billed.output += batchCostUsd(MODEL, { input_tokens: 0, output_tokens: u.output_tokens }, DEFAULT_PRICES)!;
    }
  }
} finally {
  await fake.close();
}
const ratio = (a: number, b: number) => (a / b).toFixed(3);
console.log(`${ROWS} rows x ${evaluators.length} evaluators (4 demonstrations each): ${answers} answers through Message Batches`);
console.log(`live without caching: input $${live.input.toFixed(4)}, output $${live.output.toFixed(4)}`);
console.log(`billed (batch + caching): input $${billed.input.toFixed(4)}, output $${billed.output.toFixed(4)}`);
console.log(`ratio input ${ratio(billed.input, live.input)} (goal <= 0.1), output ${ratio(billed.output, live.output)} (goal <= 0.5)`);
