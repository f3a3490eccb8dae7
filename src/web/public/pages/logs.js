// Execution logs: filters kept in the address (so back, forward and links work), pages by cursor, and
// the score-over-time chart when one judge is chosen.
/** @import { ListPage } from '../lib/types.js' */
import { api } from '../lib/api.js';
import { scoreChart } from '../lib/chart.js';
import { clear, h } from '../lib/dom.js';
import { ownerLabels } from '../lib/owner.js';
import { badge, field, fill, fmtCost, fmtMs, link, pageHeading, scoreBar, select, showFormError, tableWrap, time } from '../lib/ui.js';

const FILTERS = ['judge_id', 'evaluator_id', 'session_id', 'trace_id', 'min_score', 'max_score', 'min_cost', 'max_cost', 'tags', 'date_from', 'date_to'];

/**
 * @param {import('../lib/types.js').PageElement} page
 * @param {import('../lib/types.js').PageContext} ctx
 */
export default async function logs(page, { app, query }) {
  const current = Object.fromEntries(FILTERS.map((k) => [k, query.get(k) ?? '']));
  const cursor = query.get('cursor') ?? undefined;
  // Page size: 50 unless the address says otherwise (kept across pages and filter changes).
  const limit = /^\d+$/.test(query.get('limit') ?? '') ? query.get('limit') : undefined;

  /** @type {[ListPage<import('../lib/types.js').Judge>, ListPage<import('../lib/types.js').Evaluator>]} */
  const [judges, evaluators] = await Promise.all([api('GET', '/v1/judges/', { query: { limit: 200 } }), api('GET', '/v1/evaluators/', { query: { limit: 200 } })]);
  const own = await app.ownProjectIds();
  const options = (/** @type {Array<{ id: string, name: string, project_id: string | null }>} */ items, /** @type {string} */ any, /** @type {string} */ selected) => {
    const label = ownerLabels(items, own); // issue 26 item 2: the owner where names are shared
    /** @type {Array<[string, string]>} */
    const list = [['', any], ...items.map((i) => /** @type {[string, string]} */ ([i.id, label.get(i.id)]))];
    if (selected && !items.some((i) => i.id === selected)) list.push([selected, selected]);
    return list;
  };
  const judgeSelect = select('judge_id', options(judges.results, 'Any judge', current.judge_id), current.judge_id);
  const evaluatorSelect = select('evaluator_id', options(evaluators.results, 'Any evaluator', current.evaluator_id), current.evaluator_id);
  const num = (/** @type {string} */ name) => h('input', { type: 'number', min: '0', max: '1', step: '0.01', inputmode: 'decimal', value: current[name] });
  const minScore = num('min_score');
  const maxScore = num('max_score');
  const cost = (/** @type {string} */ name) => h('input', { type: 'number', min: '0', step: 'any', inputmode: 'decimal', value: current[name] });
  const minCost = cost('min_cost');
  const maxCost = cost('max_cost');
  const tags = h('input', { type: 'text', value: current.tags, autocomplete: 'off' });
  const sessionId = h('input', { type: 'text', value: current.session_id, autocomplete: 'off' });
  const traceId = h('input', { type: 'text', value: current.trace_id, autocomplete: 'off', spellcheck: 'false' });
  const dateFrom = h('input', { type: 'date', value: current.date_from });
  const dateTo = h('input', { type: 'date', value: current.date_to });

  const form = h(
    'form',
    { class: 'filters log-filters', 'aria-label': 'Filter execution logs', novalidate: true },
    field({ label: 'Judge', name: 'judge_id' }, judgeSelect),
    field({ label: 'Evaluator', name: 'evaluator_id' }, evaluatorSelect),
    field({ label: 'Min score', name: 'min_score' }, minScore),
    field({ label: 'Max score', name: 'max_score' }, maxScore),
    field({ label: 'Min cost (USD)', name: 'min_cost' }, minCost),
    field({ label: 'Max cost (USD)', name: 'max_cost', hint: 'Per run, in US dollars.' }, maxCost),
    field({ label: 'Tags', name: 'tags', hint: 'Comma-separated; every tag must match.' }, tags),
    field({ label: 'Session', name: 'session_id', hint: current.session_id ? null : 'Exact session id.' }, sessionId),
    field({ label: 'Trace', name: 'trace_id', hint: current.trace_id ? null : 'OpenTelemetry trace id.' }, traceId),
    field({ label: 'From', name: 'date_from' }, dateFrom),
    field({ label: 'To', name: 'date_to', hint: 'Inclusive.' }, dateTo),
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Apply filters'), link('/app/logs', 'Clear', { class: 'button secondary' })),
    h('div', { class: 'form-error' }),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const params = new URLSearchParams();
    const values = {
      judge_id: judgeSelect.value,
      evaluator_id: evaluatorSelect.value,
      min_score: minScore.value,
      max_score: maxScore.value,
      min_cost: minCost.value,
      max_cost: maxCost.value,
      tags: tags.value
        .split(',')
        .map((t) => t.trim())
        .filter(Boolean)
        .join(','),
      session_id: sessionId.value.trim(),
      trace_id: traceId.value.trim(),
      date_from: dateFrom.value,
      date_to: dateTo.value,
    };
    for (const [k, v] of Object.entries(values)) if (v) params.set(k, v);
    if (limit) params.set('limit', limit);
    app.navigate(`/app/logs${params.size ? `?${params}` : ''}`);
  });

  const filterQuery = Object.fromEntries(Object.entries(current).filter(([, v]) => v));
  const pageQuery = limit ? { ...filterQuery, limit } : filterQuery;
  const tableArea = h('div');
  const chartArea = h('div');
  page.append(
    pageHeading(
      'Execution logs',
      current.session_id ? link(`/app/sessions/${encodeURIComponent(current.session_id)}`, 'This session, in order', { class: 'button secondary' }) : null,
      current.trace_id ? link(`/app/traces/${encodeURIComponent(current.trace_id)}`, 'This trace', { class: 'button secondary' }) : null,
    ),
    h('p', { class: 'lead' }, 'Every run of a judge or an evaluator, newest first, with the exact evaluator versions it used.'),
    form,
    current.judge_id ? h('section', { 'aria-labelledby': 'chart-title' }, h('h2', { id: 'chart-title' }, 'Score over time'), chartArea) : null,
    h('section', { 'aria-labelledby': 'runs-title' }, h('h2', { id: 'runs-title' }, 'Runs'), tableArea),
  );

  /** @type {import('../lib/types.js').ListPage<import('../lib/types.js').ExecutionLog>} */
  let data;
  try {
    data = await api('GET', '/v1/execution-logs/', { query: { ...filterQuery, limit: limit ?? 50, cursor } });
  } catch (err) {
    // A bad filter: show the problem beside the filters that caused it.
    showFormError(form, err);
    clear(tableArea).append(h('p', { class: 'muted' }, 'Fix the filters above to see runs.'));
    return;
  }
  if (!data.results.length) {
    clear(tableArea).append(
      h('p', { class: 'empty' }, cursor ? 'No more runs.' : Object.keys(filterQuery).length ? 'No run matches these filters.' : 'No runs yet: try a judge from its page.'),
    );
  } else {
    const tbody = h(
      'tbody',
      {},
      data.results.map((l) =>
        h(
          'tr',
          {},
          h('td', { class: 'nowrap' }, link(`/app/logs/${encodeURIComponent(l.id)}`, time(l.created_at))),
          h('td', {}, l.judge_id ? l.judge_name : l.evaluator_name, ' ', badge(l.type)),
          // A comparison has no score: its preference stands in the score column.
          h('td', {}, l.comparison ? (l.comparison.preference === 'tie' ? 'tie' : `prefers ${l.comparison.preference.toUpperCase()}`) : scoreBar(l.score)),
          h('td', { class: 'num' }, String(l.evaluator_results.length)),
          h('td', { class: 'num' }, fmtCost(l.cost_usd)),
          h('td', { class: 'num' }, fmtMs(l.latency_ms)),
          h(
            'td',
            {},
            l.tags.map((t) => badge(t, 'tag')),
          ),
        ),
      ),
    );
    clear(tableArea).append(
      tableWrap(
        h(
          'table',
          { 'aria-label': 'Execution logs' },
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              ['When', 'Judge or evaluator', 'Score', 'Evaluators', 'Cost', 'Latency', 'Tags'].map((t) => h('th', { scope: 'col' }, t)),
            ),
          ),
          tbody,
        ),
      ),
    );
  }
  const pager = h('nav', { class: 'pager', 'aria-label': 'Pages' });
  const here = new URLSearchParams(pageQuery);
  if (cursor) pager.append(link(`/app/logs${here.size ? `?${here}` : ''}`, '← First page', { class: 'button secondary' }));
  if (data.next_cursor) {
    const next = new URLSearchParams({ ...pageQuery, cursor: data.next_cursor });
    pager.append(link(`/app/logs?${next}`, 'Next page →', { class: 'button secondary', rel: 'next' }));
  }
  if (pager.children.length) tableArea.append(pager);

  if (current.judge_id) {
    await fill(chartArea, async () => {
      const all = await api('GET', '/v1/execution-logs/', { query: { ...filterQuery, limit: 200 } });
      const name = judges.results.find((/** @type {{ id: string; }} */ j) => j.id === current.judge_id)?.name ?? current.judge_id;
      return scoreChart(all.results, { caption: `Scores of ${name} over time, one line per evaluator` }) ?? h('p', { class: 'muted' }, 'No scored runs to chart.');
    });
  }
}
