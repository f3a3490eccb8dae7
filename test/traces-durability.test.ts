// Online evaluation survives kill -9 during a backlog: real server processes (src/main.ts) share a
// place (JSON data directory, or a PostgreSQL schema with TRIBUNAL_TEST_STORE=postgres); spans are
// queued, the process is killed mid-backlog, and a restarted process (on PostgreSQL: two instances
// at once) finishes the work with every span judged exactly once and every matched span counted.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { exportSpans, ExportResultCode, recordSpans } from './helpers/otel-export.ts';
import { kill, newPlace, PG, serverEnv, setUp, start, stop, useBatchProcesses } from './helpers/batch-process.ts';

useBatchProcesses();
const SPANS = 24;

describe('evaluation rules across kill -9', () => {
  it('finishes a backlog after a crash, each span judged once', async () => {
    const place = await newPlace();
    const env = serverEnv(place, { TRIBUNAL_BATCH_CONCURRENCY: '2', TRIBUNAL_BATCH_LEASE: '2s' });
    const first = await start(env);
    const s = await setUp(first);
    const rule = await first.request('POST', '/v1/evaluation-rules/', {
      key: s.key,
      body: { name: 'durable', judge_id: s.judgeId, filter: [{ field: 'service.name', op: 'eq', value: 'dur' }] },
    });
    assert.equal(rule.status, 201, JSON.stringify(rule.body));
    const spans = await recordSpans('dur', (tracer) => {
      for (let i = 0; i < SPANS; i++) {
        tracer
          .startSpan(`chat ${i}`, {
            attributes: {
              'gen_ai.input.messages': JSON.stringify([{ role: 'user', content: `q${i}` }]),
              'gen_ai.output.messages': JSON.stringify([{ role: 'assistant', content: `answer SPAN_${i}_END` }]),
            },
          })
          .end();
      }
    });
    assert.equal((await exportSpans({ url: first.url, key: s.key, encoding: 'protobuf' }, spans)).code, ExportResultCode.SUCCESS);
    const status = async (inst: typeof first) => (await inst.request('GET', `/v1/evaluation-rules/${rule.body.id}/`, { key: s.key })).body.status;
    // Kill it mid-backlog: some done, most still waiting.
    for (let t = 0; t < 300; t++) {
      const st = await status(first);
      if (st.done >= 2) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    await kill(first);

    const second = await start(env);
    const third = PG ? await start(env) : null;
    let st: any;
    for (let t = 0; t < 600; t++) {
      st = await status(second);
      if (st.queued === 0 && st.running === 0 && st.done + st.failed >= SPANS) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(st.matched, SPANS, JSON.stringify(st) + second.output().slice(-800));
    assert.equal(st.done, SPANS, JSON.stringify(st));
    assert.deepEqual([st.failed, st.queued, st.running, st.skipped], [0, 0, 0, {}]);

    // Exactly one execution log per span.
    const logs: any[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await second.request('GET', `/v1/execution-logs/?limit=200&tags=evaluation_rule:${rule.body.id}${cursor ? `&cursor=${cursor}` : ''}`, { key: s.key });
      logs.push(...page.body.results);
      cursor = page.body.next_cursor;
    } while (cursor);
    const perSpan = new Map<string, number>();
    for (const l of logs) {
      perSpan.set(l.span_id, (perSpan.get(l.span_id) ?? 0) + 1);
    }
    assert.equal(perSpan.size, SPANS);
    assert.deepEqual([...new Set(perSpan.values())], [1]);
    await stop(second);
    if (third) await stop(third);
  });
});
