// What an evaluation would judge from a span (the extractor's output, SPEC section 14), shown the
// same way on the trace page and in a rule's test panel; and the reasons a span cannot be read.
import { conversationView } from './conversation.js';
import { h } from './dom.js';

/** The extractor's reasons (skipped.unreadable_<reason> in a rule's status), in words. */
export const UNREADABLE = {
  no_known_format: 'no known format: not a GenAI, OpenInference or AI SDK span (an extractor rule can name where the inputs are)',
  no_response: 'a known format, but no response in it (the content may have been recorded as OTLP log records, not on the span)',
  extractor_found_nothing: "the rule's extractor found nothing on this span",
};

export const unreadableText = (/** @type {string} */ reason) =>
  /** @type {Record<string, string | undefined>} */ (UNREADABLE)[String(reason).replace(/^unreadable_/, '')] ?? String(reason).replace(/_/g, ' ');

const block = (/** @type {string} */ label, /** @type {string | null | undefined} */ value) =>
  value ? [h('h4', {}, label), h('pre', { class: 'text', tabindex: '0' }, value)] : null;

/**
 * The request/response (or turns), system prompt, contexts and tool call of an extraction.
 * @param {import('./types.js').Extracted} x
 */
export function extractedView(x) {
  const tool = x.tool_call;
  return h(
    'div',
    { class: 'extracted' },
    h('p', { class: 'muted small' }, `Read as ${x.source ?? 'an extractor rule'}${x.model ? ` · model ${x.model}` : ''}`),
    x.turns?.length
      ? [h('h4', {}, 'Conversation'), conversationView(x.turns, x.system_prompt)]
      : [block('System prompt', x.system_prompt), block('Request', x.request), block('Response', x.response)],
    x.contexts?.length
      ? [
          h('h4', {}, 'Contexts'),
          h(
            'ol',
            { class: 'context-list' },
            x.contexts.map((c) => h('li', {}, h('pre', { class: 'text' }, c))),
          ),
        ]
      : null,
    tool ? [h('h4', {}, `Tool call ${tool.name}`), h('pre', { class: 'text' }, tool.arguments), block('Tool result', tool.result)] : null,
  );
}
