// Extraction from what real instrumentation sends (SPEC section 14, "Extraction"): a real `openai`
// client instrumented by @arizeai/openinference-instrumentation-openai (OpenInference) and by
// @opentelemetry/instrumentation-openai 0.20 (GenAI conventions, its message content as OTLP log
// records), and the Vercel AI SDK with telemetry on, all calling a fake OpenAI-compatible server,
// exported by the real OTLP trace and logs exporters (protobuf and JSON) to Tribunal. Rules then judge
// the OpenInference and GenAI spans through the fake judge.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, before, describe, it } from 'node:test';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { OpenAIInstrumentation as OpenInferenceInstrumentation } from '@arizeai/openinference-instrumentation-openai';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { OpenAIInstrumentation as GenAiInstrumentation } from '@opentelemetry/instrumentation-openai';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { InMemoryLogRecordExporter, LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { generateText } from 'ai';
import { evaluatorBody, startScoringRig, type ScoringRig } from './helpers/execute.ts';
import { startFakeOpenAI, type FakeOpenAI } from './helpers/fake-openai.ts';
import { exportLogs, exportSpans, ExportResultCode } from './helpers/otel-export.ts';

const require = createRequire(import.meta.url);
const FAKE_KEY = 'sk-test-instrumented';
let rig: ScoringRig;
let upstream: FakeOpenAI;

function tracing(service: string) {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ resource: resourceFromAttributes({ 'service.name': service }), spanProcessors: [new SimpleSpanProcessor(memory)] });
  return { memory, provider };
}

async function ship(memory: InMemorySpanExporter, encoding: 'protobuf' | 'json') {
  const spans = memory.getFinishedSpans();
  assert.ok(spans.length > 0, 'the instrumentation recorded spans');
  const result = await exportSpans({ url: rig.server.url, key: rig.key, encoding }, spans);
  assert.equal(result.code, ExportResultCode.SUCCESS, String(result.error));
  return spans;
}

function logging(service: string) {
  const memory = new InMemoryLogRecordExporter();
  const provider = new LoggerProvider({ resource: resourceFromAttributes({ 'service.name': service }), processors: [new SimpleLogRecordProcessor({ exporter: memory })] });
  return { memory, provider };
}

async function shipLogs(memory: InMemoryLogRecordExporter, encoding: 'protobuf' | 'json') {
  const records = memory.getFinishedLogRecords();
  assert.ok(records.length > 0, 'the instrumentation recorded log records');
  const result = await exportLogs({ url: rig.server.url, key: rig.key, encoding }, records);
  assert.equal(result.code, ExportResultCode.SUCCESS, String(result.error));
}

let genAi: GenAiInstrumentation | undefined;

/** One chat call through a real openai client instrumented by instrumentation-openai, with a LoggerProvider for its events. */
async function genAiCall(service: string, captureMessageContent: boolean) {
  const { memory, provider } = tracing(service);
  const { memory: logs, provider: loggerProvider } = logging(service);
  // One instrumentation for the file: the openai module is patched when it is first required, so a
  // second instance would find it loaded already. Each call gets its own providers and setting.
  if (!genAi) {
    genAi = new GenAiInstrumentation({ tracerProvider: provider, captureMessageContent } as never);
    registerInstrumentations({ instrumentations: [genAi], tracerProvider: provider });
  }
  const inst = genAi;
  inst.setTracerProvider(provider);
  inst.setConfig({ captureMessageContent } as never);
  inst.setLoggerProvider(loggerProvider as never);
  const close = async () => {
    await provider.shutdown();
    await loggerProvider.shutdown();
  };
  try {
    const OpenAI = require('openai');
    const client = new OpenAI.OpenAI({ apiKey: FAKE_KEY, baseURL: upstream.url });
    const answer = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello?' }] });
    await provider.forceFlush();
    await loggerProvider.forceFlush();
    const chat = memory.getFinishedSpans().find((s) => s.attributes['gen_ai.operation.name'] === 'chat');
    assert.ok(chat, 'the GenAI instrumentation made a chat span');
    return { memory, logs, chat, answer: answer.choices[0].message.content as string, close };
  } catch (err) {
    await close();
    throw err;
  }
}

async function genAiRule(service: string) {
  const ev = await rig.createEvaluator(evaluatorBody());
  const judgeId = (await rig.createJudge({ name: `judge ${service}`, intent: 'grade answers', evaluator_ids: [ev.id] })).id;
  const res = await rig.post('/v1/evaluation-rules/', {
    name: service,
    judge_id: judgeId,
    filter: [
      { field: 'gen_ai.operation.name', op: 'eq', value: 'chat' },
      { field: 'service.name', op: 'eq', value: service },
    ],
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body;
}

/** The rule's status once its matched span has ended in a counted state (nothing queued or running). */
async function settled(ruleId: string) {
  const deadline = Date.now() + 30_000;
  let st: any;
  do {
    await new Promise((r) => setTimeout(r, 100));
    st = (await rig.get(`/v1/evaluation-rules/${ruleId}/`)).body.status;
  } while ((st.queued + st.running > 0 || st.matched === 0) && Date.now() < deadline);
  return st;
}

const traceOf = async (traceId: string) => (await rig.get(`/v1/traces/${traceId}/`)).body.spans as any[];

before(async () => {
  upstream = await startFakeOpenAI({ apiKey: FAKE_KEY, honours: {} } as never);
  // A GenAI span's log records are waited for this long before it is counted unreadable.
  rig = await startScoringRig({ TRIBUNAL_TRACE_CONTENT_WAIT: '3s' });
});
after(async () => {
  genAi?.disable();
  await rig.close();
  await upstream.close();
});

describe('extraction from real instrumentation', () => {
  it('reads OpenInference spans of an instrumented openai client and judges them by rule', async () => {
    const { memory, provider } = tracing('oi-app');
    const inst = new OpenInferenceInstrumentation({ tracerProvider: provider });
    const unregister = registerInstrumentations({ instrumentations: [inst], tracerProvider: provider });
    const OpenAI = require('openai');
    inst.manuallyInstrument(OpenAI);
    const ev = await rig.createEvaluator(evaluatorBody());
    const judgeId = (await rig.createJudge({ name: 'OI judge', intent: 'grade answers', evaluator_ids: [ev.id] })).id;
    const rule = (await rig.post('/v1/evaluation-rules/', { name: 'oi', judge_id: judgeId, filter: [{ field: 'openinference.span.kind', op: 'eq', value: 'LLM' }] })).body;
    try {
      const client = new OpenAI.OpenAI({ apiKey: FAKE_KEY, baseURL: upstream.url });
      const answer = await client.chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'What is 2+2?' },
        ],
      });
      await provider.forceFlush();
      const [span] = await ship(memory, 'protobuf');
      const stored = (await traceOf(span.spanContext().traceId)).find((s) => s.span_id === span.spanContext().spanId);
      assert.equal(stored.extracted.source, 'openinference');
      assert.equal(stored.extracted.request, 'What is 2+2?');
      assert.equal(stored.extracted.response, answer.choices[0].message.content);
      assert.equal(stored.extracted.system_prompt, 'Be brief.');
      const deadline = Date.now() + 30_000;
      let st: any;
      do {
        await new Promise((r) => setTimeout(r, 100));
        st = (await rig.get(`/v1/evaluation-rules/${rule.id}/`)).body.status;
      } while (st.done < 1 && Date.now() < deadline);
      assert.deepEqual([st.matched, st.done, st.failed], [1, 1, 0]);
    } finally {
      unregister();
      inst.disable();
      await provider.shutdown();
    }
  });

  // instrumentation-openai 0.20 records the messages as OTLP log records (gen_ai.user.message,
  // gen_ai.choice, ... in the span's context), not on the span: the application sends them with a
  // LoggerProvider and the OTLP logs exporter to /otel/v1/logs. Its two batching exporters send spans
  // and logs in either order; the rule judges the span either way.
  for (const [order, encoding] of [
    ['spans first', 'json'],
    ['logs first', 'protobuf'],
  ] as const) {
    it(`judges a GenAI-instrumented span by rule from its OTLP log records (${order}, ${encoding})`, async () => {
      const service = `genai-${encoding}`;
      const run = await genAiCall(service, true);
      try {
        const rule = await genAiRule(service);
        if (order === 'spans first') {
          await ship(run.memory, encoding);
          // The unit falls due at once (delay 0) and finds no content yet: it waits for the log
          // records (TRIBUNAL_TRACE_CONTENT_WAIT) instead of being counted unreadable.
          await new Promise((r) => setTimeout(r, 1500));
          const waiting = (await rig.get(`/v1/evaluation-rules/${rule.id}/`)).body.status;
          assert.deepEqual([waiting.matched, waiting.done, waiting.queued + waiting.running, waiting.skipped], [1, 0, 1, {}]);
          await shipLogs(run.logs, encoding);
        } else {
          await shipLogs(run.logs, encoding);
          await ship(run.memory, encoding);
        }
        const stored = (await traceOf(run.chat.spanContext().traceId)).find((s) => s.span_id === run.chat.spanContext().spanId);
        assert.equal(stored.attributes['gen_ai.request.model'], 'gpt-4o-mini');
        assert.ok(
          stored.events.some((e: any) => e.name === 'gen_ai.user.message'),
          `the log records are the span's events: ${stored.events.map((e: any) => e.name)}`,
        );
        assert.equal(stored.extracted.source, 'gen_ai_legacy');
        assert.equal(stored.extracted.request, 'Hello?');
        assert.equal(stored.extracted.response, run.answer);
        const st = await settled(rule.id);
        assert.deepEqual([st.matched, st.done, st.failed, st.skipped], [1, 1, 0, {}]);
        const judged = (await traceOf(run.chat.spanContext().traceId)).find((s) => s.span_id === run.chat.spanContext().spanId);
        assert.equal(judged.evaluations.length, 1, 'the result is linked to the span');
      } finally {
        await run.close();
      }
    });
  }

  it('counts a GenAI-instrumented span whose log records carry no content as unreadable, after TRIBUNAL_TRACE_CONTENT_WAIT', async () => {
    // captureMessageContent off: the log records come, with empty bodies; nothing to judge.
    const run = await genAiCall('genai-nocontent', false);
    try {
      const rule = await genAiRule('genai-nocontent');
      await ship(run.memory, 'json');
      await shipLogs(run.logs, 'json');
      const stored = (await traceOf(run.chat.spanContext().traceId)).find((s) => s.span_id === run.chat.spanContext().spanId);
      assert.equal(stored.extracted, null);
      const st = await settled(rule.id);
      assert.equal(st.matched, 1);
      // Its GenAI events are there, with nothing in them: the format is known, the answer is not.
      assert.deepEqual(st.skipped, { unreadable_no_response: 1 });
    } finally {
      await run.close();
    }
  });

  it('reads the Vercel AI SDK telemetry of generateText', async () => {
    const { memory, provider } = tracing('vercel-app');
    const fake = createOpenAICompatible({ name: 'fake', baseURL: upstream.url, apiKey: FAKE_KEY });
    const result = await generateText({
      model: fake.chatModel('gpt-4o-mini'),
      system: 'Answer in one word.',
      prompt: 'Which colour is the sky?',
      experimental_telemetry: { isEnabled: true, tracer: provider.getTracer('ai'), functionId: 'sky' },
    });
    await provider.forceFlush();
    const spans = await ship(memory, 'protobuf');
    const outer = spans.find((s) => s.name === 'ai.generateText');
    assert.ok(outer, `an ai.generateText span among ${spans.map((s) => s.name).join(', ')}`);
    const stored = await traceOf(outer.spanContext().traceId);
    const read = stored.filter((s) => s.extracted?.source === 'vercel_ai');
    assert.ok(read.length >= 1, 'the AI SDK spans are read');
    for (const s of read) {
      assert.equal(s.extracted.response, result.text);
      assert.equal(s.extracted.request, 'Which colour is the sky?');
      assert.equal(s.extracted.system_prompt, 'Answer in one word.');
    }
    await provider.shutdown();
  });
});
