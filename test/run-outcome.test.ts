// Issue 25 items 1 and 5: a run in which every evaluator failed is a value (the engine answers it
// marked `failed`, the doors answer the same model_unavailable error as before), and a batch loads
// its judge's evaluators once per run, not once per row. In-process server, fake judge model.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Authenticator } from '../src/auth.ts';
import { answerOf } from '../src/engine/outcome.ts';
import { TribunalError } from '../src/errors.ts';
import { overloaded, toolAnswer } from './helpers/fake-anthropic.ts';
import { evaluatorBody, startScoringRig, type ScoringRig } from './helpers/execute.ts';
import { until } from './helpers/wait.ts';
import { exportSpans, ExportResultCode, recordSpans } from './helpers/otel-export.ts';

let rig: ScoringRig;
let judge: any;
before(async () => {
  rig = await startScoringRig({ TRIBUNAL_BATCH_CHUNK: '10', TRIBUNAL_BATCH_LEASE: '1s' });
  const a = await rig.createEvaluator(evaluatorBody());
  const b = await rig.createEvaluator(evaluatorBody());
  judge = await rig.createJudge({ name: `Outcome judge ${Math.random()}`, intent: 'grade answers', evaluator_ids: [a.id, b.id] });
});
after(() => rig.close());

const context = async () => {
  const caller = await new Authenticator(rig.server.store).authenticate(`Api-Key ${rig.key}`);
  return { ...rig.server.services, caller };
};

describe('a failed run is a value', () => {
  test('the engine answers it marked failed, logged; the door answers model_unavailable as before', async () => {
    rig.fake.respondWith(() => overloaded());
    try {
      const ctx = await context();
      const record = await rig.server.store.getJudge(judge.id);
      const outcome = await ctx.engine.runJudge(ctx, record!, { request: 'q', response: 'a' });
      assert.equal(outcome.failed?.status, 503, 'every call overloaded: 503');
      assert.match(outcome.failed!.message, /failed for every evaluator of judge .*the run is logged as log_/);
      assert.equal(outcome.score, null);
      assert.equal(outcome.evaluator_results.length, 2);
      assert.ok(outcome.evaluator_results.every((r) => r.score === null && /overloaded/.test(r.error ?? '')));
      const logged = await rig.get(`/v1/execution-logs/${outcome.execution_log_id}/`);
      assert.equal(logged.status, 200);
      assert.equal(logged.body.score, null);

      // The door's conversion: the error of before, with the log id and results in its body.
      assert.throws(
        () => answerOf(outcome),
        (err: unknown) =>
          err instanceof TribunalError &&
          err.code === 'model_unavailable' &&
          err.status === 503 &&
          err.extra?.execution_log_id === outcome.execution_log_id &&
          err.extra?.evaluator_results === outcome.evaluator_results,
      );
      const res = await rig.post(`/v1/judges/${judge.id}/execute/`, { request: 'q', response: 'a' });
      assert.equal(res.status, 503);
      assert.equal(res.body.code, 'model_unavailable');
      assert.equal(res.body.evaluator_results.length, 2);
      assert.equal((await rig.get(`/v1/execution-logs/${res.body.execution_log_id}/`)).status, 200);
      assert.ok(!('failed' in res.body), 'the value marker never reaches the wire');
    } finally {
      rig.fake.respondWith(null);
    }
  });

  test('a run that scored answers without the marker', async () => {
    rig.fake.respondWith(() => toolAnswer({ justification: 'fine', score: 0.5 }));
    try {
      const ctx = await context();
      const outcome = await ctx.engine.runJudge(ctx, (await rig.server.store.getJudge(judge.id))!, { request: 'q', response: 'a' });
      assert.equal(outcome.failed, undefined);
      assert.equal(outcome.score, 0.5);
      assert.deepEqual(answerOf(outcome), outcome);
    } finally {
      rig.fake.respondWith(null);
    }
  });

  test('a batch row whose every evaluator failed is a failed row with its log and errors', async () => {
    rig.fake.respondWith(() => overloaded());
    try {
      const started = await rig.post(`/v1/judges/${judge.id}/batch-execute/`, { items: [{ request: 'q', response: 'a' }] });
      assert.equal(started.status, 202, JSON.stringify(started.body));
      const id = started.body.batch_execution_id;
      await until('the run to end', async () => ['completed', 'failed'].includes((await rig.get(`/v1/judges/batch-executions/${id}/`)).body.status));
      const [row] = (await rig.get(`/v1/judges/batch-executions/${id}/results/`)).body.results;
      assert.equal(row.score, null);
      assert.match(row.error, /failed for every evaluator/);
      assert.equal(row.evaluator_results.length, 2);
      assert.equal((await rig.get(`/v1/execution-logs/${row.execution_log_id}/`)).status, 200);
    } finally {
      rig.fake.respondWith(null);
    }
  });
});

describe('online evaluation reads the value', () => {
  test('a span whose every evaluator failed is judged again after its lease, then counted failed', async () => {
    rig.fake.respondWith(() => overloaded());
    try {
      const created = await rig.post('/v1/evaluation-rules/', { name: 'outcome rule', judge_id: judge.id, filter: [{ field: 'service.name', op: 'eq', value: 'outcome-bot' }] });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const attributes = {
        'gen_ai.operation.name': 'chat',
        'gen_ai.input.messages': JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: 'What is 2+2?' }] }]),
        'gen_ai.output.messages': JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: 'Four.' }], finish_reason: 'stop' }]),
      };
      const spans = await recordSpans('outcome-bot', (tracer) => tracer.startSpan('chat', { attributes }).end());
      const sent = await exportSpans({ url: rig.server.url, key: rig.key, encoding: 'protobuf' }, spans);
      assert.equal(sent.code, ExportResultCode.SUCCESS, String(sent.error));
      const status = await until(
        'the unit to be counted failed',
        async () => {
          const st = (await rig.get(`/v1/evaluation-rules/${created.body.id}/`)).body.status;
          return st.failed === 1 && st;
        },
        20_000,
      );
      assert.equal(status.done, 0);
      // One logged run per attempt, each without a score: three attempts in all.
      const logs = (await rig.get(`/v1/execution-logs/?trace_id=${spans[0].spanContext().traceId}`)).body.results;
      assert.equal(logs.length, 3);
      assert.ok(logs.every((l: any) => l.score === null));
    } finally {
      rig.fake.respondWith(null);
    }
  });
});

describe('a batch loads its evaluators once per run', () => {
  test('30 rows in chunks of 10 read the judge evaluators once for the run, not per row or per chunk', async () => {
    rig.fake.respondWith(() => toolAnswer({ justification: 'fine', score: 0.5 }));
    const store = rig.server.store;
    const original = store.getEvaluator;
    let reads = 0;
    store.getEvaluator = function (this: typeof store, ...args: Parameters<typeof original>) {
      reads++;
      return original.apply(this, args);
    };
    try {
      const items = Array.from({ length: 30 }, (_, i) => ({ request: `q${i}`, response: `a${i}` }));
      const started = await rig.post(`/v1/judges/${judge.id}/batch-execute/`, { items });
      assert.equal(started.status, 202, JSON.stringify(started.body));
      const id = started.body.batch_execution_id;
      const end = await until('the run to end', async () => {
        const b = (await rig.get(`/v1/judges/batch-executions/${id}/`)).body;
        return b.status === 'completed' && b;
      });
      assert.equal(end.done, 30);
      // 2 evaluators once for the run (prepare), once more by the start (its check).
      assert.ok(reads <= 2 + 2, `the evaluators were read ${reads} times for 30 rows of 2 evaluators`);
    } finally {
      store.getEvaluator = original;
      rig.fake.respondWith(null);
    }
  });
});
