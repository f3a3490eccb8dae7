// The "compare two responses" form of the judge page's try-it: request, response A, response B
// (and contexts / expected output when an evaluator needs them) in; each evaluator's preference,
// whether the two orders agreed, and its justification out (POST /v1/judges/{id}/compare/).
import { api } from './api.js';
import { contextsField } from './contexts-field.js';
import { h } from './dom.js';
import { badge, errorBox, field, fmtCost, fmtInt, fmtMs, link, runFromForm, showFormError } from './ui.js';

/** @import { ComparisonEvaluatorResult, ComparisonInput, ComparisonResult, Evaluator } from './types.js' */

const names = (/** @type {Evaluator[]} */ list) => list.map((e) => e.name).join(', ');
const PREFERS = { a: 'prefers A', b: 'prefers B', tie: 'tie' };

/** @param {{ evaluators: Evaluator[], endpoint: string, onRun?: (result: ComparisonResult) => void }} opts */
export function compareForm({ evaluators, endpoint, onRun }) {
  const needContexts = evaluators.filter((e) => e.requires_contexts);
  const needExpected = evaluators.filter((e) => e.requires_expected_output);
  const request = h('textarea', { rows: '3' });
  const responseA = h('textarea', { rows: '5' });
  const responseB = h('textarea', { rows: '5' });
  const contexts = contextsField(needContexts); // issue 26 item 15: one box per context, as in score mode
  const expected = h('textarea', { rows: '3' });
  const submit = h('button', { type: 'submit' }, 'Compare responses');
  const results = h('div', { class: 'results', 'aria-live': 'polite' });
  const form = h(
    'form',
    { class: 'stack try-it compare-form', novalidate: true },
    field({ label: 'Request', name: 'request', hint: 'The input both responses answer.' }, request),
    field({ label: 'Response A', name: 'response_a', hint: 'The first response to compare.' }, responseA),
    field({ label: 'Response B', name: 'response_b', hint: 'The second response to compare.' }, responseB),
    contexts.fieldset,
    needExpected.length ? field({ label: 'Expected output', name: 'expected_output', hint: `Required by ${names(needExpected)}: a reference answer.` }, expected) : null,
    h('div', { class: 'actions' }, submit),
    h('div', { class: 'form-error' }),
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    /** @type {Array<[string, HTMLTextAreaElement]>} */
    const both = [
      ['response_a', responseA],
      ['response_b', responseB],
    ];
    const missing = both.filter(([, t]) => !t.value.trim());
    if (missing.length) {
      showFormError(form, { message: 'Write both responses to compare.', errors: missing.map(([f]) => ({ field: f, message: 'Required.' })) });
      return;
    }
    /** @type {Partial<ComparisonInput> & { response_a: string, response_b: string }} */
    const body = { response_a: responseA.value, response_b: responseB.value };
    if (request.value.trim()) body.request = request.value;
    const list = contexts.read();
    if (list.length) body.contexts = list;
    if (expected.value.trim()) body.expected_output = expected.value;
    await runFromForm(form, submit, results, {
      busyText: 'Comparing…',
      waiting: 'Comparing: each evaluator is asked twice, with the responses swapped…',
      send: () => /** @type {Promise<ComparisonResult>} */ (api('POST', endpoint, { body })),
      render: renderComparison,
      onRun,
    });
  });
  return h('div', {}, form, results);
}

/**
 * How one evaluator's two orders came out, as a badge.
 * @param {Pick<ComparisonEvaluatorResult, 'preference' | 'degenerate' | 'consistent'>} r

 */
export function consistencyBadge(r) {
  if (r.preference === null) return badge('failed', 'bad');
  if (r.degenerate) return badge('degenerate response', 'warn');
  return r.consistent ? badge('consistent', 'good') : badge('inconsistent: the orders disagreed', 'warn');
}

/**
 * @param {ComparisonResult} result
 */
export function renderComparison(result) {
  const overall = result.preference === 'tie' ? 'Tie' : `Response ${result.preference.toUpperCase()} is preferred`;
  return h(
    'section',
    { class: 'result stack', 'aria-labelledby': 'comparison-title' },
    h('h3', { id: 'comparison-title', tabindex: '-1' }, overall),
    h(
      'p',
      { class: 'overall' },
      `A ${result.wins_a} · B ${result.wins_b} · ties ${result.ties} · ${fmtCost(result.cost_usd)} · ${fmtMs(result.latency_ms)} `,
      link(`/app/logs/${encodeURIComponent(result.execution_log_id)}`, 'Open the comparison log'),
    ),
    h(
      'ul',
      { class: 'scores' },
      result.evaluator_results.map((r) =>
        h(
          'li',
          {},
          h(
            'article',
            { class: 'eval-result' },
            h(
              'div',
              { class: 'eval-head' },
              h('h4', {}, link(`/app/evaluators/${encodeURIComponent(r.evaluator_id)}`, r.evaluator_name)),
              h('span', { class: 'preference' }, r.preference ? PREFERS[r.preference] : '—'),
              consistencyBadge(r),
            ),
            r.error ? errorBox({ message: r.error }) : null,
            r.justification ? h('p', { class: 'justification' }, r.justification) : null,
            h(
              'p',
              { class: 'meta muted' },
              [r.model ?? 'no model', `${fmtInt(r.input_tokens)} in / ${fmtInt(r.output_tokens)} out tokens`, fmtCost(r.cost_usd), fmtMs(r.latency_ms)].join(' · '),
            ),
          ),
        ),
      ),
    ),
  );
}
