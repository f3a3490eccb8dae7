// enforceLimits (src/limits.ts) walks a run's input on every call with one path that grows and
// shrinks as it goes: an error must still name the exact field, however deep, after any number of
// siblings were walked before it, and the caller's path must be left as it was given.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { enforceLimits } from '../src/limits.ts';
import { TribunalError } from '../src/errors.ts';

const limits = { textChars: 10, contexts: 3, tags: 2, tagChars: 5 };

/** The field and the message the refusal names, or null when the input passes. */
function refusal(value: unknown, path?: string[]): { field: string | undefined; detail: string } | null {
  try {
    enforceLimits(value, limits as never, path);
    return null;
  } catch (err) {
    assert.ok(err instanceof TribunalError && err.status === 400);
    return { field: err.errors?.[0]?.field, detail: err.message };
  }
}

test('a refusal names the exact field, after siblings, arrays and nested objects were walked', () => {
  const long = 'x'.repeat(11);
  const ok = { request: 'short', contexts: ['a', 'b'], tags: ['t1'], turns: [{ role: 'user', content: 'hi' }] };
  assert.equal(refusal(ok), null);
  assert.deepEqual(refusal({ ...ok, response: long }), { field: 'response', detail: 'response is 11 characters; the limit is 10 (TRIBUNAL_MAX_TEXT).' });
  // The second turn's content, after the first turn's fields and the other top-level fields were walked.
  const turns = [
    { role: 'user', content: 'hi' },
    { role: 'assistant', content: long },
  ];
  assert.equal(refusal({ ...ok, turns })?.field, 'turns.1.content');
  assert.equal(refusal({ ...ok, contexts: ['a', 'b', long] })?.field, 'contexts.2');
  assert.equal(refusal({ ...ok, deep: { a: [{ b: 'ok' }, { b: ['ok', long] }] } })?.field, 'deep.a.1.b.1');
  assert.equal(refusal(long)?.field, '');
  assert.match(refusal(long)!.detail, /^value is 11 characters/);
});

test('contexts and tags are counted where they are named, and tags are bounded in length', () => {
  assert.deepEqual(refusal({ contexts: ['a', 'b', 'c', 'd'] }), { field: 'contexts', detail: 'contexts has 4 items; the limit is 3 (TRIBUNAL_MAX_CONTEXTS).' });
  assert.equal(refusal({ a: { contexts: ['a', 'b', 'c', 'd'] } })?.field, 'a.contexts');
  assert.equal(refusal({ tags: ['a', 'b', 'c'] })?.field, 'tags');
  assert.equal(refusal({ rows: [{ tags: ['ok', 'toolong'] }] })?.field, 'rows.0.tags.1');
  // Only an array named tags or contexts is counted.
  assert.equal(refusal({ other: ['a', 'b', 'c', 'd'] }), null);
});

test("the caller's path prefixes the field and is left as it was", () => {
  const path = ['rows', '4'];
  assert.equal(refusal({ ok: 'fine', response: 'x'.repeat(11) }, path)?.field, 'rows.4.response');
  assert.deepEqual(path, ['rows', '4']);
  assert.equal(refusal({ ok: 'fine' }, path), null);
  assert.deepEqual(path, ['rows', '4']);
});
