// The request parts kept per evaluator version (issue 33): a body serialized with its kept parts is
// the bytes JSON.stringify gives for the whole, and a kept system prompt is the one buildSystemPrompt
// builds, rebuilt when the evaluator's prompt fields are not the ones it was built from.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bodyBytes, encodeBody, keepJson } from '../src/engine/providers/kept-json.ts';
import { buildPrompt, SCORE_TOOL } from '../src/engine/prompt.ts';
import { versionPrompt } from '../src/engine/system-prompts.ts';

test('a body with kept parts is exactly JSON.stringify of the whole, and a kept part is frozen', () => {
  const system = keepJson([{ type: 'text', text: 'Judge "this" — ünïcode\n<tag>', cache_control: { type: 'ephemeral' } }]);
  const tools = keepJson([{ name: SCORE_TOOL.name, description: SCORE_TOOL.description, input_schema: { ...SCORE_TOOL.input_schema } }]);
  const body = { model: 'claude-sonnet-4-5', system, messages: [{ role: 'user', content: 'a "b"' }], tools, max_tokens: 10, skipped: undefined, temperature: 0 };
  const utf8 = (value: unknown) => Buffer.from(JSON.stringify(value), 'utf8');
  assert.deepEqual(encodeBody(body), utf8(body));
  assert.deepEqual(encodeBody({}), utf8({}));
  assert.deepEqual(encodeBody({ only: undefined, n: null }), utf8({ only: undefined, n: null }));
  // A kept part first, last, or alone: the commas fall where JSON.stringify puts them.
  assert.deepEqual(encodeBody({ system, tools }), utf8({ system, tools }));
  assert.deepEqual(encodeBody({ skipped: undefined, tools, n: 1 }), utf8({ skipped: undefined, tools, n: 1 }));
  assert.ok(Object.isFrozen(system) && Object.isFrozen(system[0]) && Object.isFrozen(tools[0].input_schema));
  assert.throws(() => {
    (system[0] as { text: string }).text = 'changed';
  }, TypeError);
});

test('the system prompt kept per version is the one built, and is rebuilt when the prompt fields differ', () => {
  const evaluator = { name: 'Clarity', intent: 'Is it clear?', rubric: 'HIGH when clear.', demonstrations: [{ request: 'q', response: 'a', score: 0.9 }] };
  const input = { request: 'How?', response: 'Like this.' };
  const nonce = 'f00d'.repeat(6);
  const first = versionPrompt(evaluator, input, nonce);
  assert.deepEqual(first, buildPrompt(evaluator, input, nonce));
  assert.equal(versionPrompt({ ...evaluator, demonstrations: [{ ...evaluator.demonstrations[0] }] }, input, nonce).system, first.system);
  const withTurns = {
    response: 'Like this.',
    turns: [
      { role: 'user' as const, content: 'How?' },
      { role: 'assistant' as const, content: 'Like this.' },
    ],
  };
  assert.deepEqual(versionPrompt(evaluator, withTurns, nonce), buildPrompt(evaluator, withTurns, nonce));
  const edited = { ...evaluator, rubric: 'HIGH when very clear.' };
  assert.deepEqual(versionPrompt(edited, input, nonce), buildPrompt(edited, input, nonce));
  const otherExample = { ...evaluator, demonstrations: [{ request: 'q', response: 'a', score: 0.1 }] };
  assert.deepEqual(versionPrompt(otherExample, input, nonce), buildPrompt(otherExample, input, nonce));
});

test('bodies written into the shared slab keep their bytes while later ones are written, small or large', () => {
  const system = keepJson([{ type: 'text', text: `Judge ${'é✓😀'.repeat(300)}`, cache_control: { type: 'ephemeral' } }]);
  const bodies: Array<{ value: object; bytes: Buffer }> = [];
  // Enough bodies to fill several slabs, some too large for one (their own Buffer), with multi-byte text.
  for (let i = 0; i < 400; i++) {
    const value = { model: 'm', system, messages: [{ role: 'user', content: `${i} ${'ü'.repeat(i % 7 === 0 ? 40_000 : i)} 😀` }], n: i };
    bodies.push({ value, bytes: encodeBody(value) });
  }
  for (const { value, bytes } of bodies) assert.deepEqual(bytes, Buffer.from(JSON.stringify(value), 'utf8'));
  const texts = Array.from({ length: 300 }, (_, i) => `${'x'.repeat(i * 13)}☃${i}`);
  const encoded = texts.map((text) => bodyBytes(text));
  texts.forEach((text, i) => assert.deepEqual(encoded[i], Buffer.from(text, 'utf8')));
  assert.equal(bodyBytes('').length, 0);
});
