// Issue 14 part C: the JSON store keeps execution logs on disk and only an index in memory, reading
// a log's line by its byte offset. These tests check what that design could get wrong: offsets in
// bytes (multi-byte characters), lines across the start-up scan's 4 MB chunks, offsets after a bad
// line, offsets after a purge rewrote the file (with appends racing it), logs read while their line
// is still being committed, and every filter answered from the index alone.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { type IndexFilter, LogIndex } from '../src/store/log-index.ts';
import type { ExecutionLogRecord } from '../src/store/types.ts';
import { newestFirst } from '../src/store/types.ts';
import { jsonTempDirs, openJson } from './helpers/json-store.ts';
import { collect, log, org } from './store-contract.ts';
import { setProcessLogger } from '../src/log.ts';

const tempDir = jsonTempDirs('tribunal-logindex-');
const at = (s: number) => new Date(Date.UTC(2026, 0, 1) + s * 1000).toISOString();

/** A data directory with an empty database, as a first start leaves it. */
async function initialized(): Promise<string> {
  const dir = tempDir();
  await (await openJson(dir)).close();
  return dir;
}

async function quietly<T>(fn: () => Promise<T>): Promise<T> {
  setProcessLogger({ info: () => {}, warn: () => {}, error: () => {} });
  try {
    return await fn();
  } finally {
    setProcessLogger(null);
  }
}

describe('execution logs read from logs.jsonl by offset', () => {
  it('reads every log back after a restart: multi-byte text, a bad line in the middle, lines across the 4 MB scan chunks', async () => {
    const dir = await initialized();
    // About 2 KB a line (multi-byte characters in the response), 2,600 lines: over 5 MB.
    const logs = Array.from({ length: 2600 }, (_, i) => log('org_a', { created_at: at(i), response: `é漢😀 ${i} `.repeat(130 + (i % 7)), tags: [`t${i % 3}`] }));
    const lines = logs.map((l) => JSON.stringify(l));
    lines.splice(1300, 0, '{"half a line');
    fs.writeFileSync(path.join(dir, 'logs.jsonl'), `${lines.join('\n')}\n`);
    assert.ok(fs.statSync(path.join(dir, 'logs.jsonl')).size > 5 * 2 ** 20);

    const store = await quietly(() => openJson(dir));
    try {
      for (const l of logs) assert.deepEqual(await store.getExecutionLog(l.id), l);
      const listed = await collect((page) => store.listExecutionLogs({ org_id: 'org_a', tags: ['t1'] }, page), 97);
      assert.deepEqual(listed, logs.filter((l) => l.tags[0] === 't1').sort(newestFirst));
    } finally {
      await store.close();
    }
  });

  it('reads back logs committed together, lines of 1- to 4-byte characters in one write, before and after a restart', async () => {
    const dir = tempDir();
    let store = await openJson(dir);
    const widths = ['a', 'é', '漢', '😀'];
    const logs = Array.from({ length: 60 }, (_, i) => log('org_a', { created_at: at(i), response: `${widths[i % 4]!.repeat(1 + (i % 9))} ${i}` }));
    // None awaited before the next: they share group commits, several lines to a write.
    await Promise.all(logs.map((l) => store.appendExecutionLog(l)));
    try {
      for (const l of logs) assert.deepEqual(await store.getExecutionLog(l.id), l);
      assert.equal(fs.readFileSync(path.join(dir, 'logs.jsonl'), 'utf8'), logs.map((l) => `${JSON.stringify(l)}\n`).join(''));
    } finally {
      await store.close();
    }
    store = await openJson(dir);
    try {
      for (const l of logs) assert.deepEqual(await store.getExecutionLog(l.id), l);
    } finally {
      await store.close();
    }
  });

  it('reads the right lines after a purge rewrote the file, with appends racing the rewrite, before and after a restart', async () => {
    const dir = tempDir();
    const store = await openJson(dir);
    const demo = org({ is_demo: true });
    const kept = org();
    await store.createOrganization(demo);
    await store.createOrganization(kept);
    const expected: ExecutionLogRecord[] = [];
    for (let i = 0; i < 300; i++) {
      const l = log(i % 2 ? demo.id : kept.id, { created_at: at(i), response: `ünïcode ${i}`.repeat(1 + (i % 5)) });
      await store.appendExecutionLog(l);
      if (l.org_id === kept.id) expected.push(l);
    }
    const racing = Array.from({ length: 40 }, (_, i) => log(kept.id, { created_at: at(1000 + i) }));
    // Appends before and after the purge call, none awaited before it starts.
    const early = racing.slice(0, 20).map((l) => store.appendExecutionLog(l));
    const purge = store.purgeOrganization(demo.id);
    const late = racing.slice(20).map((l) => store.appendExecutionLog(l));
    await Promise.all([...early, purge, ...late]);
    expected.push(...racing);

    const check = async (s: typeof store) => {
      for (const l of expected) assert.deepEqual(await s.getExecutionLog(l.id), l);
      assert.deepEqual(await collect((page) => s.listExecutionLogs({ org_id: kept.id }, page), 33), [...expected].sort(newestFirst));
      assert.deepEqual((await s.listExecutionLogs({ org_id: demo.id }, { limit: 10 })).items, []);
    };
    await check(store);
    const after = log(kept.id, { created_at: at(2000) });
    await store.appendExecutionLog(after);
    expected.push(after);
    await check(store);
    await store.close();
    const text = fs.readFileSync(path.join(dir, 'logs.jsonl'), 'utf8');
    assert.equal(text.split('\n').filter(Boolean).length, expected.length, 'only the kept logs are in the file, each once');
    const reopened = await openJson(dir);
    try {
      await check(reopened);
    } finally {
      await reopened.close();
    }
  });

  it('lists and reads a log while its line is being committed', async () => {
    const dir = tempDir();
    const store = await openJson(dir);
    try {
      const first = log('org_a', { created_at: at(1) });
      await store.appendExecutionLog(first);
      const second = log('org_a', { created_at: at(2), tags: ['new'] });
      const appended = store.appendExecutionLog(second);
      assert.deepEqual(await store.getExecutionLog(second.id), second);
      assert.deepEqual((await store.listExecutionLogs({ org_id: 'org_a' }, { limit: 5 })).items, [second, first]);
      await appended;
      assert.deepEqual((await store.listExecutionLogs({ org_id: 'org_a', tags: ['new'] }, { limit: 5 })).items, [second]);
      assert.deepEqual(await store.getExecutionLog(second.id), second);
    } finally {
      await store.close();
    }
  });
});

/** session_id arrives on logs with the conversations work (issue 19); the index carries it already. */
type Log = ExecutionLogRecord & { session_id?: string | null };

/** The filter's meaning, spelled out on whole records (what the store answered before the index). */
function matches(f: IndexFilter, l: Log): boolean {
  const within = (v: number | null, min?: number, max?: number) => (min === undefined || (v !== null && v >= min)) && (max === undefined || (v !== null && v <= max));
  return (
    l.org_id === f.org_id &&
    (f.judge_id === undefined || l.judge_id === f.judge_id) &&
    (f.evaluator_id === undefined || l.evaluator_id === f.evaluator_id || l.evaluator_results.some((r) => r.evaluator_id === f.evaluator_id)) &&
    (f.project_id === undefined || l.project_id === f.project_id) &&
    (f.session_id === undefined || l.session_id === f.session_id) &&
    (f.user_id === undefined || l.user_id === f.user_id) &&
    within(l.score, f.min_score, f.max_score) &&
    within(l.cost_usd, f.min_cost, f.max_cost) &&
    (f.tags === undefined || f.tags.every((t) => l.tags.includes(t))) &&
    (f.date_from === undefined || l.created_at >= f.date_from) &&
    (f.date_to === undefined || l.created_at <= f.date_to)
  );
}

describe('filters answered from the index', () => {
  it('agree with the filter applied to whole records, for 300 random filters over 600 varied logs, before and after a restart; so do the session and user id lists', async () => {
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)]!;
    const dir = tempDir();
    const store = await openJson(dir);
    const logs: Log[] = [];
    for (let i = 0; i < 600; i++) {
      const single = rand() < 0.3;
      const base = log(pick(['org_a', 'org_b']));
      const l: Log = log(base.org_id, {
        ...({ session_id: pick([null, 'sess-1', 'sess-2', 'Sess-3', 'sess-é']) } as Partial<Log>),
        user_id: pick([null, 'u1', 'u2']),
        // Out of order on purpose: a late run is placed by binary search.
        created_at: at(Math.floor(rand() * 300)),
        type: single ? 'evaluator' : 'judge',
        judge_id: single ? null : pick(['jdg_1', 'jdg_2']),
        evaluator_id: single ? pick(['evl_1', 'evl_9']) : null,
        project_id: pick(['prj_1', 'prj_2', 'prj_3']),
        tags: ['x', 'y', 'z', 'w'].filter(() => rand() < 0.4),
        score: rand() < 0.1 ? null : Math.round(rand() * 100) / 100,
        cost_usd: rand() < 0.15 ? null : Math.round(rand() * 1000) / 100000,
        evaluator_results: base.evaluator_results.map((r) => ({ ...r, evaluator_id: pick(['evl_1', 'evl_2', 'evl_3']) })),
      });
      logs.push(l);
      await store.appendExecutionLog(l);
    }
    const filters: IndexFilter[] = Array.from({ length: 300 }, () => {
      const f: IndexFilter = { org_id: pick(['org_a', 'org_b', 'org_none']) };
      if (rand() < 0.2) f.session_id = pick(['sess-1', 'sess-2', 'Sess-3', 'sess-none']);
      if (rand() < 0.2) f.user_id = pick(['u1', 'u2']);
      if (rand() < 0.3) f.judge_id = pick(['jdg_1', 'jdg_2', 'jdg_none']);
      if (rand() < 0.3) f.evaluator_id = pick(['evl_1', 'evl_2', 'evl_3', 'evl_9', 'evl_none']);
      if (rand() < 0.3) f.project_id = pick(['prj_1', 'prj_2', 'prj_3']);
      if (rand() < 0.25) f.min_score = Math.round(rand() * 100) / 100;
      if (rand() < 0.25) f.max_score = Math.round(rand() * 100) / 100;
      if (rand() < 0.25) f.min_cost = Math.round(rand() * 1000) / 100000;
      if (rand() < 0.25) f.max_cost = Math.round(rand() * 1000) / 100000;
      if (rand() < 0.3) f.tags = ['x', 'y', 'z', 'v'].filter(() => rand() < 0.4);
      if (rand() < 0.25) f.date_from = at(Math.floor(rand() * 300));
      if (rand() < 0.25) f.date_to = at(Math.floor(rand() * 300));
      return f;
    });
    const checkAll = async (s: typeof store) => {
      for (const f of filters) {
        const want = logs.filter((l) => matches(f, l)).sort(newestFirst);
        assert.deepEqual(await collect((page) => s.listExecutionLogs(f, page), 25), want, JSON.stringify(f));
      }
      const bytewise = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));
      for (const orgId of ['org_a', 'org_b']) {
        for (const field of ['session_id', 'user_id'] as const) {
          const all = [
            ...new Set(
              logs
                .filter((l) => l.org_id === orgId)
                .map((l) => l[field])
                .filter((v): v is string => typeof v === 'string'),
            ),
          ].sort(bytewise);
          assert.deepEqual(await s.listLogValues(orgId, field, { limit: 50 }), { values: all, more: false });
          assert.deepEqual(await s.listLogValues(orgId, field, { limit: 1, after: all[0] }), { values: all.slice(1, 2), more: all.length > 2 });
          assert.deepEqual(await s.listLogValues(orgId, field, { limit: 50, starts_with: 'sess-' }), { values: all.filter((v) => v.startsWith('sess-')), more: false });
        }
      }
    };
    await checkAll(store);
    await store.close();
    const reopened = await openJson(dir);
    try {
      await checkAll(reopened);
    } finally {
      await reopened.close();
    }
  });
});

describe('the log index alone', () => {
  it("finds logs by their span's trace and span ids (string columns), before and after a compaction", () => {
    const index = new LogIndex();
    const T = (n: number) => String(n).repeat(32);
    const S = (n: number) => String(n).repeat(16);
    [{ id: 'log_1', trace_id: T(1), span_id: S(1) }, { id: 'log_2', trace_id: T(1), span_id: S(2) }, { id: 'log_3', trace_id: T(2), span_id: S(1) }, { id: 'log_4' }].forEach(
      (l, i) => index.add({ org_id: 'org_a', created_at: at(i), tags: [], evaluator_results: [], ...l }, i * 10, 10),
    );
    const ids = (ix: LogIndex, f: Partial<IndexFilter>) => ix.find({ org_id: 'org_a', ...f }, undefined, 10).map((r) => ix.idOf(r));
    for (const ix of [index, index.compact((r) => [r * 10, 10])]) {
      assert.deepEqual(ids(ix, { trace_id: T(1) }), ['log_2', 'log_1']);
      assert.deepEqual(ids(ix, { trace_id: T(1), span_id: S(1) }), ['log_1']);
      assert.deepEqual(ids(ix, { span_id: S(1) }), ['log_3', 'log_1']);
      assert.deepEqual(ids(ix, { trace_id: T(3) }), [], 'an unknown trace: none');
      assert.deepEqual(ids(ix, {}), ['log_4', 'log_3', 'log_2', 'log_1']);
    }
  });
});
