// The plain reading of a tool's input (src/schemas/plain-parse.ts) held to zod's parse of the same
// schema: whenever it answers, zod accepts with the same value (same fields, same order); whenever zod
// refuses, it does not answer (the caller then runs zod, which words the error).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { z } from 'zod';
import { plainParse } from '../src/schemas/plain-parse.ts';
import { toolInput } from '../src/tool.ts';
import { restOnlyOperations } from '../src/operations/index.ts';
import { allTools, tools } from '../tools/index.ts';

const trace = '0123456789abcdef0123456789abcdef';
const span = '0123456789abcdef';
const inputs: unknown[] = [
  undefined,
  null,
  'text',
  42,
  [],
  [{ response: 'r' }],
  {},
  { response: 'r' },
  { judge_id: 'jdg_1', response: 'r', request: 'q' },
  { evaluator_id: 'evl_1', project_id: 'prj_1', response: 'r' },
  { judge_id: 'jdg_1', judge_name: 'J', response: 'r', request: 'q', system_prompt: 's', expected_output: 'e', contexts: ['a', 'b'], tags: ['t'] },
  { response: 'r', user_id: 'u', session_id: 's', trace_id: trace, span_id: span, use_cache: true },
  { response: 'r', use_cache: false, tags: [] },
  // Refused by zod, each for one reason.
  { response: '' },
  { response: 1 },
  { response: null },
  { response: 'r', contex: ['c'] },
  { response: 'r', contexts: 'c' },
  { response: 'r', contexts: ['c', 2] },
  // biome-ignore lint/suspicious/noSparseArray: a hole is not a string
  { response: 'r', tags: ['a', , 'b'] },
  { response: 'r', tags: 'a' },
  { response: 'r', user_id: 'u'.repeat(201) },
  { response: 'r', user_id: 'u'.repeat(200) },
  { response: 'r', session_id: '' },
  { response: 'r', session_id: 's'.repeat(201) },
  { response: 'r', trace_id: trace.toUpperCase() },
  { response: 'r', trace_id: `${trace}0` },
  { response: 'r', span_id: 'xyz' },
  { response: 'r', use_cache: 'true' },
  JSON.parse('{"response":"r","__proto__":{"x":1}}'),
  // Present but undefined: zod keeps the key, as undefined.
  { response: 'r', request: undefined },
  // The fields read by their own schemas: turns and attachments.
  {
    turns: [
      { role: 'user', content: 'q' },
      { role: 'assistant', content: 'a', tool_calls: [{ name: 't', arguments: { x: 1 } }] },
    ],
  },
  { turns: [{ role: 'robot', content: 'q' }] },
  { turns: [{ role: 'user', content: 'q', extra: 1 }] },
  { response: 'r', attachments: ['fil_1'] },
  { response: 'r', attachments: Array.from({ length: 21 }, (_, i) => `fil_${i}`) },
  { response: 'r', attachments: [1] },
  // An inherited enumerable key counts as given, as it does for zod.
  Object.assign(Object.create({ inherited: 1 }), { response: 'r' }),
];

function agree(schema: z.ZodType, input: unknown) {
  const plain = plainParse(schema, input);
  const parsed = schema.safeParse(input);
  const shown = JSON.stringify(input, (_k, v) => (v === undefined ? '(undefined)' : v));
  if (plain === undefined) return parsed.success;
  assert.ok(parsed.success, `read plainly but refused by zod: ${shown}`);
  assert.deepStrictEqual(plain, parsed.data, shown);
  assert.deepStrictEqual(Object.keys(plain), Object.keys(parsed.data as object), `key order: ${shown}`);
  return true;
}

describe('plainParse', () => {
  test('answers what zod answers, and nothing that zod refuses, for every tool input', () => {
    for (const tool of allTools) for (const input of inputs) agree(tool.input, input);
  });

  test('answers what zod answers, and nothing that zod refuses, for every REST-only operation input', () => {
    const operations = Object.values(restOnlyOperations) as Array<{ input: z.ZodType }>;
    assert.ok(operations.length > 10);
    const more = [{ limit: 5 }, { limit: '5' }, { name: 'n', description: 'd' }, { search: 's', after: 'x' }, { judge_id: 'jdg_1', items: [{ response: 'r' }] }];
    for (const op of operations) for (const input of [...inputs, ...more]) agree(op.input, input);
  });

  test("reads a run's usual inputs without zod", () => {
    for (const input of [
      { judge_id: 'jdg_1', response: 'r', request: 'q' },
      { judge_id: 'jdg_1', response: 'r', contexts: ['c'], tags: ['t'], trace_id: trace, span_id: span },
    ]) {
      assert.ok(plainParse(tools.runJudge.input, input), JSON.stringify(input));
    }
    assert.ok(plainParse(tools.runEvaluator.input, { evaluator_id: 'evl_1', project_id: 'prj_1', response: 'r' }));
  });

  test('gives a fresh list, as zod does', () => {
    const contexts = ['a'];
    const read = plainParse(tools.runJudge.input, { response: 'r', contexts });
    assert.notEqual(read?.contexts, contexts);
  });

  test('no plain reading of a schema with a default, a required field, an object check a loose catchall', () => {
    assert.equal(plainParse(z.object({ a: z.string().default('x') }).strict(), {}), undefined);
    assert.equal(plainParse(z.object({ a: z.string() }).strict(), { a: 'x' }), undefined);
    assert.equal(
      plainParse(
        z.object({ a: z.string().optional() }).refine(() => false),
        { a: 'x' },
      ),
      undefined,
    );
    assert.equal(plainParse(z.looseObject({ a: z.string().optional() }), { a: 'x' }), undefined);
  });

  test("a field with a transform is read by its own schema, as zod's object reads it", () => {
    const schema = z.object({ a: z.string().trim().optional() }).strict();
    assert.deepStrictEqual(plainParse(schema, { a: ' x ' }), { a: 'x' });
    agree(schema, { a: ' x ' });
  });

  test('an object that drops unknown fields drops them here too', () => {
    const schema = z.object({ a: z.string().optional(), b: z.array(z.string()).optional() });
    for (const input of [{ a: 'x', c: 1 }, { b: ['y'], a: 'x' }, { a: 1 }]) agree(schema, input);
    assert.deepStrictEqual(plainParse(schema, { b: ['y'], a: 'x', c: 1 }), { a: 'x', b: ['y'] });
  });

  test('toolInput still refuses with zod wording and still applies the limits', () => {
    const config = { limits: { textChars: 5, contexts: 2, tags: 2, tagChars: 10, turns: 10, conversationChars: 100 } } as never;
    assert.throws(() => toolInput(tools.runJudge, { response: 'r', contex: ['c'] }, { config }), /did you mean contexts/);
    assert.throws(() => toolInput(tools.runJudge, { response: 'longer than five' }, { config }), /TRIBUNAL_MAX_TEXT/);
    assert.throws(() => toolInput(tools.runJudge, { response: 'r', contexts: ['a', 'b', 'c'] }, { config }), /TRIBUNAL_MAX_CONTEXTS/);
    assert.deepStrictEqual(toolInput(tools.runJudge, { judge_id: 'j', response: 'r' }, { config }), { judge_id: 'j', response: 'r' });
  });
});
