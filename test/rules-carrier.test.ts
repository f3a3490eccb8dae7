// A span rule's enqueue carried by the spans file's commit (src/store/span-carrier.ts, issue 33): the
// journal's `jobs` line is written without a sync of its own and its exact copy rides spans.jsonl's
// commit of the same turn (one fdatasync an export, not two). An OS crash that loses journal lines
// written after its last sync (any of them, not only a tail) is simulated by cutting those lines out
// of the journal before the next start (no close: a crash): the unit is recovered from spans.jsonl,
// exactly once, in its place among the claims and finishes that did reach the disk. The trace store's
// load and migrate's reader skip the carried lines; a rewrite of spans.jsonl keeps those the journal
// may not hold yet. JSON store only (PostgreSQL has no journal).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, it } from 'node:test';
import { JsonRuleStore } from '../src/store/json-eval-rules.ts';
import { JsonTraceStore, readSpanFile } from '../src/store/json-traces.ts';
import type { Span } from '../src/traces/types.ts';
import { countFdatasyncs } from './helpers/count-syncs.ts';
import { queuedUnit, ruleRecord } from './helpers/rule-queue.ts';
import { tempDir } from './helpers/server.ts';
import { hex, storedSpan } from './helpers/spans.ts';

const t = (s: number) => new Date(Date.UTC(2026, 2, 1, 0, 0, s)).toISOString();
const counts = { always: { matched: 1, sampled: 1 }, queued: { 'day:x:runs': 1 } };
const ORG = 'org_c';

const span = (n: number, start = new Date().toISOString()): Span => storedSpan(hex(n, 32), hex(n, 16), start);

/** The stores as src/traces/rules/store.ts opens them on a data directory: the rules ride the spans file. */
function open(dir: string) {
  const traces = new JsonTraceStore(dir);
  const rules = new JsonRuleStore(dir, { carrier: traces.carrier });
  return { traces, rules, close: () => Promise.all([traces.close(), rules.close()]) };
}

/** Each test's data directory, removed after it whether it passed or not. */
const dirs: string[] = [];
const newDir = (): string => {
  const dir = tempDir();
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** Stores span `n` and queues its unit as the receiver does: the enqueue in the turn of the spans' append. */
async function exportSpan(s: ReturnType<typeof open>, ruleId: string, n: number, start?: string): Promise<void> {
  let queued: Promise<unknown> | undefined;
  await s.traces.insertSpans(ORG, [span(n, start)], 1000, () => {
    queued = s.rules.enqueue(queuedUnit(ORG, ruleId, n, t(n)), 100, 'drop_oldest', counts);
  });
  await queued;
}

const journalOf = (dir: string) => path.join(dir, 'traces', 'rules.journal.jsonl');
const spansOf = (dir: string) => path.join(dir, 'traces', 'spans.jsonl');
const lines = (file: string) => fs.readFileSync(file, 'utf8').split('\n').filter(Boolean);
const jobsLineOf = (dir: string, unit: string) => lines(journalOf(dir)).find((l) => l.includes('"k":"jobs"') && l.includes(`"${unit}"`));

/** An OS crash that lost the journal's line(s) of these units' enqueues, wherever they were in the file. */
function loseEnqueues(dir: string, units: string[]): void {
  const kept = lines(journalOf(dir)).filter((l) => !(l.includes('"k":"jobs"') && units.some((u) => l.includes(`"${u}"`))));
  assert.ok(kept.length < lines(journalOf(dir)).length, 'the journal held the lines the crash is to lose');
  fs.writeFileSync(journalOf(dir), kept.map((l) => `${l}\n`).join(''));
}

describe('a span rule enqueue carried by the spans file', () => {
  it("shares the spans' fdatasync: one for an export, its journal line copied exactly into spans.jsonl", async () => {
    const dir = newDir();
    const s = open(dir);
    await s.rules.createRule(ruleRecord('erl_one', ORG, { queue_limit: 100 }));
    const syncs = countFdatasyncs();
    try {
      await exportSpan(s, 'erl_one', 1);
      assert.equal(syncs.count, 1, 'the spans and the enqueue on disk with one fdatasync');
    } finally {
      syncs.restore();
    }
    const copy = lines(spansOf(dir)).find((l) => l.startsWith('{"s":'));
    assert.ok(copy, 'spans.jsonl carries the enqueue');
    assert.equal(copy, jobsLineOf(dir, 'erl_one:1'), "the copy is the journal's line, number and all");
    await s.close();
  });

  it("writes the journal's lines of one turn's enqueues with one write(2), before the exports are answered", async () => {
    const dir = newDir();
    const s = open(dir);
    await s.rules.createRule(ruleRecord('erl_turn', ORG, { queue_limit: 100 }));
    const journalIno = fs.statSync(journalOf(dir)).ino;
    const real = fs.writeSync;
    let writes = 0;
    fs.writeSync = ((...args: Parameters<typeof fs.writeSync>) => {
      // The journal's writes only (the spans file's carries the copies).
      if (typeof args[0] === 'number' && fs.fstatSync(args[0]).ino === journalIno && String(args[1]).includes('"k":"jobs"')) writes++;
      return real(...args);
    }) as typeof fs.writeSync;
    try {
      await Promise.all([1, 2, 3].map((n) => exportSpan(s, 'erl_turn', n)));
    } finally {
      fs.writeSync = real;
    }
    assert.equal(writes, 1, 'one write for the three enqueues of the turn');
    for (const n of [1, 2, 3]) assert.ok(jobsLineOf(dir, `erl_turn:${n}`), `the journal holds unit ${n}'s enqueue (a crash of the process alone loses none)`);
    await s.close();
  });

  it('recovers an enqueue the journal lost from the middle (its later lines kept): queued once, counted once', async () => {
    const dir = newDir();
    const s = open(dir);
    await s.rules.createRule(ruleRecord('erl_mid', ORG, { queue_limit: 100 }));
    for (const n of [1, 2, 3]) await exportSpan(s, 'erl_mid', n);
    loseEnqueues(dir, ['erl_mid:2']);
    // The crash: no close; the next process opens the same directory.
    const again = open(dir);
    assert.deepEqual((await again.rules.progress('erl_mid')).queue, { queued: 3, running: 0, oldest_queued_at: t(1) });
    assert.deepEqual(await again.rules.counters('erl_mid'), { matched: 3, sampled: 3, 'day:x:runs': 3 });
    assert.equal(await again.traces.countSpans(ORG), 3);
    // Every unit read back may have run (the worker looks for its result first), the recovered one too.
    const claimed = await again.rules.claim(10, t(100), t(200));
    assert.deepEqual(claimed.map((j) => [j.id, again.rules.mayHaveRun(j)]).sort(), [
      ['erl_mid:1', true],
      ['erl_mid:2', true],
      ['erl_mid:3', true],
    ]);
    // New changes number after the recovered line: a third start applies nothing twice.
    await exportSpan(again, 'erl_mid', 4);
    await again.close();
    const third = open(dir);
    assert.deepEqual((await third.rules.progress('erl_mid')).queue, { queued: 4, running: 0, oldest_queued_at: t(1) });
    assert.deepEqual(await third.rules.counters('erl_mid'), { matched: 4, sampled: 4, 'day:x:runs': 4 });
    await third.close();
  });

  it('applies a recovered enqueue before the claim and finish of its unit that reached the disk: the unit stays finished', async () => {
    const dir = newDir();
    const s = open(dir);
    await s.rules.createRule(ruleRecord('erl_order', ORG, { queue_limit: 100 }));
    await exportSpan(s, 'erl_order', 1);
    await exportSpan(s, 'erl_order', 2);
    const [unit] = await s.rules.claim(1, t(100), t(200));
    assert.equal(unit?.id, 'erl_order:1');
    assert.equal(await s.rules.finish('erl_order:1', { done: 1 }), true);
    // The claim and the finish ride the journal's next commit (within 200 ms); then the enqueue's page is lost.
    await new Promise((r) => setTimeout(r, 300));
    loseEnqueues(dir, ['erl_order:1']);
    const again = open(dir);
    assert.deepEqual((await again.rules.progress('erl_order')).queue, { queued: 1, running: 0, oldest_queued_at: t(2) }, 'unit 1 finished, unit 2 waits');
    assert.deepEqual(await again.rules.counters('erl_order'), { matched: 2, sampled: 2, 'day:x:runs': 2, done: 1 });
    await again.close();
  });

  it('applies nothing twice: neither a line both files hold nor one the snapshot holds (after a compaction)', async () => {
    const dir = newDir();
    const s = open(dir);
    await s.rules.createRule(ruleRecord('erl_twice', ORG, { queue_limit: 100 }));
    for (const n of [1, 2]) await exportSpan(s, 'erl_twice', n);
    // A crash with both copies on disk.
    const again = open(dir);
    assert.deepEqual(await again.rules.counters('erl_twice'), { matched: 2, sampled: 2, 'day:x:runs': 2 });
    assert.equal((await again.rules.progress('erl_twice')).queue.queued, 2);
    // A close compacts: the snapshot holds both enqueues, the journal is empty, spans.jsonl still carries them.
    await again.close();
    assert.equal(lines(journalOf(dir)).length, 0);
    assert.equal(lines(spansOf(dir)).filter((l) => l.startsWith('{"s":')).length, 2);
    const third = open(dir);
    assert.deepEqual(await third.rules.counters('erl_twice'), { matched: 2, sampled: 2, 'day:x:runs': 2 });
    assert.equal((await third.rules.progress('erl_twice')).queue.queued, 2);
    await third.close();
  });

  it("leaves the carried lines out of the trace store's load and migrate's reader: spans counted exactly", async () => {
    const dir = newDir();
    const s = open(dir);
    await s.rules.createRule(ruleRecord('erl_read', ORG, { queue_limit: 100 }));
    for (const n of [1, 2, 3]) await exportSpan(s, 'erl_read', n);
    await s.close();
    assert.equal(lines(spansOf(dir)).length, 6, 'three spans, three carried enqueues');
    const read = readSpanFile(spansOf(dir));
    assert.equal(read.spans.length, 3);
    assert.ok(read.spans.every((x) => x.org_id === ORG && x.trace_id.length === 32));
    assert.equal(read.carried.length, 3);
    const again = open(dir);
    assert.equal(await again.traces.countSpans(ORG), 3);
    assert.equal(await again.traces.countSpans(undefined as unknown as string), 0, 'no carried line taken for a span of no organization');
    assert.equal((await again.traces.listSpans(ORG, { limit: 100 })).length, 3);
    await again.close();
  });

  it('keeps, through a prune and a purge of spans.jsonl, the carried lines the journal has not synced yet, and only those', async () => {
    const dir = newDir();
    const s = open(dir);
    await s.rules.createRule(ruleRecord('erl_prune', ORG, { queue_limit: 100 }));
    const old = new Date(Date.now() - 3_600_000).toISOString();
    await exportSpan(s, 'erl_prune', 1, old);
    // At once, within the journal's 200 ms: its copy of the enqueue is written, not synced.
    assert.equal(await s.traces.prune(new Date(Date.now() - 60_000).toISOString()), 1, 'the span is pruned');
    assert.equal(await s.traces.countSpans(ORG), 0);
    assert.deepEqual(lines(spansOf(dir)), [jobsLineOf(dir, 'erl_prune:1')], 'the rewrite kept the carried enqueue');
    await exportSpan(s, 'erl_prune', 2);
    await s.traces.purgeOrganization(ORG);
    assert.equal(lines(spansOf(dir)).length, 2, 'the purge kept both carried enqueues, no span');
    // The crash lost the journal's unsynced enqueues: the rewritten spans.jsonl still had them.
    loseEnqueues(dir, ['erl_prune:1', 'erl_prune:2']);
    const again = open(dir);
    assert.equal((await again.rules.progress('erl_prune')).queue.queued, 2);
    await again.close();

    // Once the journal holds them on disk (its commit within 200 ms), a rewrite lets them go.
    const third = open(dir);
    await exportSpan(third, 'erl_prune', 3, old);
    await new Promise((r) => setTimeout(r, 300));
    await third.traces.prune(new Date(Date.now() - 60_000).toISOString());
    assert.deepEqual(lines(spansOf(dir)), [], 'nothing left to keep');
    assert.equal((await third.rules.progress('erl_prune')).queue.queued, 3);
    await third.close();
  });
});
