// Group commit of received spans (src/store/postgres/span-group-commit.ts) over a writer that records
// its calls: requests arriving while a statement is in flight go together in the next one; a span in
// two of them is the earlier request's; a failure that may be one request's is decided request by
// request, so it reaches only that request; an unreachable database reaches them all.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SpanGroupCommit, type SpanWriter } from '../src/store/postgres/span-group-commit.ts';
import type { Span } from '../src/traces/types.ts';

const span = (t: number, s: number) => ({ trace_id: `t${t}`, span_id: `s${s}` }) as Span;
const keys = (spans: Span[]) => spans.map((s) => `${s.trace_id}:${s.span_id}`);
/** The promise's outcome, its rejection handled at once (a request may fail before the test looks). */
const outcome = <T>(p: Promise<T>) =>
  p.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );

class Everyone extends Error {}

/** A writer whose statements finish when the test says so; it stores into `stored` (keys). */
function fakeWriter(opts: { failTogether?: (spans: Span[]) => Error | undefined; failAlone?: (spans: Span[]) => Error | undefined } = {}) {
  const stored = new Set<string>();
  const calls: string[][] = [];
  const alone: string[][] = [];
  const gates: Array<() => void> = [];
  const gate = () => new Promise<void>((r) => gates.push(r));
  const put = (spans: Span[]) => keys(spans).filter((k) => !stored.has(k) && stored.add(k));
  const writer: SpanWriter = {
    async insertTogether(_org, spans) {
      calls.push(keys(spans));
      await gate();
      const err = opts.failTogether?.(spans);
      if (err) throw err;
      return put(spans);
    },
    async insertAlone(_org, spans) {
      alone.push(keys(spans));
      const err = opts.failAlone?.(spans);
      if (err) throw err;
      const k = new Set(put(spans));
      const mine = spans.filter((s) => k.has(`${s.trace_id}:${s.span_id}`));
      return { inserted: mine.length, duplicates: spans.length - mine.length, refused: 0, stored: mine };
    },
    isEveryones: (err) => err instanceof Everyone,
  };
  /** Lets every statement waiting so far finish, and lets the group commit go on. */
  const release = async () => {
    for (const g of gates.splice(0)) g();
    await new Promise((r) => setImmediate(r));
  };
  return { writer, calls, alone, release };
}

describe('span group commit', () => {
  it('stores requests that arrive during a statement together, each answered with its own spans', async () => {
    const w = fakeWriter();
    const g = new SpanGroupCommit(w.writer);
    // The first request is alone: it goes on its own (no statement shared, no grouping cost).
    const first = g.insert('org', [span(1, 1)], 100);
    const a = g.insert('org', [span(2, 1), span(2, 2)], 100);
    const b = g.insert('org', [span(2, 2), span(3, 1)], 100);
    const c = g.insert('org', [span(4, 1)], 100);
    assert.deepEqual(await first, { inserted: 1, duplicates: 0, refused: 0, stored: [span(1, 1)] });
    assert.deepEqual(w.alone, [['t1:s1']]);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(w.calls, [['t2:s1', 't2:s2', 't3:s1', 't4:s1']], 'the three waiting requests are one statement, the shared span sent once');
    await w.release();
    const [ra, rb, rc] = await Promise.all([a, b, c]);
    assert.deepEqual([ra.inserted, ra.duplicates, keys(ra.stored)], [2, 0, ['t2:s1', 't2:s2']]);
    assert.deepEqual([rb.inserted, rb.duplicates, keys(rb.stored)], [1, 1, ['t3:s1']], "a span in two requests is the earlier one's");
    assert.deepEqual([rc.inserted, rc.duplicates], [1, 0]);
  });

  it('bounds a statement by maxGroupSpans and keeps arrival order', async () => {
    const w = fakeWriter();
    const g = new SpanGroupCommit(w.writer, 3);
    const all = [g.insert('org', [span(0, 0)], 9), ...[1, 2, 3, 4, 5].map((t) => g.insert('org', [span(t, 1), span(t, 2)], 9))];
    await all[0];
    await new Promise((r) => setImmediate(r));
    // Groups: the first alone, then at most 3 spans a statement: a request of 2 spans each goes alone.
    assert.deepEqual(w.alone.slice(0, 2), [['t0:s0'], ['t1:s1', 't1:s2']]);
    const results = await Promise.all(all);
    assert.deepEqual(
      results.map((r) => r.inserted),
      [1, 2, 2, 2, 2, 2],
    );
    // Another organization (or cap) never waits behind this one's queue.
    const other = fakeWriter();
    const h = new SpanGroupCommit(other.writer);
    const x = h.insert('org', [span(1, 1)], 9);
    const y = h.insert('org', [span(2, 1)], 9);
    const z = h.insert('other', [span(3, 1)], 9);
    await Promise.all([x, z]);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(other.alone, [['t1:s1'], ['t3:s1'], ['t2:s1']]);
    await y;
  });

  it("answers a failure that may be one request's to that request only, deciding each on its own", async () => {
    const bad = new Error('invalid input syntax for type timestamp');
    const w = fakeWriter({
      failTogether: (spans) => (spans.some((s) => s.trace_id === 'tbad') ? bad : undefined),
      failAlone: (spans) => (spans.some((s) => s.trace_id === 'tbad') ? bad : undefined),
    });
    const g = new SpanGroupCommit(w.writer);
    const first = g.insert('org', [span(1, 1)], 100);
    const ok1 = g.insert('org', [span(2, 1)], 100);
    const broken = outcome(g.insert('org', [{ ...span(0, 1), trace_id: 'tbad' }], 100));
    const ok2 = g.insert('org', [span(3, 1)], 100);
    await first;
    await new Promise((r) => setImmediate(r));
    await w.release();
    assert.equal((await ok1).inserted, 1);
    assert.equal(((await broken) as { error?: unknown }).error, bad);
    assert.equal((await ok2).inserted, 1);
    assert.deepEqual(w.alone, [['t1:s1'], ['t2:s1'], ['tbad:s1'], ['t3:s1']], 'after the shared statement failed, each request was stored on its own, in order');
  });

  it('answers an unreachable database to every request of the statement', async () => {
    const down = new Everyone('PostgreSQL is unreachable');
    const w = fakeWriter({ failTogether: () => down });
    const g = new SpanGroupCommit(w.writer);
    const first = g.insert('org', [span(1, 1)], 100);
    const rest = [outcome(g.insert('org', [span(2, 1)], 100)), outcome(g.insert('org', [span(3, 1)], 100))];
    await first;
    await new Promise((r) => setImmediate(r));
    await w.release();
    for (const r of rest) assert.equal(((await r) as { error?: unknown }).error, down);
    assert.deepEqual(w.alone, [['t1:s1']], 'nothing was retried on its own');
  });
});
