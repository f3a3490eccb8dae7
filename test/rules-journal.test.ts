// The evaluation rules' work queue (issue 33): claim order and an exactly-once finish on the store
// TRIBUNAL_TEST_STORE names (JSON by default; postgres in test:postgres); and, on the JSON store,
// its journal (traces/rules.journal.jsonl beside rules.json): a restart after a crash (no close)
// resumes the queue exactly, running units waiting again with their attempts; a torn last line is
// cut off; a compaction interrupted by a crash applies nothing twice; a rules.json written before
// the journal existed still loads; a claim or finish not yet on disk (they ride on the next commit,
// at the latest within 200 ms) is forgotten harmlessly, the unit marked as one that may have run.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ruleStoreOf } from '../src/traces/rules/store.ts';
import { JsonRuleStore } from '../src/store/json-eval-rules.ts';
import type { EvalJob, RuleRecord, RuleStore } from '../src/traces/rules/types.ts';
import type { Store } from '../src/store/types.ts';
import { openTestStore, tempDir } from './helpers/server.ts';
import { queuedUnit, ruleRecord } from './helpers/rule-queue.ts';
import { countFdatasyncs } from './helpers/count-syncs.ts';

const t = (s: number) => new Date(Date.UTC(2026, 2, 1, 0, 0, s)).toISOString();
const rule = (id: string, over: Partial<RuleRecord> = {}) => ruleRecord(id, 'org_j', { queue_limit: 100, created_at: t(0), updated_at: t(0), ...over });
const job = (ruleId: string, n: number, runAfter: string, created = runAfter) => queuedUnit('org_j', ruleId, n, runAfter, created);
const counts = { always: { matched: 1, sampled: 1 }, queued: { 'day:x:runs': 1 } };

describe('rule queue on the test store', () => {
  let store: Store;
  let dir: string;
  let rs: RuleStore;
  before(async () => {
    dir = tempDir();
    store = await openTestStore(dir);
    rs = await ruleStoreOf(store);
  });
  after(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('claims the earliest due units first, and never one not yet due', async () => {
    await rs.createRule(rule('erl_order'));
    // Arrival order 1..6, run_after out of order; unit 5 not due at the claims' instants until the last.
    const runAfter = [t(30), t(10), t(20), t(10), t(90), t(25)];
    for (const [i, at] of runAfter.entries()) assert.equal(await rs.enqueue(job('erl_order', i + 1, at), 100, 'drop_oldest', counts), 'queued');
    // The order a claim answers in is not part of the contract (PostgreSQL's RETURNING): compared as sets.
    const ids = (js: EvalJob[]) => js.map((j) => j.id.split(':')[1]).sort();
    const first = await rs.claim(3, t(25), t(200));
    assert.deepEqual(ids(first), ['2', '3', '4'], 'run_after 10, 10, 20 before 25 and 30');
    assert.ok(first.every((j) => j.state === 'running' && j.lease_until === t(200) && j.attempts === 1));
    assert.deepEqual(ids(await rs.claim(10, t(60), t(200))), ['1', '6'], 'unit 5 is due at 90 s, not yet');
    // Lapsed leases come back with the waiting unit now due, their attempts counted.
    const lapsed = await rs.claim(10, t(300), t(400));
    assert.deepEqual(ids(lapsed), ['1', '2', '3', '4', '5', '6']);
    assert.deepEqual(lapsed.map((j) => j.attempts).sort(), [1, 2, 2, 2, 2, 2]);
  });

  it('takes back a lapsed lease shorter than those seen by a claim before it (the lease floor is lowered, not only raised)', async () => {
    await rs.createRule(rule('erl_floor'));
    await rs.enqueue(job('erl_floor', 1, t(10)), 100, 'drop_oldest', counts);
    assert.equal((await rs.claim(1, t(20), t(500))).length, 1, 'unit 1 leased until 500');
    // A claim that finds nothing lapsed (unit 1's lease ends at 500), then a unit leased until 150 only.
    assert.deepEqual(await rs.claim(1, t(30), t(500)), []);
    await rs.enqueue(job('erl_floor', 2, t(40)), 100, 'drop_oldest', counts);
    assert.equal((await rs.claim(1, t(50), t(150))).length, 1, 'unit 2 leased until 150');
    const again = await rs.claim(5, t(160), t(600));
    assert.deepEqual(
      again.map((j) => [j.id.split(':')[1], j.attempts]),
      [['2', 2]],
      'unit 2 lapsed at 150 and is taken again; unit 1 is still leased',
    );
    // The queue is shared with the tests before (their units lapse at 400): only this rule's are looked at.
    const late = (await rs.claim(20, t(510), t(900))).filter((j) => j.rule_id === 'erl_floor');
    assert.deepEqual(
      late.map((j) => j.id.split(':')[1]),
      ['1'],
    );
  });

  it('claims among waiting units in run_after order when fewer are asked for than are due', async () => {
    await rs.createRule(rule('erl_due'));
    for (const [i, s] of [50, 40, 30, 20, 10].entries()) await rs.enqueue(job('erl_due', i + 1, t(s)), 100, 'drop_oldest', counts);
    const taken: string[] = [];
    for (let k = 0; k < 5; k++) taken.push(...(await rs.claim(1, t(100), t(200))).map((j) => j.id.split(':')[1]!));
    assert.deepEqual(taken, ['5', '4', '3', '2', '1']);
  });

  it('finishes a unit exactly once under concurrent finishes, its counts added once', async () => {
    await rs.createRule(rule('erl_once'));
    for (let n = 1; n <= 5; n++) await rs.enqueue(job('erl_once', n, t(1)), 100, 'drop_oldest', counts);
    const claimed = await rs.claim(5, t(2), t(100));
    assert.equal(claimed.length, 5);
    const results = await Promise.all(claimed.flatMap((j) => [rs.finish(j.id, { done: 1 }), rs.finish(j.id, { done: 1 }), rs.finish(j.id, { done: 1 })]));
    assert.equal(results.filter(Boolean).length, 5, 'one true per unit');
    assert.equal((await rs.counters('erl_once')).done, 5);
    assert.deepEqual((await rs.progress('erl_once')).queue, { queued: 0, running: 0, oldest_queued_at: null });
    const later = await rs.claim(100, t(1000), t(2000));
    assert.deepEqual(
      later.filter((j) => j.rule_id === 'erl_once'),
      [],
      'a finished unit is never taken again',
    );
  });
});

describe('the JSON rule store journal', { skip: process.env.TRIBUNAL_TEST_STORE === 'postgres' && 'the journal is the JSON store' }, () => {
  const journalOf = (dir: string) => path.join(dir, 'traces', 'rules.journal.jsonl');

  /**
   * Rule with 4 units queued (one merged), 2 of them claimed, 1 of those finished; no close (a crash),
   * after the 200 ms within which the claim and the finish reach the disk without another commit.
   */
  async function crashedQueue(dir: string, opts: { compactBytes?: number } = {}) {
    const rs = new JsonRuleStore(dir, opts);
    await rs.createRule(rule('erl_j'));
    for (const n of [1, 2, 3, 4]) await rs.enqueue(job('erl_j', n, t(n)), 100, 'drop_oldest', counts);
    assert.equal(await rs.enqueue(job('erl_j', 3, t(50)), 100, 'drop_oldest', counts), 'waiting');
    const claimed = await rs.claim(2, t(10), t(20));
    assert.deepEqual(
      claimed.map((j) => j.id),
      ['erl_j:1', 'erl_j:2'],
    );
    assert.equal(await rs.finish('erl_j:1', { done: 1 }), true);
    await new Promise((r) => setTimeout(r, 300));
    return rs;
  }

  it('commits the durable changes of one turn of the event loop with one fdatasync, each answered once it is on disk', async () => {
    const dir = tempDir();
    const rs = new JsonRuleStore(dir);
    await rs.createRule(rule('erl_turn'));
    // Counted, not changed: the journal's group commit calls fs.fdatasync.
    const syncs = countFdatasyncs();
    try {
      // Three exports read in one turn: the first does not start a commit of its own before the others.
      const outcomes = await Promise.all([1, 2, 3].map((n) => rs.enqueue(job('erl_turn', n, t(n)), 100, 'drop_oldest', counts)));
      assert.deepEqual(outcomes, ['queued', 'queued', 'queued']);
      assert.equal(syncs.count, 1, 'one fdatasync for the turn');
    } finally {
      syncs.restore();
    }
    // Answered only once on disk: a crash now (no close; the directory is the next store's) loses none of them.
    const after = new JsonRuleStore(dir);
    assert.deepEqual((await after.progress('erl_turn')).queue, { queued: 3, running: 0, oldest_queued_at: t(1) });
    // Closed, not left compacting (it compacts at start): a later close of `rs` would race it for the snapshot's temp file.
    await after.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('forgets a claim and a finish a crash caught before they were on disk; the units wait again, marked as may have run', async () => {
    const dir = tempDir();
    const rs = new JsonRuleStore(dir);
    await rs.createRule(rule('erl_c'));
    for (const n of [1, 2]) await rs.enqueue(job('erl_c', n, t(n)), 100, 'drop_oldest', counts);
    const claimed = await rs.claim(2, t(10), t(20));
    assert.deepEqual(
      claimed.map((j) => [j.id, rs.mayHaveRun(j)]),
      [
        ['erl_c:1', false],
        ['erl_c:2', false],
      ],
      'queued in this process and taken once: not judged before',
    );
    assert.equal(await rs.finish('erl_c:1', { done: 1 }), true);
    // The crash, at once: the claim and the finish were still waiting for the next commit.
    const again = new JsonRuleStore(dir);
    assert.deepEqual((await again.progress('erl_c')).queue, { queued: 2, running: 0, oldest_queued_at: t(1) }, 'both units wait again');
    assert.equal((await again.counters('erl_c')).done, undefined, 'the forgotten finish counted nothing');
    await again.enqueue(job('erl_c', 3, t(3)), 100, 'drop_oldest', counts);
    const retaken = await again.claim(10, t(10), t(20));
    assert.deepEqual(
      retaken.map((j) => [j.id, j.attempts, again.mayHaveRun(j)]),
      [
        ['erl_c:1', 1, true],
        ['erl_c:2', 1, true],
        ['erl_c:3', 1, false],
      ],
      'the units read at start may have been judged (the worker looks for their result first); the new one was not',
    );
    assert.equal(await again.finish('erl_c:1', { done: 1 }), true);
    await again.close();
    const third = new JsonRuleStore(dir);
    assert.equal((await third.counters('erl_c')).done, 1, 'close wrote the carried finish');
    assert.deepEqual((await third.progress('erl_c')).queue, { queued: 2, running: 0, oldest_queued_at: t(2) });
    await third.close();
  });

  it('takes units of equal run_after in arrival order, before and after a restart', async () => {
    const dir = tempDir();
    const rs = new JsonRuleStore(dir);
    await rs.createRule(rule('erl_tie'));
    for (const [i, n] of [3, 1, 4, 2].entries()) await rs.enqueue(job('erl_tie', n, t(5), t(i)), 100, 'drop_oldest', counts);
    assert.deepEqual(
      (await rs.claim(2, t(10), t(20))).map((j) => j.id),
      ['erl_tie:3', 'erl_tie:1'],
    );
    const again = new JsonRuleStore(dir);
    assert.deepEqual(
      (await again.claim(10, t(10), t(20))).map((j) => j.id),
      ['erl_tie:3', 'erl_tie:1', 'erl_tie:4', 'erl_tie:2'],
      'the running ones wait again, in their place',
    );
    await again.close();
  });

  it('resumes the queue exactly after a crash: running units wait again, attempts and counters kept', async () => {
    const dir = tempDir();
    const before = await crashedQueue(dir);
    const counters = await before.counters('erl_j');
    assert.ok(fs.statSync(journalOf(dir)).size > 0, 'the changes are journal lines, not rewrites of rules.json');

    const again = new JsonRuleStore(dir);
    assert.deepEqual(await again.counters('erl_j'), counters);
    assert.deepEqual((await again.progress('erl_j')).queue, { queued: 3, running: 0, oldest_queued_at: t(2) });
    const claimed = await again.claim(10, t(100), t(200));
    assert.deepEqual(
      claimed.map((j) => [j.id, j.attempts, j.run_after]),
      [
        ['erl_j:2', 2, t(2)],
        ['erl_j:4', 1, t(4)],
        ['erl_j:3', 1, t(50)],
      ],
      'unit 2 was running (taken again, its attempt counted), unit 3 moved to the later run_after',
    );
    assert.equal(await again.finish('erl_j:1', { done: 1 }), false, 'finished before the crash: not again');
    await again.close();
    const third = new JsonRuleStore(dir);
    assert.equal(fs.statSync(journalOf(dir)).size, 0, 'close compacted the journal into rules.json');
    assert.deepEqual((await third.progress('erl_j')).queue, { queued: 3, running: 0, oldest_queued_at: t(2) });
    await third.close();
  });

  it('cuts off a torn last journal line at restart and appends after it', async () => {
    const dir = tempDir();
    await crashedQueue(dir);
    const whole = fs.statSync(journalOf(dir)).size;
    fs.appendFileSync(journalOf(dir), '{"s":99,"k":"finish","id":"erl_j:2","add":{"do');
    // Compaction at start is asynchronous: read the cut before it (the constructor cuts synchronously).
    const again = new JsonRuleStore(dir, { compactBytes: 10 ** 9 });
    assert.ok(fs.readFileSync(`${journalOf(dir)}.rejected`, 'utf8').includes('torn last line'), 'a copy is set aside');
    assert.deepEqual((await again.progress('erl_j')).queue, { queued: 3, running: 0, oldest_queued_at: t(2) }, 'the torn finish is not applied');
    assert.equal((await again.counters('erl_j')).done, 1);
    const [two] = await again.claim(1, t(100), t(200));
    assert.equal(await again.finish(two!.id, { done: 1 }), true);
    await again.close();
    assert.ok(whole > 0);
    const third = new JsonRuleStore(dir);
    assert.equal((await third.counters('erl_j')).done, 2, 'the finish appended after the cut holds');
    await third.close();
  });

  it('compacts past its bound; a crash between the snapshot and removing the old journal applies nothing twice', async () => {
    const dir = tempDir();
    const rs = await crashedQueue(dir, { compactBytes: 600 });
    for (let n = 10; n < 40; n++) await rs.enqueue(job('erl_j', n, t(n)), 100, 'drop_oldest', counts);
    const seqAt = () => (JSON.parse(fs.readFileSync(path.join(dir, 'traces', 'rules.json'), 'utf8')) as { journal_seq: number }).journal_seq;
    assert.ok(seqAt() > 10, 'the journal was compacted into rules.json on the way');
    const counters = await rs.counters('erl_j');
    await rs.close();
    // The crash: rules.json holds everything, and the old journal (every line already in it) is still there.
    const snapshot = { journal_seq: seqAt() };
    const lines = Array.from({ length: snapshot.journal_seq }, (_, i) => JSON.stringify({ s: i + 1, k: 'count', rule_id: 'erl_j', add: { done: 1 } }));
    fs.writeFileSync(`${journalOf(dir)}.old`, `${lines.join('\n')}\n`);
    const again = new JsonRuleStore(dir);
    assert.deepEqual(await again.counters('erl_j'), counters, 'lines up to the snapshot number are skipped');
    await again.close();
    assert.equal(fs.existsSync(`${journalOf(dir)}.old`), false, 'compacted again at start');
  });

  it('loads a rules.json written before the journal (no journal_seq), running units waiting again', async () => {
    const dir = tempDir();
    fs.mkdirSync(path.join(dir, 'traces'));
    const running = { ...job('erl_old', 1, t(1)), state: 'running' as const, lease_until: t(99), attempts: 1 };
    fs.writeFileSync(
      path.join(dir, 'traces', 'rules.json'),
      JSON.stringify({ rules: { erl_old: rule('erl_old') }, counters: { erl_old: { matched: 2 } }, jobs: { [running.id]: running, 'erl_old:2': job('erl_old', 2, t(0)) } }),
    );
    const rs = new JsonRuleStore(dir);
    assert.equal((await rs.getRule('erl_old'))?.name, 'erl_old');
    assert.deepEqual(
      (await rs.claim(5, t(10), t(20))).map((j) => [j.id, j.attempts]),
      [
        ['erl_old:2', 1],
        ['erl_old:1', 2],
      ],
    );
    await rs.close();
  });
});
