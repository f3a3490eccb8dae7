// Conversations in the web app: a run's turns shown as a conversation (tool calls and tool results
// folded in <details>, the judged turn marked), and the Try it form's conversation fields. All text
// goes in as text nodes (dom.js), so nothing in a turn can become markup.
import { h } from './dom.js';
import { field } from './ui.js';

/** @import { ToolCall, Turn } from './types.js' */

/** @type {Record<string, string | undefined>} */
const ROLE_LABELS = { user: 'User', assistant: 'Assistant', tool: 'Tool', system: 'System' };

const argumentsText = (/** @type {ToolCall['arguments']} */ args) => (typeof args === 'string' ? args : JSON.stringify(args, null, 2));

/**
 * @param {ToolCall} call
 */
function toolCall(call) {
  return h(
    'details',
    { class: 'tool-call' },
    h('summary', {}, 'Calls ', h('code', {}, call.name), call.id ? h('span', { class: 'muted' }, ` (${call.id})`) : null),
    h('pre', { class: 'text' }, argumentsText(call.arguments)),
  );
}

/**
 * @param {Turn} turn
 * @param {number} index
 * @param {boolean} judged
 */
function turnItem(turn, index, judged) {
  const label = [ROLE_LABELS[turn.role] ?? turn.role, turn.name ? ` · ${turn.name}` : '', judged ? ' · judged turn' : ''].join('');
  const body =
    turn.role === 'tool'
      ? h('details', { class: 'tool-result' }, h('summary', {}, `Result${turn.tool_call_id ? ` of ${turn.tool_call_id}` : ''}`), h('pre', { class: 'text' }, turn.content))
      : turn.content
        ? h('pre', { class: 'text' }, turn.content)
        : null;
  return h(
    'li',
    { class: ['turn', `turn-${turn.role}`, judged ? 'judged' : ''], 'data-role': turn.role },
    h('p', { class: 'turn-role' }, h('span', { class: 'muted' }, `${index + 1}. `), label),
    body,
    (turn.tool_calls ?? []).map(toolCall),
  );
}

/**
 * The last assistant turn: the one a run judges.
 * @param {ReadonlyArray<{ role: string }>} turns
 */
export function judgedIndex(turns) {
  for (let i = turns.length - 1; i >= 0; i--) if (turns[i].role === 'assistant') return i;
  return -1;
}

/**
 * A run's conversation, in order, with its system prompt first (folded).
 * @param {Turn[]} turns
 * @param {string | null | undefined} systemPrompt
 */
export function conversationView(turns, systemPrompt) {
  const judged = judgedIndex(turns);
  return h(
    'div',
    { class: 'conversation' },
    systemPrompt ? h('details', { class: 'system-prompt' }, h('summary', {}, 'System prompt'), h('pre', { class: 'text' }, systemPrompt)) : null,
    h(
      'ol',
      { class: 'turns', 'aria-label': 'Conversation' },
      turns.map((t, i) => turnItem(t, i, i === judged)),
    ),
  );
}

/**
 * The Try it form's conversation fields: turns as JSON, the application's system prompt, a session.
 * `read()` answers {turns?, system_prompt?, session_id?} or throws a form error naming the field.
 */
export function conversationFields() {
  const turns = h('textarea', {
    rows: '6',
    class: 'code',
    spellcheck: 'false',
    placeholder: '[{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello! How can I help?"}]',
  });
  const systemPrompt = h('textarea', { rows: '3' });
  const session = h('input', { type: 'text', autocomplete: 'off' });
  const fieldset = h(
    'fieldset',
    { class: 'conversation-fields' },
    h('legend', {}, 'Conversation (instead of request and response)'),
    field({ label: 'Turns (JSON)', name: 'turns', hint: 'A list of {role, content, tool_calls?, tool_call_id?, name?}; the last assistant turn is judged.' }, turns),
    field({ label: 'System prompt', name: 'system_prompt', hint: "The application's system prompt, judged against (role adherence)." }, systemPrompt),
    field({ label: 'Session id', name: 'session_id', hint: 'Groups the runs of one conversation on the session page.' }, session),
  );
  const read = () => {
    /** @type {{ turns?: Turn[], system_prompt?: string, session_id?: string }} */
    const out = {};

    if (turns.value.trim()) {
      try {
        out.turns = JSON.parse(turns.value);
      } catch (err) {
        throw { message: `Turns are not valid JSON: ${/** @type {SyntaxError} */ (err).message}`, errors: [{ field: 'turns', message: 'Not valid JSON.' }] };
      }
    }
    if (systemPrompt.value.trim()) out.system_prompt = systemPrompt.value;
    if (session.value.trim()) out.session_id = session.value.trim();
    return out;
  };
  return { fieldset, read };
}
