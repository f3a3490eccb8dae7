// Extraction forms without configuration (older GenAI attributes and events, OpenInference retrieval
// documents as contexts, tool calls) and org-defined extractor rules with JSONPath.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { extractSpan } from '../src/traces/extract/index.ts';
import type { SpanRecord } from '../src/traces/types.ts';

const span = (attributes: Record<string, unknown>, events: SpanRecord['events'] = [], resource: Record<string, unknown> = {}): SpanRecord => ({
  org_id: 'org_x',
  trace_id: 'ab'.repeat(16),
  span_id: 'cd'.repeat(8),
  parent_span_id: null,
  name: 'llm',
  kind: 'client',
  service_name: 'svc',
  start_time: '2026-01-01T00:00:00.000Z',
  end_time: '2026-01-01T00:00:01.000Z',
  start_time_unix_nano: '1767225600000000000',
  end_time_unix_nano: '1767225601000000000',
  status: { code: 'unset', message: null },
  attributes,
  resource_attributes: resource,
  events,
  scope: { name: null, version: null },
  received_at: '2026-01-01T00:00:02.000Z',
});

describe('extraction', () => {
  it('reads the older gen_ai.prompt.N / gen_ai.completion.N attributes', () => {
    const ex = extractSpan(
      span({
        'gen_ai.prompt.0.role': 'system',
        'gen_ai.prompt.0.content': 'Be kind.',
        'gen_ai.prompt.1.role': 'user',
        'gen_ai.prompt.1.content': 'Hi',
        'gen_ai.completion.0.role': 'assistant',
        'gen_ai.completion.0.content': 'Hello!',
      }),
    );
    assert.ok(ex.ok);
    assert.deepEqual([ex.value.source, ex.value.request, ex.value.response, ex.value.system_prompt], ['gen_ai_legacy', 'Hi', 'Hello!', 'Be kind.']);
  });

  it('reads the gen_ai.*.message and gen_ai.choice events, with tool calls as turns', () => {
    const t = '2026-01-01T00:00:00.500Z';
    const ex = extractSpan(
      span({}, [
        { name: 'gen_ai.user.message', time: t, attributes: { content: 'Weather in Paris?' } },
        { name: 'gen_ai.assistant.message', time: t, attributes: { tool_calls: [{ id: 'c1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }] } },
        { name: 'gen_ai.tool.message', time: t, attributes: { content: '18°C', id: 'c1' } },
        { name: 'gen_ai.choice', time: t, attributes: { index: 0, finish_reason: 'stop', message: { content: 'It is 18°C.' } } },
      ]),
    );
    assert.ok(ex.ok);
    assert.equal(ex.value.response, 'It is 18°C.');
    assert.deepEqual(
      ex.value.turns?.map((x) => x.role),
      ['user', 'assistant', 'tool', 'assistant'],
    );
    assert.equal(ex.value.turns?.[1].tool_calls?.[0].name, 'weather');
  });

  it('turns OpenInference retrieval documents into contexts', () => {
    const ex = extractSpan(
      span({
        'openinference.span.kind': 'CHAIN',
        'input.value': 'What is our refund window?',
        'output.value': '30 days.',
        'retrieval.documents.0.document.content': 'Refunds within 30 days.',
        'retrieval.documents.1.document.content': 'Shipping is free.',
      }),
    );
    assert.ok(ex.ok);
    assert.deepEqual(ex.value.contexts, ['Refunds within 30 days.', 'Shipping is free.']);
    assert.deepEqual([ex.value.request, ex.value.response], ['What is our refund window?', '30 days.']);
  });

  it('reads a tool span as a call and its result', () => {
    const ex = extractSpan(span({ 'ai.toolCall.name': 'search', 'ai.toolCall.args': '{"q":"otel"}', 'ai.toolCall.result': '3 hits' }));
    assert.ok(ex.ok);
    assert.deepEqual(ex.value.tool_call, { name: 'search', arguments: '{"q":"otel"}', result: '3 hits' });
    assert.equal(ex.value.response, '3 hits');
  });

  it('says why a span cannot be read', () => {
    assert.deepEqual(extractSpan(span({ 'http.method': 'GET' })), { ok: false, reason: 'no_known_format' });
    assert.deepEqual(extractSpan(span({ 'gen_ai.input.messages': '[{"role":"user","parts":[{"type":"text","content":"q"}]}]' })), { ok: false, reason: 'no_response' });
  });

  it('applies an extractor rule: span, event and resource locators with JSONPath', () => {
    const s = span(
      { 'app.payload': JSON.stringify({ question: 'Q?', answer: { text: 'A.' }, docs: [{ body: 'd1' }, { body: 'd2' }] }) },
      [{ name: 'prompt', time: '2026-01-01T00:00:00.000Z', attributes: { system: 'Sys.' } }],
      { 'app.persona': 'pirate' },
    );
    const ex = extractSpan(s, {
      request: { source: 'span', key: 'app.payload', path: '$.question' },
      response: { source: 'span', key: 'app.payload', path: '$.answer.text' },
      contexts: { source: 'span', key: 'app.payload', path: '$.docs[*].body' },
      system_prompt: { source: 'event', event_name: 'prompt', key: 'system' },
    });
    assert.ok(ex.ok);
    assert.deepEqual([ex.value.request, ex.value.response, ex.value.contexts, ex.value.system_prompt], ['Q?', 'A.', ['d1', 'd2'], 'Sys.']);
    assert.deepEqual(extractSpan(s, { response: { source: 'resource', key: 'app.missing' } }), { ok: false, reason: 'extractor_found_nothing' });
    const fromResource = extractSpan(s, { response: { source: 'resource', key: 'app.persona' } });
    assert.ok(fromResource.ok && fromResource.value.response === 'pirate');
  });
});
