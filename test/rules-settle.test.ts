// A judged span's last steps (src/traces/rules/run.ts, issue 33): its evaluation link is carried by
// the evaluations file's shared sync (json-traces.ts, append-file.ts) instead of syncing alone, so
// the unit is finished only once the link is on disk (a finish on disk never lacks its link), and
// the worker's slot is free for the next unit meanwhile. The link a store answered survives a crash
// (the store dropped without close, the directory opened again). The run's execution log is carried
// the same way (logs.jsonl, src/runs/frame.ts): the link is written only once the log is on disk.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CARRY_MS } from '../src/store/append-file.ts';
import { JsonStore } from '../src/store/json-store.ts';
import { JsonTraceStore } from '../src/store/json-traces.ts';
import { LogFile } from '../src/store/log-file.ts';
import { traceStoreOf } from '../src/traces/store.ts';
import type { SpanEvaluation } from '../src/traces/types.ts';
import { evaluatorBody, startScoringRig, type ScoringRig } from './helpers/execute.ts';
import { exportSpans, ExportResultCode, recordSpans } from './helpers/otel-export.ts';
import { tempDir } from './helpers/server.ts';
import { until } from './helpers/wait.ts';
import { log } from './store-contract.ts';
import { countFdatasyncs } from './helpers/count-syncs.ts';

const link = (n: number): SpanEvaluation => ({
  org_id: 'org_a',
  trace_id: 'a'.repeat(32),
  span_id: `${n}`.padStart(16, '0'),
  rule_id: 'erl_1',
  execution_log_id: `log_${n}`,
  name: 'judge',
  score: 0.5,
  created_at: new Date().toISOString(),
});

describe('evaluation links (JSON store)', { skip: process.env.TRIBUNAL_TEST_STORE === 'postgres' }, () => {
  it('a link answered is on disk: the store dropped without close (a crash) and opened again lists it', async () => {
    const dir = tempDir();
    const first = new JsonTraceStore(dir);
    await Promise.all([first.addEvaluation(link(1)), first.addEvaluation(link(2))]);
    await first.addEvaluation(link(3));
    // No close: the next store reads the files as a crash left them.
    const again = new JsonTraceStore(dir);
    assert.deepEqual(
      (await again.listEvaluations('org_a', 'a'.repeat(32))).map((e) => e.execution_log_id),
      ['log_1', 'log_2', 'log_3'],
    );
    await again.close();
  });

  it("a carried execution log starts no fdatasync of its own, is answered once on disk (a crash after keeps it), and rides an execute call's commit", async () => {
    const dir = tempDir();
    const store = new JsonStore({ dataDir: dir });
    await store.init();
    const syncs = countFdatasyncs();
    try {
      const carried = Array.from({ length: 10 }, () => log('org_a', { tags: ['evaluation_rule:erl_1'] }));
      const answered = carried.map((r) => store.appendExecutionLogCarried!(r));
      // Listed at once, as every log is before its line is committed.
      assert.equal((await store.getExecutionLog(carried[0]!.id))?.id, carried[0]!.id);
      await new Promise((r) => setTimeout(r, CARRY_MS / 2));
      assert.equal(syncs.count, 0, 'no commit of their own before CARRY_MS');
      await Promise.all(answered);
      assert.equal(syncs.count, 1, 'one fdatasync for all ten');
      // The crash: no close; the file as it is now holds every log answered.
      const reread = await LogFile.open(path.join(dir, 'logs.jsonl'));
      for (const r of carried) assert.equal(reread.get(r.id)?.id, r.id);
      await reread.close();

      // A log appended as the execute path does is committed at once, and a carried one rides with it.
      const started = performance.now();
      const late = log('org_a');
      const riding = store.appendExecutionLogCarried!(late);
      await store.appendExecutionLog(log('org_a'));
      await riding;
      assert.ok(performance.now() - started < CARRY_MS, 'answered with the execute commit, not after the timer');
      assert.equal(syncs.count, 2);
    } finally {
      syncs.restore();
      await store.close();
    }
  });
});

describe('a judged unit', { skip: process.env.TRIBUNAL_TEST_STORE === 'postgres' }, () => {
  let rig: ScoringRig;
  let judgeId: string;
  before(async () => {
    // One slot: a second unit judged while the first one's link is held proves the slot was freed.
    rig = await startScoringRig({ TRIBUNAL_BATCH_CONCURRENCY: '1' });
    const ev = await rig.createEvaluator(evaluatorBody());
    judgeId = (await rig.createJudge({ name: 'Settle judge', intent: 'grade answers', evaluator_ids: [ev.id] })).id;
  });
  after(async () => {
    await rig.close();
  });

  it('is finished only once its link is on disk, and frees its slot before', async () => {
    const ts = await traceStoreOf(rig.server.store);
    const own = ts.addEvaluation;
    // The links' writes are held: each resolves only when released.
    const held: Array<() => void> = [];
    ts.addEvaluation = (e) => {
      const written = own.call(ts, e);
      return new Promise((resolve, reject) => held.push(() => void written.then(resolve, reject)));
    };
    try {
      const rule = await rig.post('/v1/evaluation-rules/', { name: 'settle', judge_id: judgeId, filter: [{ field: 'service.name', op: 'eq', value: 'settle-bot' }] });
      assert.equal(rule.status, 201, JSON.stringify(rule.body));
      const spans = await twoChatSpans('settle-bot');
      const sent = await exportSpans({ url: rig.server.url, key: rig.key, encoding: 'protobuf' }, spans);
      assert.equal(sent.code, ExportResultCode.SUCCESS, String(sent.error));
      await until('both units judged, their links held', () => held.length === 2);
      // Give a finish that did not wait for its link the time to show.
      await new Promise((r) => setTimeout(r, 300));
      const waiting = (await rig.get(`/v1/evaluation-rules/${rule.body.id}/`)).body.status;
      assert.equal(waiting.done, 0, 'no unit finished before its link was on disk');
      assert.equal(waiting.running, 2, 'both still running (leased), their finishes not given');
      for (const release of held) release();
      const s = await until('both units finished', async () => {
        const st = (await rig.get(`/v1/evaluation-rules/${rule.body.id}/`)).body.status;
        return st.done === 2 && st.running === 0 && st;
      });
      assert.equal(s.failed, 0);
      const t = await rig.get(`/v1/traces/${spans[0]!.spanContext().traceId}/`);
      assert.equal(t.body.spans[0].evaluations.length, 1, 'the link is listed');
    } finally {
      ts.addEvaluation = own;
    }
  });

  it('links a unit only once its carried execution log is on disk, and frees its slot before', async () => {
    const store = rig.server.store as JsonStore;
    const own = store.appendExecutionLogCarried!;
    const held: Array<() => void> = [];
    store.appendExecutionLogCarried = (r) => {
      const written = own.call(store, r);
      return new Promise((resolve, reject) => held.push(() => void written.then(resolve, reject)));
    };
    try {
      const rule = await rig.post('/v1/evaluation-rules/', { name: 'log first', judge_id: judgeId, filter: [{ field: 'service.name', op: 'eq', value: 'log-first' }] });
      assert.equal(rule.status, 201, JSON.stringify(rule.body));
      const spans = await twoChatSpans('log-first');
      assert.equal((await exportSpans({ url: rig.server.url, key: rig.key, encoding: 'protobuf' }, spans)).code, ExportResultCode.SUCCESS);
      // One slot, two units run: the first freed its slot while its log was still held.
      await until('both units judged, their logs held', () => held.length === 2);
      await new Promise((r) => setTimeout(r, 300));
      for (const sp of spans) {
        const t = await rig.get(`/v1/traces/${sp.spanContext().traceId}/`);
        assert.equal(t.body.spans[0].evaluations.length, 0, 'no link while its log is not on disk');
      }
      const waiting = (await rig.get(`/v1/evaluation-rules/${rule.body.id}/`)).body.status;
      assert.equal(waiting.done, 0);
      for (const release of held) release();
      await until('both units finished', async () => {
        const st = (await rig.get(`/v1/evaluation-rules/${rule.body.id}/`)).body.status;
        return st.done === 2 && st.running === 0;
      });
      const t = await rig.get(`/v1/traces/${spans[1]!.spanContext().traceId}/`);
      assert.equal(t.body.spans[0].evaluations.length, 1, 'linked once its log is on disk');
    } finally {
      store.appendExecutionLogCarried = own;
    }
  });
});

/** Two GenAI chat spans of `service`, each its own question and answer. */
function twoChatSpans(service: string) {
  return recordSpans(service, (tracer) => {
    for (let i = 0; i < 2; i++) {
      tracer
        .startSpan(`chat ${i}`, {
          attributes: {
            'gen_ai.input.messages': JSON.stringify([{ role: 'user', content: `q${i}` }]),
            'gen_ai.output.messages': JSON.stringify([{ role: 'assistant', content: `a${i}` }]),
          },
        })
        .end();
    }
  });
}
