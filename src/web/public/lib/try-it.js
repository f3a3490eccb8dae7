// The "try it" form: request, response (or a conversation), contexts and expected output in; each
// evaluator's score as a bar with its justification out. Used by the judge page and the evaluator page.
import { api } from './api.js';
import { attachmentsField } from './attachments-field.js';
import { contextsField } from './contexts-field.js';
import { conversationFields } from './conversation.js';
import { h } from './dom.js';
import { errorBox, field, fmtCost, fmtInt, fmtMs, link, runFromForm, scoreBar, showFormError } from './ui.js';

/** @import { Evaluator, EvaluatorResult, ExecutionInput, ExecutionResult } from './types.js' */

const names = (/** @type {Evaluator[]} */ list) => list.map((e) => e.name).join(', ');

/** @param {{ evaluators: Evaluator[], endpoint: string, submitText?: string, onRun?: (result: ExecutionResult) => void }} opts */
export function tryItForm({ evaluators, endpoint, submitText, onRun }) {
  const needContexts = evaluators.filter((e) => e.requires_contexts);
  const needExpected = evaluators.filter((e) => e.requires_expected_output);

  const request = h('textarea', { rows: '3' });
  const response = h('textarea', { rows: '5' });
  const expected = h('textarea', { rows: '3' });
  const tags = h('input', { type: 'text', autocomplete: 'off', placeholder: 'e.g. web, smoke-test' });

  const contexts = contextsField(needContexts); // issue 26 item 15: shared with compare mode

  const conversation = conversationFields();
  const attachments = attachmentsField(); // h-attach
  const submit = h('button', { type: 'submit' }, submitText);
  const results = h('div', { class: 'results', 'aria-live': 'polite' });
  const form = h(
    'form',
    { class: 'stack try-it', novalidate: true },
    field({ label: 'Request', name: 'request', hint: 'The input that prompted the response (recommended).' }, request),
    field({ label: 'Response', name: 'response', hint: 'The LLM output to evaluate (or give a conversation below).' }, response),
    // issue 26 item 15: the contexts (required by some evaluators) before the optional conversation.
    contexts.fieldset,
    conversation.fieldset,
    field(
      {
        label: 'Expected output',
        name: 'expected_output',
        hint: needExpected.length ? `Required by ${names(needExpected)}: a reference answer.` : 'Optional: a reference answer.',
      },
      expected,
    ),
    attachments.fieldset,
    field({ label: 'Tags', name: 'tags', hint: 'Comma-separated labels stored on the execution log, for filtering.' }, tags),
    h('div', { class: 'actions' }, submit),
    h('div', { class: 'form-error' }),
  );

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    /** @type {Partial<ExecutionInput>} */
    let body;
    try {
      body = conversation.read();
    } catch (err) {
      showFormError(form, err);
      return;
    }
    if (!body.turns && !response.value.trim()) {
      showFormError(form, { message: 'Write the response to evaluate, or give a conversation as turns.', errors: [{ field: 'response', message: 'Required.' }] });
      return;
    }
    // Request and response go only when written: the server refuses them beside turns, naming both.
    if (response.value.trim()) body.response = response.value;
    if (request.value.trim()) body.request = request.value;
    const contextList = contexts.read();
    if (contextList.length) body.contexts = contextList;
    if (expected.value.trim()) body.expected_output = expected.value;
    const tagList = tags.value
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean);
    if (tagList.length) body.tags = tagList;
    await runFromForm(form, submit, results, {
      busyText: 'Running…',
      waiting: 'Scoring: each evaluator asks the judge model…',
      send: async () => {
        const ids = await attachments.upload();
        if (ids.length) body.attachments = ids;
        return /** @type {Promise<ExecutionResult>} */ (api('POST', endpoint, { body }));
      },
      render: renderResult,
      onRun,
    });
  });

  return h('div', {}, form, results);
}

/**
 * @param {ExecutionResult} result
 */
export function renderResult(result) {
  return h(
    'section',
    { class: 'result stack', 'aria-labelledby': 'result-title' },
    h('h3', { id: 'result-title', tabindex: '-1' }, 'Result'),
    h(
      'div',
      { class: 'overall' },
      h('span', { class: 'label' }, 'Overall'),
      scoreBar(result.score, 'Overall'),
      h('span', { class: 'muted' }, `${fmtCost(result.cost_usd)} · ${fmtMs(result.latency_ms)}`),
      link(`/app/logs/${encodeURIComponent(result.execution_log_id)}`, 'Open the execution log'),
    ),
    h(
      'ul',
      { class: 'scores' },
      result.evaluator_results.map((r) => h('li', {}, evaluatorResult(r))),
    ),
  );
}

/**
 * @param {EvaluatorResult} r

 */
export function evaluatorResult(r) {
  return h(
    'article',
    { class: 'eval-result' },
    h(
      'div',
      { class: 'eval-head' },
      h('h4', {}, link(`/app/evaluators/${encodeURIComponent(r.evaluator_id)}`, r.evaluator_name), h('span', { class: 'muted' }, ` v${r.evaluator_version}`)),
      scoreBar(r.score, r.evaluator_name),
    ),
    r.error ? errorBox({ message: r.error }) : null,
    r.justification ? h('p', { class: 'justification' }, r.justification) : null,
    h(
      'p',
      { class: 'meta muted' },
      [r.model ?? 'no model', `${fmtInt(r.input_tokens)} in / ${fmtInt(r.output_tokens)} out tokens`, fmtCost(r.cost_usd), fmtMs(r.latency_ms)].join(' · '),
    ),
  );
}
