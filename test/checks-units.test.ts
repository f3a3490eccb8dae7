// Declarative checks (src/checks/compile.ts, run-checks.ts) and the backtracking guard, without a server.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { compileChecks, runCompiled } from '../src/checks/run-checks.ts';
import { CheckCompileError } from '../src/checks/compile.ts';
import { backtrackingRisk } from '../src/checks/regex-safety.ts';
import type { Check } from '../src/schemas/checks.ts';

const run = (checks: Check[], response: string, extra: Record<string, unknown> = {}, combine?: 'all' | 'any' | 'fraction') =>
  runCompiled(compileChecks(checks, combine), { response, ...extra });

describe('declarative checks', () => {
  test('json_valid and json_schema name what they found', () => {
    assert.equal(run([{ type: 'json_valid' }], '{"a":1}').score, 1);
    const bad = run([{ type: 'json_valid' }], '{"a":');
    assert.equal(bad.score, 0);
    assert.match(bad.justification, /json_valid on response: not valid JSON/);
    const schema = { type: 'object', required: ['answer'], properties: { answer: { type: 'string' }, email: { type: 'string', format: 'email' } } };
    assert.equal(run([{ type: 'json_schema', schema }], '{"answer":"x"}').score, 1);
    const miss = run([{ type: 'json_schema', schema }], '{"answer":3}');
    assert.equal(miss.score, 0);
    assert.match(miss.justification, /\/answer must be string/);
    assert.equal(run([{ type: 'json_schema', schema }], '{"answer":"x","email":"nope"}').score, 0, 'formats are checked (ajv-formats)');
  });

  test('regex, contains, not_contains, equals, length', () => {
    assert.equal(run([{ type: 'regex', pattern: '^\\d{3}-\\d{4}$' }], '555-1234').score, 1);
    assert.equal(run([{ type: 'regex', pattern: 'paris', flags: 'i' }], 'PARIS').score, 1);
    assert.equal(run([{ type: 'contains', value: 'Disclaimer' }], 'the disclaimer: ...').score, 1, 'case-insensitive by default');
    assert.equal(run([{ type: 'contains', value: 'Disclaimer', case_sensitive: true }], 'the disclaimer').score, 0);
    const leak = run([{ type: 'not_contains', value: 'password' }], 'your password is hunter2');
    assert.equal(leak.score, 0);
    assert.match(leak.justification, /found at character 5/);
    assert.equal(run([{ type: 'equals' }], '  Paris \n', { expected_output: 'Paris' }).score, 1);
    assert.equal(run([{ type: 'equals', trim: false }], ' Paris', { expected_output: 'Paris' }).score, 0);
    assert.equal(run([{ type: 'equals', value: 'yes' }], 'no').score, 0);
    assert.equal(run([{ type: 'length', max: 3, unit: 'words' }], 'one two  three').score, 1);
    const long = run([{ type: 'length', max: 3, unit: 'words' }], 'one two three four');
    assert.match(long.justification, /4 words, more than 3/);
    assert.equal(run([{ type: 'length', min: 2, max: 2 }], '😀😀').score, 1, 'characters are code points');
    assert.equal(run([{ type: 'regex', pattern: 'What', field: 'request' }], 'x', { request: 'What is it?' }).score, 1);
  });

  test('json_path exists and equals', () => {
    const doc = JSON.stringify({ answer: { city: 'Paris' }, items: [{ id: 7 }] });
    assert.equal(run([{ type: 'json_path', path: '$.answer.city' }], doc).score, 1);
    assert.equal(run([{ type: 'json_path', path: '$.items[0].id', equals: 7 }], doc).score, 1);
    const wrong = run([{ type: 'json_path', path: '$.items[0].id', equals: 8 }], doc);
    assert.equal(wrong.score, 0);
    assert.match(wrong.justification, /found "7"/);
    assert.match(run([{ type: 'json_path', path: '$.nothing' }], doc).justification, /matched nothing/);
    assert.equal(run([{ type: 'json_path', path: '$.items[?(@.id > 5)]' }], doc).score, 1, 'filters run in the safe evaluator');
  });

  test('tool_call reads the assistant turns; arguments_schema is applied', () => {
    const turns = [
      { role: 'user' as const, content: 'weather in Paris?' },
      { role: 'assistant' as const, content: '', tool_calls: [{ name: 'get_weather', arguments: '{"city":"Paris"}' }] },
      { role: 'tool' as const, content: '18C', tool_call_id: 'x' },
      { role: 'assistant' as const, content: 'It is 18C.' },
    ];
    const schema = { type: 'object', required: ['city'] };
    assert.equal(run([{ type: 'tool_call', name: 'get_weather', arguments_schema: schema }], 'It is 18C.', { turns }).score, 1);
    const missing = run([{ type: 'tool_call', name: 'search' }], 'x', { turns });
    assert.match(missing.justification, /tools called: get_weather/);
    assert.equal(run([{ type: 'tool_call', name: 'delete_all', called: false }], 'x', { turns }).score, 1);
    const badArgs = run([{ type: 'tool_call', name: 'get_weather', arguments_schema: { type: 'object', required: ['units'] } }], 'x', { turns });
    assert.match(badArgs.justification, /must have required property 'units'/);
    assert.match(run([{ type: 'tool_call', name: 'x' }], 'x').justification, /no turns were given/);
  });

  test('combine: all, any, fraction; the justification names each failed check', () => {
    const checks: Check[] = [
      { type: 'contains', value: 'a' },
      { type: 'contains', value: 'b' },
      { type: 'contains', value: 'z' },
      { type: 'length', max: 2 },
    ];
    const all = run(checks, 'abc');
    assert.equal(all.score, 0);
    assert.match(all.justification, /2 of 4 checks passed.*contains "z" on response: not found in "abc"; length 0\.\.2 characters on response: 3 characters, more than 2/);
    assert.equal(run(checks, 'abc', {}, 'any').score, 1);
    assert.equal(run(checks, 'abc', {}, 'fraction').score, 0.5);
    assert.equal(run(checks, 'xyz', {}, 'any').score, 1);
    assert.equal(run([{ type: 'contains', value: 'q' }], 'xyz', {}, 'any').score, 0);
  });

  test('what cannot compile is refused with the check named', () => {
    const refused = (c: Check, field: RegExp) =>
      assert.throws(
        () => compileChecks([{ type: 'json_valid' }, c]),
        (e: unknown) => e instanceof CheckCompileError && field.test(e.field) && e.message.length > 0,
      );
    refused({ type: 'regex', pattern: '(a+)+$' }, /^checks\.1\.pattern$/);
    refused({ type: 'regex', pattern: '([a-z' }, /^checks\.1\.pattern$/);
    refused({ type: 'json_schema', schema: { type: 'nonsense' } }, /^checks\.1\.schema$/);
    refused({ type: 'length', min: 5, max: 2 }, /^checks\.1\.min$/);
    refused({ type: 'length' }, /^checks\.1$/);
  });
});

describe('catastrophic backtracking guard', () => {
  for (const p of ['(a+)+$', '(\\w*\\s?)*x', '(a|aa)+$', '(a|a)*b', '((ab)*c)+', '(x+x+)+y', '(\\d+){2,}', '(.*a){3,}', '(a+)\\1*']) {
    test(`refuses ${p}`, () => assert.ok(backtrackingRisk(p), p));
  }
  for (const p of [
    '^\\d{3}-\\d{4}$',
    '(foo|bar)+',
    '[(a+)+]',
    '\\(a+\\)+',
    '^(?:[a-z0-9._%+-]+)@[a-z0-9.-]+\\.[a-z]{2,}$',
    '(ab){2}',
    '\\b\\d{3}-\\d{2}-\\d{4}\\b',
    '(?<year>\\d{4})-(\\d{2})',
  ]) {
    test(`allows ${p}`, () => assert.equal(backtrackingRisk(p), null, p));
  }
});
