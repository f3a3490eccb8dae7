// Received traces (SPEC section 14): newest first, filtered by service, span name and whether they
// have evaluation results; the filters live in the address so back, forward and links keep them.
import { api } from '../lib/api.js';
import { clear, h } from '../lib/dom.js';
import { badge, field, link, pageHeading, select, showFormError, tableWrap, time } from '../lib/ui.js';

const FILTERS = ['service', 'span_name', 'has_evaluation'];

/**
 * @param {import('../lib/types.js').PageElement} page
 * @param {import('../lib/types.js').PageContext} ctx
 */
export default async function traces(page, { app, query }) {
  const current = Object.fromEntries(FILTERS.map((k) => [k, query.get(k) ?? '']));
  const cursor = query.get('cursor') ?? undefined;
  const service = h('input', { type: 'text', value: current.service, autocomplete: 'off' });
  const spanName = h('input', { type: 'text', value: current.span_name, autocomplete: 'off' });
  const evaluated = select(
    'has_evaluation',
    [
      ['', 'Any'],
      ['true', 'With evaluations'],
      ['false', 'Without evaluations'],
    ],
    current.has_evaluation,
  );
  const form = h(
    'form',
    { class: 'filters', 'aria-label': 'Filter traces', novalidate: true },
    field({ label: 'Service', name: 'service', hint: 'Exact service.name.' }, service),
    field({ label: 'Span name', name: 'span_name', hint: 'Any span of the trace.' }, spanName),
    field({ label: 'Evaluations', name: 'has_evaluation' }, evaluated),
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Apply filters'), link('/app/traces', 'Clear', { class: 'button secondary' })),
    h('div', { class: 'form-error' }),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const params = new URLSearchParams();
    for (const [k, v] of [
      ['service', service.value.trim()],
      ['span_name', spanName.value.trim()],
      ['has_evaluation', evaluated.value],
    ])
      if (v) params.set(k, v);
    app.navigate(`/app/traces${params.size ? `?${params}` : ''}`);
  });

  const filterQuery = Object.fromEntries(Object.entries(current).filter(([, v]) => v));
  const tableArea = h('div');
  page.append(
    pageHeading('Traces', link('/app/rules', 'Evaluation rules', { class: 'button secondary' })),
    h('p', { class: 'lead' }, 'Traces your applications sent to /otel/v1/traces, newest first. Open one to see its spans, what would be judged, and the scores.'),
    form,
    h('section', { 'aria-labelledby': 'traces-title' }, h('h2', { id: 'traces-title' }, 'Traces'), tableArea),
  );

  /** @type {import('../lib/types.js').ListPage<import('../lib/types.js').TraceSummary>} */
  let data;
  try {
    data = await api('GET', '/v1/traces/', { query: { ...filterQuery, limit: 50, cursor } });
  } catch (err) {
    showFormError(form, err);
    clear(tableArea).append(h('p', { class: 'muted' }, 'Fix the filters above to see traces.'));
    return;
  }
  if (!data.results.length) {
    const none = cursor
      ? 'No more traces.'
      : Object.keys(filterQuery).length
        ? 'No trace matches these filters.'
        : 'No traces yet: point an OpenTelemetry exporter at /otel/v1/traces (see the README, "Send your traces").';
    clear(tableArea).append(h('p', { class: 'empty' }, none));
    return;
  }
  const rows = data.results.map((t) =>
    h(
      'tr',
      {},
      h('td', { class: 'nowrap' }, time(t.start_time)),
      h('th', { scope: 'row' }, link(`/app/traces/${encodeURIComponent(t.trace_id)}`, t.root_span_name ?? `trace ${t.trace_id.slice(0, 8)}…`)),
      h('td', {}, t.service_name ?? h('span', { class: 'muted' }, 'unknown')),
      h('td', { class: 'num' }, String(t.span_count)),
      h('td', { class: 'num' }, t.error_count ? badge(String(t.error_count), 'bad') : '0'),
      h('td', { class: 'num' }, t.evaluation_count ? badge(String(t.evaluation_count), 'good') : '0'),
    ),
  );
  clear(tableArea).append(
    tableWrap(
      h(
        'table',
        { 'aria-label': 'Traces' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ['Started', 'Root span', 'Service', 'Spans', 'Errors', 'Evaluations'].map((t) => h('th', { scope: 'col' }, t)),
          ),
        ),
        h('tbody', {}, rows),
      ),
    ),
  );
  const pager = h('nav', { class: 'pager', 'aria-label': 'Pages' });
  const here = new URLSearchParams(filterQuery);
  if (cursor) pager.append(link(`/app/traces${here.size ? `?${here}` : ''}`, '← First page', { class: 'button secondary' }));
  if (data.next_cursor)
    pager.append(link(`/app/traces?${new URLSearchParams({ ...filterQuery, cursor: data.next_cursor })}`, 'Next page →', { class: 'button secondary', rel: 'next' }));
  if (pager.children.length) tableArea.append(pager);
}
