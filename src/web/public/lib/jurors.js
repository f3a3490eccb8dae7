// A jury's jurors on the log page: for every evaluator result with `jurors`, a small table of each
// juror's score, justification, tokens, cost and latency (a failed juror shows its error), headed by
// the aggregate and the spread (highest minus lowest juror score), so disagreement is visible.
import { h } from './dom.js';
import { errorBox, fmtCost, fmtInt, fmtMs, scoreBar, tableWrap } from './ui.js';

const fmtSpread = (/** @type {number | null | undefined} */ spread) => (spread === null || spread === undefined ? '—' : spread.toFixed(2));

/**
 * @param {import('./types.js').EvaluatorResult & { jurors: import('./types.js').JurorResult[] }} r a result with a jury
 */
function juryTable(r) {
  const label = `Jurors of ${r.evaluator_name}`;
  return h(
    'div',
    { class: 'jury' },
    h('h3', {}, label, h('span', { class: 'muted' }, ` · spread ${fmtSpread(r.spread)}${(r.spread ?? 0) >= 0.3 ? ' (the jurors disagree)' : ''}`)),
    tableWrap(
      h(
        'table',
        { 'aria-label': label, class: 'results-table jurors-table' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ['Juror', 'Score', 'Justification', 'Tokens in / out', 'Cost', 'Latency'].map((t) => h('th', { scope: 'col' }, t)),
          ),
        ),
        h(
          'tbody',
          {},
          r.jurors.map((j) =>
            h(
              'tr',
              {},
              h('th', { scope: 'row', class: 'model' }, j.model),
              h('td', {}, j.error ? 'failed' : j.not_applicable ? 'not applicable' : scoreBar(j.score, `${j.model} on ${r.evaluator_name}`)),
              h('td', { class: 'justification' }, j.error ? errorBox({ message: j.error }) : null, j.justification ?? ''),
              h('td', { class: 'num' }, `${fmtInt(j.input_tokens)} / ${fmtInt(j.output_tokens)}`),
              h('td', { class: 'num' }, fmtCost(j.cost_usd)),
              h('td', { class: 'num' }, fmtMs(j.latency_ms)),
            ),
          ),
        ),
      ),
    ),
  );
}

/**
 * The section of jury tables, or null when no result of the run had a jury.
 * @param {import('./types.js').EvaluatorResult[]} results
 */
export function jurySection(results) {
  const juries = /** @type {Array<import('./types.js').EvaluatorResult & { jurors: import('./types.js').JurorResult[] }>} */ (
    results.filter((r) => Array.isArray(r.jurors) && r.jurors.length)
  );

  if (!juries.length) return null;
  return h('section', { 'aria-labelledby': 'jurors-title' }, h('h2', { id: 'jurors-title' }, 'Jurors'), juries.map(juryTable));
}
