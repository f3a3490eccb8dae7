// One batch run: live progress (the status endpoint polled while it runs), the per-evaluator
// summary, and its rows in item order, each linked to its execution log.
import { api } from '../lib/api.js';
import { clear, h } from '../lib/dom.js';
import { button, confirmDialog, errorBox, fmtCost, fmtScore, link, pageHeading, scoreBar, showMore, tableWrap, time } from '../lib/ui.js';
import { nameOf, statusBadge } from './batches.js';

const ENDED = new Set(['completed', 'failed', 'cancelled']);
const POLL_MS = 1000;

/**
 * @param {import('../lib/types.js').PageElement} page
 * @param {import('../lib/types.js').PageContext} ctx
 */
export default async function batch(page, { params, isCurrent }) {
  const path = `/v1/judges/batch-executions/${encodeURIComponent(params.id)}/`;
  /** @type {import('../lib/types.js').BatchExecution} */
  let b = await api('GET', path);
  const judge = b.judge_id ? await api('GET', `/v1/judges/${encodeURIComponent(b.judge_id)}/`).catch(() => null) : null;
  // The dataset by its name (issue 26); its id on hover.
  const datasetName = b.dataset_id ? await nameOf('datasets', b.dataset_id) : null;
  const evaluatorName = b.evaluator_id ? await nameOf('evaluators', b.evaluator_id) : null;

  const facts = h('dl', { class: 'facts' });
  const progressArea = h('div', { 'aria-live': 'polite' });
  const summaryArea = h('div');
  const resultsArea = h('div');
  const actionError = h('div');
  const cancel = button('Cancel run', {
    class: 'danger',
    onclick: async () => {
      const ok = await confirmDialog({
        title: 'Cancel this batch run?',
        message: 'Rows not started yet are never scored; rows already scored are kept.',
        confirmText: 'Cancel run',
      });
      if (!ok) return;
      try {
        b = await api('POST', `${path}cancel/`, { body: {} });
        show();
      } catch (err) {
        clear(actionError).append(errorBox(err));
        // It ended meanwhile (409): show it as it is now, without the button.
        b = await api('GET', path).catch(() => b);
        show();
      }
    },
  });

  function show() {
    const finished = b.done + b.failed;
    clear(facts).append(
      h('dt', {}, 'Status'),
      h('dd', { 'data-status': b.status }, statusBadge(b.status), b.error ? h('span', { class: 'muted' }, ` ${b.error}`) : null),
      h('dt', {}, b.judge_id ? 'Judge' : 'Evaluator'),
      h(
        'dd',
        {},
        b.judge_id
          ? link(`/app/judges/${encodeURIComponent(b.judge_id)}`, judge?.name ?? b.judge_id)
          : link(`/app/evaluators/${encodeURIComponent(/** @type {string} */ (b.evaluator_id))}`, evaluatorName ?? b.evaluator_id, { title: b.evaluator_id }), // a judge's run or else an evaluator's
        b.judge_version ? h('span', { class: 'muted' }, ` version ${b.judge_version}`) : null,
      ),
      h('dt', {}, 'Dataset'),
      h(
        'dd',
        {},
        b.dataset_id
          ? link(`/app/datasets/${encodeURIComponent(b.dataset_id)}`, datasetName ?? b.dataset_id, { title: b.dataset_id })
          : h('span', { class: 'muted' }, 'items given in the request'),
      ),
      h('dt', {}, 'Created'),
      h('dd', {}, time(b.created_at)),
      h('dt', {}, 'Finished'),
      h('dd', {}, time(b.finished_at, ENDED.has(b.status) ? '—' : 'not yet')),
      h('dt', {}, 'Cost'),
      h('dd', {}, fmtCost(b.cost_usd)),
      // Issue 32: a provider_batch run shows where each provider batch is (polled with the run).
      ...(b.mode === 'provider_batch'
        ? [
            h('dt', {}, 'Model calls'),
            h(
              'dd',
              { 'data-provider-batches': '' },
              'Provider batch API (half price). ',
              (b.provider_batches ?? []).length
                ? /** @type {NonNullable<typeof b.provider_batches>} */ (b.provider_batches).map((p, i) =>
                    h('span', {}, i ? ', ' : '', h('code', {}, p.id), ` ${p.status.replace('_', ' ')} (${p.requests} calls)`),
                  )
                : h('span', { class: 'muted' }, 'not submitted yet'),
            ),
          ]
        : []),
      h('dt', {}, 'Run id'),
      h('dd', {}, h('code', {}, b.id)),
    );
    const pct = b.total ? Math.floor((finished / b.total) * 100) : 100;
    clear(progressArea).append(
      h('progress', { max: String(b.total || 1), value: String(finished), 'aria-label': 'Rows finished' }),
      h(
        'p',
        { class: 'progress-text' },
        `${finished} of ${b.total} rows finished (${pct}%)`,
        b.failed ? `, ${b.failed} failed` : '',
        ENDED.has(b.status) ? '.' : ' — updating live.',
      ),
    );
    cancel.hidden = ENDED.has(b.status);
    clear(summaryArea).append(
      b.summary.length
        ? tableWrap(
            h(
              'table',
              { 'aria-label': 'Per-evaluator summary' },
              h(
                'thead',
                {},
                h(
                  'tr',
                  {},
                  ['Evaluator', 'Scored', 'Mean', 'Min', 'Max', 'Errors'].map((t) => h('th', { scope: 'col' }, t)),
                ),
              ),
              h(
                'tbody',
                {},
                b.summary.map((e) =>
                  h(
                    'tr',
                    {},
                    h('th', { scope: 'row' }, link(`/app/evaluators/${encodeURIComponent(e.evaluator_id)}`, e.evaluator_name)),
                    h('td', { class: 'num' }, String(e.n)),
                    h('td', {}, scoreBar(e.mean, `${e.evaluator_name} mean`)),
                    h('td', { class: 'num' }, fmtScore(e.min)),
                    h('td', { class: 'num' }, fmtScore(e.max)),
                    h('td', { class: 'num' }, String(e.errors)),
                  ),
                ),
              ),
            ),
          )
        : h('p', { class: 'empty' }, 'No row scored yet.'),
    );
  }

  /**
   * @param {string} [cursor] the next page's cursor; none for the first page
   */
  async function loadResults(cursor) {
    /** @type {import('../lib/types.js').ListPage<import('../lib/types.js').BatchRow>} */
    const data = await api('GET', `${path}results/`, { query: { limit: 50, cursor } });
    let tbody = /** @type {HTMLTableSectionElement} */ (resultsArea.querySelector('tbody')); // a later page adds to the first page's table
    if (!cursor) {
      if (!data.results.length) {
        clear(resultsArea).append(h('p', { class: 'empty' }, 'No rows yet.'));
        return;
      }
      const names = b.summary.map((e) => e.evaluator_name);
      tbody = h('tbody');
      clear(resultsArea).append(
        tableWrap(
          h(
            'table',
            { 'aria-label': 'Rows' },
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                ['#', 'Item', 'Score', ...names, 'Log'].map((t) => h('th', { scope: 'col' }, t)),
              ),
            ),
            tbody,
          ),
        ),
      );
    }
    for (const r of data.results) {
      const byEvaluator = new Map(r.evaluator_results.map((e) => [e.evaluator_id, e]));
      tbody.append(
        h(
          'tr',
          { 'data-position': String(r.position) },
          h('td', { class: 'num' }, String(r.position + 1)),
          h('td', {}, r.item_id ? h('code', {}, r.item_id) : `item ${r.index ?? r.position}`),
          h('td', {}, r.error && r.score === null ? errorBox({ message: r.error }) : scoreBar(r.score, `Row ${r.position + 1}`)),
          b.summary.map((e) => h('td', { class: 'num' }, fmtScore(byEvaluator.get(e.evaluator_id)?.score))),
          h(
            'td',
            {},
            r.execution_log_id
              ? link(`/app/logs/${encodeURIComponent(r.execution_log_id)}`, 'View log', { 'aria-label': `Log of row ${r.position + 1}` })
              : h('span', { class: 'muted' }, '—'),
          ),
        ),
      );
    }
    showMore(resultsArea, 'Show more rows', data.next_cursor, loadResults);
  }

  // Live progress: poll while the run is going and this page is the one shown.
  async function poll() {
    if (!isCurrent() || ENDED.has(b.status)) return;
    try {
      b = await api('GET', path);
    } catch (err) {
      clear(actionError).append(errorBox(err));
    }
    if (!isCurrent()) return;
    show();
    // The rows follow the counters while the run goes on (issue 26), until a reader asks for more
    // than the first page: then they are left alone until the end.
    const shown = resultsArea.querySelectorAll('tbody tr').length;
    if (ENDED.has(b.status) || shown < 50) await loadResults().catch((err) => clear(resultsArea).append(errorBox(err)));
    if (!ENDED.has(b.status)) setTimeout(poll, POLL_MS);
  }

  page.append(
    pageHeading(`Batch run${judge ? ` of ${judge.name}` : ''}`, link(`/app/batches`, 'All runs', { class: 'button secondary' }), cancel),
    actionError,
    facts,
    progressArea,
    h('h2', {}, 'Per-evaluator summary'),
    summaryArea,
    h('h2', {}, 'Rows'),
    resultsArea,
  );
  show();
  await loadResults();
  setTimeout(poll, POLL_MS);
}
