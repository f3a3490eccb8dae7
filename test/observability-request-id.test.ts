// The made request id (src/observability/request-id.ts): a version-4 UUID's text, unique within a
// block of 65,536 by its counter and across blocks and instances by a fresh random part.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RequestIds } from '../src/observability/request-id.ts';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test('three blocks of ids: each a v4 UUID text, none repeated, a new random part in each block', () => {
  const ids = new RequestIds();
  const seen = new Set<string>();
  const randomParts = new Set<string>();
  for (let i = 0; i < 3 * 65_536 + 10; i++) {
    const id = ids.newId();
    assert.ok(UUID_V4.test(id), `${i}: ${id}`);
    seen.add(id);
    randomParts.add(id.slice(0, 32));
  }
  assert.equal(seen.size, 3 * 65_536 + 10);
  assert.equal(randomParts.size, 4);
});

test('two instances (two servers, or a restart) do not start alike', () => {
  const a = new RequestIds();
  const b = new RequestIds();
  assert.notEqual(a.newId().slice(0, 32), b.newId().slice(0, 32));
});
