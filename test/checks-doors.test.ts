// Checks and code evaluators at the last two doors (issue 29 item 3): the judge proxy (a chat
// completion through the real `openai` SDK judged by a check and a code evaluator, no model call,
// cost 0, model null, the failed check named) and online evaluation rules (an OTLP trace scored by
// a check evaluator). TRIBUNAL_TEST_STORE=postgres runs it on PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SpanKind } from '@opentelemetry/api';
import { exportSpans, ExportResultCode, recordSpans } from './helpers/otel-export.ts';
import { startProxyRig, type ProxyRig } from './helpers/proxy-rig.ts';
import { until } from './helpers/wait.ts';

let rig: ProxyRig;
before(async () => {
  rig = await startProxyRig();
});
after(async () => {
  await rig.close();
});

const MESSAGES = [
  { role: 'system' as const, content: 'You answer geography questions in JSON.' },
  { role: 'user' as const, content: 'What is the capital of France?' },
];

describe('the judge proxy with check and code evaluators', () => {
  let judge: any;
  let check: any;
  let code: any;
  before(async () => {
    check = await rig.createEvaluator({
      name: 'Proxy answers in JSON',
      intent: 'The answer is a JSON object with an answer field.',
      kind: 'check',
      checks: [{ type: 'json_valid' }, { type: 'regex', pattern: 'Paris' }],
    });
    code = await rig.createEvaluator({
      name: 'Proxy mentions Paris (code)',
      intent: 'The answer names Paris.',
      kind: 'code',
      code: 'return input.response.includes("Paris") ? { score: 1, justification: "names Paris" } : { score: 0, justification: "no Paris" }',
    });
    judge = await rig.createJudge({ name: 'Proxy checks judge', intent: 'Checks answers without a model.', evaluator_ids: [check.id, code.id] });
  });

  test('a failing answer: both results in the tribunal object, the failed check named, no model call', async () => {
    rig.upstream.reply = { content: 'Paris is the capital of France.' };
    rig.upstream.requests.length = 0;
    rig.fake.resetStats();
    const completion: any = await rig.client(judge.id).chat.completions.create({ model: 'app-model', messages: MESSAGES });
    assert.equal(completion.choices[0].message.content, 'Paris is the capital of France.');
    assert.equal(rig.upstream.requests.length, 1, 'the upstream answered once');
    assert.equal(rig.fake.requests.length, 0, 'no judge model call');
    const t = completion.tribunal;
    assert.ok(t, 'the tribunal object');
    assert.equal(t.evaluator_results.length, 2, JSON.stringify(t));
    const byId = new Map<string, any>(t.evaluator_results.map((r: any) => [r.evaluator_id, r]));
    const c = byId.get(check.id);
    const k = byId.get(code.id);
    assert.ok(c && k, JSON.stringify(t.evaluator_results));
    assert.equal(c.score, 0);
    assert.match(c.justification, /1 of 2 checks passed.*json_valid on response: not valid JSON/);
    assert.equal(c.model, null);
    assert.equal(c.cost_usd, 0);
    assert.deepEqual([k.score, k.justification, k.model, k.cost_usd], [1, 'names Paris', null, 0]);

    const log = (await rig.get(`/v1/execution-logs/${t.execution_log_id}/`)).body;
    assert.equal(log.type, 'proxy');
    assert.equal(log.judge_id, judge.id);
    assert.equal(log.response, 'Paris is the capital of France.');
    assert.equal(log.evaluator_results.length, 2);
    for (const r of log.evaluator_results) {
      assert.equal(r.model, null);
      assert.equal(r.cost_usd, 0);
    }
    assert.equal(log.proxy.outcome, 'answered');
    assert.equal(rig.fake.requests.length, 0, 'still no judge model call');
  });

  test('a passing answer scores 1 on both, still without a model call', async () => {
    rig.upstream.reply = { content: '{"answer": "Paris"}' };
    rig.fake.resetStats();
    try {
      const completion: any = await rig.client(judge.id).chat.completions.create({ model: 'app-model', messages: MESSAGES });
      assert.equal(completion.choices[0].message.content, '{"answer": "Paris"}');
      const scores = completion.tribunal.evaluator_results.map((r: any) => [r.evaluator_id, r.score, r.cost_usd, r.model]);
      assert.deepEqual(
        scores.sort((a: any[], b: any[]) => String(a[0]).localeCompare(String(b[0]))),
        [
          [check.id, 1, 0, null],
          [code.id, 1, 0, null],
        ].sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
      );
      assert.equal(rig.fake.requests.length, 0, 'no judge model call');
    } finally {
      rig.upstream.reply = { content: 'Paris is the capital of France.' };
    }
  });

  test('streamed: the tribunal chunk carries both results, no model call', async () => {
    rig.upstream.reply = { content: 'Paris is the capital of France.', chunks: 4 };
    rig.fake.resetStats();
    try {
      const stream = await rig.client(judge.id).chat.completions.create({ model: 'app-model', messages: MESSAGES, stream: true });
      let text = '';
      let last: any;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta?.content ?? '';
        last = chunk;
      }
      assert.equal(text, 'Paris is the capital of France.');
      const results = last.tribunal.evaluator_results;
      const c = results.find((r: any) => r.evaluator_id === check.id);
      const k = results.find((r: any) => r.evaluator_id === code.id);
      assert.equal(c.score, 0);
      assert.match(c.justification, /json_valid on response: not valid JSON/);
      assert.deepEqual([c.model, c.cost_usd, k.score, k.model, k.cost_usd], [null, 0, 1, null, 0]);
      const log = (await rig.get(`/v1/execution-logs/${last.tribunal.execution_log_id}/`)).body;
      assert.equal(log.type, 'proxy');
      assert.equal(log.proxy.streamed, true);
      assert.equal(rig.fake.requests.length, 0, 'no judge model call');
    } finally {
      rig.upstream.reply = { content: 'Paris is the capital of France.' };
    }
  });
});

describe('an evaluation rule whose target is a check evaluator', () => {
  test('a span sent over OTLP is scored by the check: cost 0, no model call', async () => {
    const check = await rig.createEvaluator({
      name: 'Online short answer',
      intent: 'At most 3 words.',
      kind: 'check',
      checks: [{ type: 'length', max: 3, unit: 'words' }],
    });
    const created = await rig.post('/v1/evaluation-rules/', {
      name: 'online checks',
      evaluator_id: check.id,
      filter: [{ field: 'service.name', op: 'eq', value: 'checks-svc' }],
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const rule = created.body;
    rig.fake.resetStats();

    const spans = await recordSpans('checks-svc', (tracer) => {
      tracer
        .startSpan('chat gpt-4o-mini', {
          kind: SpanKind.CLIENT,
          attributes: {
            'gen_ai.operation.name': 'chat',
            'gen_ai.request.model': 'gpt-4o-mini',
            'gen_ai.input.messages': JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: 'Capital of France?' }] }]),
            'gen_ai.output.messages': JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: 'The capital of France is Paris.' }], finish_reason: 'stop' }]),
          },
        })
        .end();
    });
    const result = await exportSpans({ url: rig.server.url, key: rig.key, encoding: 'protobuf' }, spans);
    assert.equal(result.code, ExportResultCode.SUCCESS, String(result.error));
    const { traceId, spanId } = spans[0].spanContext();

    const s = await until('the rule to finish', async () => {
      const st = (await rig.get(`/v1/evaluation-rules/${rule.id}/`)).body.status;
      return (st.done + st.failed === 1 && st.queued === 0 && st.running === 0 && st) as any;
    });
    assert.equal(s.matched, 1);
    assert.equal(s.failed, 0, JSON.stringify(s));
    assert.equal(s.done, 1);

    const logs = await rig.get(`/v1/execution-logs/?trace_id=${traceId}&span_id=${spanId}`);
    assert.equal(logs.body.results.length, 1, JSON.stringify(logs.body));
    const listed = logs.body.results[0];
    const log = (await rig.get(`/v1/execution-logs/${listed.id}/`)).body;
    assert.equal(log.response, 'The capital of France is Paris.');
    assert.equal(log.evaluator_results.length, 1);
    const [r] = log.evaluator_results;
    assert.equal(r.evaluator_id, check.id);
    assert.equal(r.score, 0);
    assert.match(r.justification, /6 words, more than 3/);
    assert.equal(r.model, null);
    assert.equal(r.cost_usd, 0);
    assert.equal(log.cost_usd ?? 0, 0);
    assert.equal(rig.fake.requests.length, 0, 'no judge model call');

    // The trace shows the evaluation on the span.
    const t = await rig.get(`/v1/traces/${traceId}/`);
    const span = t.body.spans.find((x: any) => x.span_id === spanId);
    assert.deepEqual(
      span.evaluations.map((e: any) => e.execution_log_id),
      [log.id],
    );
  });
});
