// The per-key counts of one instance (src/http/window-counter.ts) against express-rate-limit's
// MemoryStore, which it replaces for the key limiter: the same counts, windows and resets, side by
// side, and the counts answered without a promise.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { MemoryStore, type Options } from 'express-rate-limit';
import { WindowCounter } from '../src/http/window-counter.ts';

const WINDOW_MS = 120;

test('counts, decrements, resets and new windows as MemoryStore does, answering at once', async () => {
  const ours = new WindowCounter();
  const theirs = new MemoryStore();
  ours.init({ windowMs: WINDOW_MS } as Options);
  theirs.init({ windowMs: WINDOW_MS } as Options);
  try {
    const both = async (op: 'increment' | 'decrement' | 'resetKey' | 'get', key: string) => {
      const mine = ours[op](key);
      assert.ok(!(mine instanceof Promise), `${op} answers without a promise`);
      const hits = (x: unknown) => (x as { totalHits?: number } | undefined)?.totalHits;
      assert.equal(hits(mine), hits(await theirs[op](key)), `${op} ${key}`);
      return hits(mine);
    };
    for (let i = 1; i <= 3; i++) assert.equal(await both('increment', 'a'), i);
    await both('decrement', 'a');
    assert.equal(await both('increment', 'a'), 3);
    assert.equal(await both('increment', 'b'), 1);
    await both('get', 'a');
    await both('resetKey', 'a');
    assert.equal(await both('get', 'a'), undefined);
    assert.equal(await both('increment', 'a'), 1);
    const first = ours.increment('b');
    assert.ok(first.resetTime && first.resetTime.getTime() > Date.now() && first.resetTime.getTime() <= Date.now() + WINDOW_MS);
    // Past the window: a key's count starts again, in both.
    await sleep(WINDOW_MS + 30);
    assert.equal(await both('get', 'b'), undefined);
    assert.equal(await both('increment', 'b'), 1);
  } finally {
    ours.shutdown();
    theirs.shutdown();
  }
});
