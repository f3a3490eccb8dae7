// Extraction from what real instrumentation sends (SPEC section 14, "Extraction"): a real `openai`
// client instrumented by @arizeai/openinference-instrumentation-openai (OpenInference) and by
// @opentelemetry/instrumentation-openai 0.20 (GenAI conventions), and the Vercel AI SDK with
// telemetry on, all calling a fake OpenAI-compatible server, exported by the real OTLP exporters
// (protobuf and JSON) to Tribunal. A rule then judges the OpenInference span through the fake judge.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, before, describe, it } from 'node:test';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { OpenAIInstrumentation as OpenInferenceInstrumentation } from '@arizeai/openinference-instrumentation-openai';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { OpenAIInstrumentation as GenAiInstrumentation } from '@opentelemetry/instrumentation-openai';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { generateText } from 'ai';
import { evaluatorBody, startScoringRig, type ScoringRig } from './helpers/execute.ts';
import { startFakeOpenAI, type FakeOpenAI } from './helpers/fake-openai.ts';
import { exportSpans, ExportResultCode } from './helpers/otel-export.ts';

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

const traceOf = async (traceId: string) => (await rig.get(`/v1/traces/${traceId}/`)).body.spans as any[];

before(async () => {
  upstream = await startFakeOpenAI({ apiKey: FAKE_KEY, honours: {} } as never);
  rig = await startScoringRig();
});
after(async () => {
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

  it('counts a GenAI-instrumented span without message content as unreadable, with its reason', async () => {
    // instrumentation-openai 0.20 records the messages as OTLP log events, not on the span: the span
    // says which model answered, and nothing to judge. It must be counted, not silently skipped.
    const { memory, provider } = tracing('genai-app');
    const inst = new GenAiInstrumentation({ tracerProvider: provider, captureMessageContent: true } as never);
    const unregister = registerInstrumentations({ instrumentations: [inst], tracerProvider: provider });
    const ev = await rig.createEvaluator(evaluatorBody());
    const judgeId = (await rig.createJudge({ name: 'GenAI judge', intent: 'grade answers', evaluator_ids: [ev.id] })).id;
    const rule = (
      await rig.post('/v1/evaluation-rules/', {
        name: 'genai',
        judge_id: judgeId,
        filter: [
          { field: 'gen_ai.operation.name', op: 'eq', value: 'chat' },
          { field: 'service.name', op: 'eq', value: 'genai-app' },
        ],
      })
    ).body;
    try {
      const OpenAI = require('openai');
      const client = new OpenAI.OpenAI({ apiKey: FAKE_KEY, baseURL: upstream.url });
      await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello?' }] });
      await provider.forceFlush();
      const spans = await ship(memory, 'json');
      const chat = spans.find((s) => s.attributes['gen_ai.operation.name'] === 'chat');
      assert.ok(chat, 'the GenAI instrumentation made a chat span');
      const stored = (await traceOf(chat.spanContext().traceId)).find((s) => s.span_id === chat.spanContext().spanId);
      assert.equal(stored.attributes['gen_ai.request.model'], 'gpt-4o-mini');
      assert.equal(stored.extracted, null);
      const deadline = Date.now() + 30_000;
      let st: any;
      do {
        await new Promise((r) => setTimeout(r, 100));
        st = (await rig.get(`/v1/evaluation-rules/${rule.id}/`)).body.status;
      } while (st.queued + st.running > 0 || (st.matched === 0 && Date.now() < deadline));
      assert.equal(st.matched, 1);
      assert.deepEqual(st.skipped, { unreadable_no_known_format: 1 });
    } finally {
      unregister();
      inst.disable();
      await provider.shutdown();
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
