// An experiment: two ended batch runs over the same dataset side by side. Per evaluator the two
// means, the difference B - A with its 95% paired-bootstrap interval, wins and ties, and the items
// that moved most, each linked to both of its logs.
/** @import { EvaluatorComparison, RunBrief } from '../lib/types.js' */
import { api } from '../lib/api.js';
import { h } from '../lib/dom.js';
import { badge, fmtScore, link, pageHeading, scoreBar, tableWrap } from '../lib/ui.js';
import { nameOf, statusBadge, targetName } from './batches.js';

const signed = (/** @type {number | null | undefined} */ n) => (n === null || n === undefined ? '—' : `${n >= 0 ? '+' : ''}${n.toFixed(3)}`);
/** @type {Record<EvaluatorComparison['verdict'], [text: string, kind: string]>} */
const VERDICT = { improved: ['B is better', 'good'], regressed: ['B is worse', 'bad'], unclear: ['no clear change', ''], no_pairs: ['no pairs', ''] };

/**
 * @param {import('../lib/types.js').PageElement} page
 * @param {import('../lib/types.js').PageContext} ctx
 */
export default async function batchCompare(page, { query }) {
  const a = query.get('a');
  const b = query.get('b');
  if (!a || !b) {
    page.append(pageHeading('Compare runs'), h('p', {}, 'Choose two runs to compare on the ', link('/app/batches', 'batch runs'), ' page.'));
    return;
  }
  /** @type {import('../lib/types.js').ExperimentComparison} */
  const c = await api('GET', '/v1/judges/batch-executions/compare/', { query: { a, b, top: 20 } });
  // issue 26 item 6: names of the judge (or evaluator) and dataset, their ids on hover.
  const named = async (/** @type {RunBrief} */ r) => ({ target: await targetName(r), dataset: r.dataset_id ? await nameOf('datasets', r.dataset_id) : null });
  const [namesA, namesB] = await Promise.all([named(c.a), named(c.b)]);
  const run = (/** @type {string} */ label, /** @type {RunBrief} */ r, /** @type {{ target: string, dataset: string | null }} */ n) =>
    h(
      'section',
      { class: 'card', 'aria-label': `Run ${label}` },
      h('h2', {}, `${label === 'A' ? 'Baseline' : 'Candidate'} (${label})`),
      h('p', {}, link(`/app/batches/${encodeURIComponent(r.id)}`, `Run of ${n.target}`, { title: r.id }), ' ', statusBadge(r.status)),
      h(
        'p',
        { class: 'muted' },
        r.judge_id
          ? [link(`/app/judges/${encodeURIComponent(r.judge_id)}`, `judge ${n.target}`, { title: r.judge_id }), r.judge_version ? ` v${r.judge_version}` : '']
          : link(`/app/evaluators/${encodeURIComponent(/** @type {string} */ (r.evaluator_id))}`, `evaluator ${n.target}`, { title: r.evaluator_id }), // a judge's run or else an evaluator's
        ' · ',
        r.dataset_id ? link(`/app/datasets/${encodeURIComponent(r.dataset_id)}`, `dataset ${n.dataset}`, { title: r.dataset_id }) : 'given items',
        ` · ${r.total} rows`,
      ),
    );
  const line = (/** @type {string} */ name, /** @type {Omit<EvaluatorComparison, 'evaluator_id' | 'evaluator_name'>} */ e, /** @type {HTMLTableCellElement} */ head) =>
    h(
      'tr',
      {},
      head,
      h('td', { class: 'num' }, String(e.n)),
      h('td', {}, scoreBar(e.mean_a, `${name} mean A`)),
      h('td', {}, scoreBar(e.mean_b, `${name} mean B`)),
      h('td', { class: 'num' }, signed(e.delta)),
      h('td', { class: 'num' }, e.ci_low === null ? '—' : `[${signed(e.ci_low)}, ${signed(e.ci_high)}]`),
      h('td', { class: 'num' }, `${e.wins_a} / ${e.wins_b} / ${e.ties}`),
      h('td', {}, badge(...VERDICT[e.verdict])),
    );
  page.append(
    pageHeading('Experiment: A against B'),
    h('div', { class: 'side-by-side' }, run('A', c.a, namesA), run('B', c.b, namesB)),
    h(
      'p',
      { class: 'lead' },
      `${c.pairs} pairs by ${c.paired_by === 'item_id' ? 'dataset item' : 'position'}`,
      c.unpaired_a || c.unpaired_b ? ` (unpaired: ${c.unpaired_a} in A, ${c.unpaired_b} in B)` : '',
      `. Delta is B − A, with a ${Math.round(c.confidence * 100)}% paired-bootstrap interval over ${c.resamples} resamples: an interval wholly above or below 0 is a clear change.`,
    ),
    tableWrap(
      h(
        'table',
        { 'aria-label': 'Per-evaluator comparison' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ['Evaluator', 'Pairs', 'Mean A', 'Mean B', 'Delta', '95% interval', 'A / B / tie', 'Verdict'].map((t) => h('th', { scope: 'col' }, t)),
          ),
        ),
        h(
          'tbody',
          {},
          c.evaluators.map((e) => line(e.evaluator_name, e, h('th', { scope: 'row' }, link(`/app/evaluators/${encodeURIComponent(e.evaluator_id)}`, e.evaluator_name)))),
          line('Row score', c.overall, h('th', { scope: 'row' }, h('em', {}, 'Row score'))),
        ),
      ),
    ),
    c.only_in_a.length || c.only_in_b.length
      ? h(
          'p',
          { class: 'muted' },
          `Not compared (in one run only): ${[...c.only_in_a.map((e) => `${e.evaluator_name} (A)`), ...c.only_in_b.map((e) => `${e.evaluator_name} (B)`)].join(', ')}.`,
        )
      : null,
    h('h2', {}, 'Items that moved most'),
    c.moved.length
      ? tableWrap(
          h(
            'table',
            { 'aria-label': 'Items that moved most' },
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                ['Item', 'Score A', 'Score B', 'Delta', 'Logs'].map((t) => h('th', { scope: 'col' }, t)),
              ),
            ),
            h(
              'tbody',
              {},
              c.moved.map((m) =>
                h(
                  'tr',
                  {},
                  h('td', {}, m.item_id ? h('code', {}, m.item_id) : `item ${m.position_a}`),
                  h('td', { class: 'num' }, fmtScore(m.score_a)),
                  h('td', { class: 'num' }, fmtScore(m.score_b)),
                  h('td', { class: 'num' }, signed(m.delta)),
                  h(
                    'td',
                    {},
                    m.execution_log_id_a ? link(`/app/logs/${encodeURIComponent(m.execution_log_id_a)}`, 'log A') : '—',
                    ' · ',
                    m.execution_log_id_b ? link(`/app/logs/${encodeURIComponent(m.execution_log_id_b)}`, 'log B') : '—',
                  ),
                ),
              ),
            ),
          ),
        )
      : h('p', { class: 'empty' }, 'No item changed its score.'),
  );
}
