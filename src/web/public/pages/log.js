// One run in full: its inputs and every evaluator's score, justification, model, tokens, cost, latency.
// A comparison log (type comparison) shows each evaluator's preference and whether its two orders agreed.
import { annotationsSection } from '../lib/annotate.js';
/** @import { ComparisonRecord, EvaluatorResult, ExecutionLog } from '../lib/types.js' */
import { api } from '../lib/api.js';
import { conversationView } from '../lib/conversation.js';
import { h } from '../lib/dom.js';
import { jurySection } from '../lib/jurors.js';
import { consistencyBadge } from '../lib/compare-form.js';
import { badge, errorBox, fill, fmtCost, fmtInt, fmtMs, link, pageHeading, scoreBar, tableWrap, time } from '../lib/ui.js';

/**
 * @param {import('../lib/types.js').PageElement} page
 * @param {import('../lib/types.js').PageContext} ctx
 */
export default async function log(page, { params }) {
  /** @type {ExecutionLog} */
  const l = await api('GET', `/v1/execution-logs/${encodeURIComponent(params.id)}/`);
  const ofJudge = l.judge_id !== null;
  // A log names its judge, or else its evaluator.
  const subject = ofJudge
    ? link(`/app/judges/${encodeURIComponent(/** @type {string} */ (l.judge_id))}`, l.judge_name)
    : link(`/app/evaluators/${encodeURIComponent(/** @type {string} */ (l.evaluator_id))}`, l.evaluator_name);
  const version = ofJudge ? l.judge_version : l.evaluator_version;
  const cmp = l.type === 'comparison' ? l.comparison : null;
  const name = ofJudge ? l.judge_name : l.evaluator_name;

  const annotateArea = h('div');
  const text = (/** @type {string} */ label, /** @type {string | null | undefined} */ value) =>
    value ? [h('h3', {}, label), h('pre', { class: 'text', tabindex: '0' }, value)] : null;

  page.append(
    pageHeading(cmp ? `Comparison with ${name}` : `Run of ${name}`),
    h(
      'dl',
      { class: 'facts' },
      h('dt', {}, ofJudge ? 'Judge' : 'Evaluator'),
      h('dd', {}, subject, version ? h('span', { class: 'muted' }, ` version ${version}`) : null),
      h('dt', {}, 'When'),
      h('dd', {}, time(l.created_at)),
      cmp
        ? [
            h('dt', {}, 'Preference'),
            h(
              'dd',
              {},
              cmp.preference === 'tie' ? 'tie' : `response ${cmp.preference.toUpperCase()}`,
              h('span', { class: 'muted' }, ` (A ${cmp.wins_a} · B ${cmp.wins_b} · ties ${cmp.ties})`),
            ),
          ]
        : [h('dt', {}, 'Score'), h('dd', {}, scoreBar(l.score, 'Overall'))],
      h('dt', {}, 'Cost'),
      h('dd', {}, fmtCost(l.cost_usd)),
      h('dt', {}, 'Latency'),
      h('dd', {}, fmtMs(l.latency_ms)),
      h('dt', {}, 'Tags'),
      h('dd', {}, l.tags.length ? l.tags.map((t) => badge(t, 'tag')) : h('span', { class: 'muted' }, 'none')),
      l.user_id ? [h('dt', {}, 'User'), h('dd', {}, l.user_id)] : null,
      l.session_id ? [h('dt', {}, 'Session'), h('dd', {}, link(`/app/sessions/${encodeURIComponent(l.session_id)}`, l.session_id))] : null,
      // Online evaluation (issue 28): the judged span's trace, where this score shows beside its span.
      // Logs from before trace_id was a field, and backfill rows, carry it as a trace_id: tag.
      traceOf(l)
        ? [
            h('dt', {}, 'Trace'),
            h('dd', {}, link(`/app/traces/${encodeURIComponent(/** @type {string} */ (traceOf(l)))}`, 'Open the trace', { class: 'trace-link' }), ' ', h('code', {}, traceOf(l))),
            spanOf(l) ? [h('dt', {}, 'Span'), h('dd', {}, h('code', {}, spanOf(l)))] : null,
          ]
        : null,
      h('dt', {}, 'Run id'),
      h('dd', {}, h('code', {}, l.id)),
    ),
    cmp ? preferencesTable(l, cmp) : scoresTable(l),
    cmp ? ordersSection(l, cmp) : null,
    cmp ? null : jurySection(l.evaluator_results),
    // A person's verdict applies to a score: a comparison has none to correct.
    cmp ? null : annotateArea,
    h(
      'section',
      { 'aria-labelledby': 'inputs-title' },
      h('h2', { id: 'inputs-title' }, 'Inputs'),
      l.turns?.length
        ? [h('h3', {}, 'Conversation'), conversationView(l.turns, l.system_prompt)]
        : cmp
          ? [text('Request', l.request), text('Response A', l.response), text('Response B', cmp.response_b)]
          : [text('System prompt', l.system_prompt), text('Request', l.request), text('Response', l.response)],
      l.contexts?.length
        ? [
            h('h3', {}, 'Contexts'),
            h(
              'ol',
              { class: 'context-list' },
              l.contexts.map((c) => h('li', {}, h('pre', { class: 'text' }, c))),
            ),
          ]
        : null,
      text('Expected output', l.expected_output),
    ),
  );
  if (!cmp) await fill(annotateArea, () => annotationsSection(l));
}

const tagValue = (/** @type {ExecutionLog} */ l, /** @type {string} */ name) => l.tags.find((t) => t.startsWith(`${name}:`))?.slice(name.length + 1);
const traceOf = (/** @type {ExecutionLog} */ l) => l.trace_id ?? tagValue(l, 'trace_id');
const spanOf = (/** @type {ExecutionLog} */ l) => l.span_id ?? tagValue(l, 'span_id');

const resultCells = (/** @type {EvaluatorResult} */ r) => [
  h('td', { class: 'justification' }, r.error ? errorBox({ message: r.error }) : null, r.justification ?? ''),
  h('td', { class: 'model' }, r.model ?? '—'),
  h('td', { class: 'num' }, `${fmtInt(r.input_tokens)} / ${fmtInt(r.output_tokens)}`),
  h('td', { class: 'num' }, fmtCost(r.cost_usd)),
  h('td', { class: 'num' }, fmtMs(r.latency_ms)),
];
const evaluatorCell = (/** @type {EvaluatorResult} */ r) =>
  h('th', { scope: 'row' }, link(`/app/evaluators/${encodeURIComponent(r.evaluator_id)}`, r.evaluator_name), h('span', { class: 'muted' }, ` v${r.evaluator_version}`));
const resultsSection = (/** @type {string} */ title, /** @type {string} */ label, /** @type {string[]} */ headers, /** @type {HTMLTableRowElement[]} */ rows) =>
  h(
    'section',
    { 'aria-labelledby': 'scores-title' },
    h('h2', { id: 'scores-title' }, title),
    tableWrap(
      h(
        'table',
        { 'aria-label': label, class: 'results-table' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            headers.map((t) => h('th', { scope: 'col' }, t)),
          ),
        ),
        h('tbody', {}, rows),
      ),
    ),
  );
const TAIL = ['Justification', 'Model', 'Tokens in / out', 'Cost', 'Latency'];

/**
 * The result's confidence and where it came from (docs/SURFACE.md): a stated one is a weak signal until calibrated.
 * @param {EvaluatorResult} r
 */
function confidenceNote(r) {
  if (typeof r.confidence !== 'number') return null;
  const source = r.grade_probabilities ? 'grade probabilities' : r.jurors ? 'jury agreement' : 'stated by the model';
  return h('div', { class: 'muted confidence' }, `confidence ${r.confidence.toFixed(2)} (${source})`);
}

/**
 * @param {ExecutionLog} l
 */
function scoresTable(l) {
  return resultsSection(
    'Scores',
    'Evaluator results',
    ['Evaluator', 'Score', ...TAIL],
    l.evaluator_results.map((r) => h('tr', {}, evaluatorCell(r), h('td', {}, scoreBar(r.score, r.evaluator_name), confidenceNote(r)), resultCells(r))),
  );
}

/**
 * Each evaluator's preference, with whether its two orders agreed (the comparison keeps them by evaluator id).
 * @param {ExecutionLog} l
 * @param {ComparisonRecord} cmp
 */
function preferencesTable(l, cmp) {
  const rows = l.evaluator_results.map((r) => {
    /** @type {Partial<ComparisonRecord['evaluators'][number]> & Pick<ComparisonRecord['evaluators'][number], 'preference' | 'consistent'>} */
    const c = cmp.evaluators.find((e) => e.evaluator_id === r.evaluator_id) ?? { preference: null, consistent: false };
    const preference = c.preference === null ? '—' : c.preference === 'tie' ? 'tie' : `prefers ${c.preference.toUpperCase()}`;
    return h('tr', {}, evaluatorCell(r), h('td', {}, preference), h('td', {}, consistencyBadge({ ...c, degenerate: c.degenerate ?? r.degenerate })), resultCells(r));
  });
  return resultsSection('Preferences', 'Evaluator preferences', ['Evaluator', 'Preference', 'Both orders', ...TAIL], rows);
}

/**
 * issue 26: each evaluator's two orders, with what each preferred and why (the table's justification points here).
 * @param {ExecutionLog} l
 * @param {ComparisonRecord} cmp
 */
function ordersSection(l, cmp) {
  const said = (/** @type {{ preference: string | null }} */ o) => (o.preference === null ? 'failed' : o.preference === 'tie' ? 'tie' : `prefers ${o.preference.toUpperCase()}`);
  const blocks = cmp.evaluators
    .filter((e) => e.orders?.length)
    .map((e) => {
      const name = l.evaluator_results.find((r) => r.evaluator_id === e.evaluator_id)?.evaluator_name ?? e.evaluator_id;
      return h(
        'div',
        { class: 'order-pair', 'data-evaluator': e.evaluator_id },
        h('h3', {}, name),
        h(
          'dl',
          { class: 'facts' },
          e.orders.map((o) => [
            h('dt', {}, `Response ${o.shown_first.toUpperCase()} shown first`),
            h('dd', {}, h('strong', {}, said(o)), o.error ? errorBox({ message: o.error }) : null, o.justification ? h('p', {}, o.justification) : null),
          ]),
        ),
      );
    });
  return blocks.length ? h('section', { 'aria-labelledby': 'orders-title' }, h('h2', { id: 'orders-title' }, "Each order's reasoning"), blocks) : null;
}
