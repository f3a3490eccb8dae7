// One evaluation rule: what it judges, its live status (refreshed while the page is open, with the
// "falling behind" warning), and the test panel: what the latest matching stored spans would give
// (extracted inputs, or why not), without a model call.
/** @import { FilterCondition, Rule } from '../lib/types.js' */
import { api } from '../lib/api.js';
import { clear, h } from '../lib/dom.js';
import { extractedView, unreadableText } from '../lib/extracted.js';
import { statusView } from '../lib/rule-status.js';
import { badge, button, confirmDialog, errorBox, link, pageHeading, select, tableWrap, withBusy } from '../lib/ui.js';
import { targetNames, targetLabel } from './rules.js';

/** How often the status is read again while the page is open. */
export const REFRESH_MS = 2000;

const filterText = (/** @type {FilterCondition} */ c) => `${c.field} ${c.op}${c.op === 'exists' ? '' : ` ${Array.isArray(c.value) ? c.value.join(', ') : c.value}`}`;

/**
 * @param {import('../lib/types.js').PageElement} page
 * @param {import('../lib/types.js').PageContext} ctx
 */
export default async function rule(page, { app, params, isCurrent }) {
  const path = `/v1/evaluation-rules/${encodeURIComponent(params.id)}/`;
  /** @type {[Rule, Awaited<ReturnType<typeof targetNames>>]} */
  const [r, { names }] = await Promise.all([api('GET', path), targetNames()]);
  const statusArea = h('div', {}, statusView(r));
  const refreshed = h('p', { class: 'muted small refreshed' }, 'Live: read every 2 s while this page is open.');
  const budget = [
    r.budget?.max_runs_per_day !== undefined ? `${r.budget.max_runs_per_day} runs` : null,
    r.budget?.max_cost_usd_per_day !== undefined ? `$${r.budget.max_cost_usd_per_day}` : null,
  ].filter(Boolean);

  page.append(
    pageHeading(
      `Rule: ${r.name}`,
      link(`/app/rules/${encodeURIComponent(r.id)}/edit`, 'Edit', { class: 'button secondary' }),
      button('Delete', {
        class: 'danger',
        onclick: async () => {
          const ok = await confirmDialog({
            title: `Delete rule “${r.name}”?`,
            message: 'Its waiting work is dropped; execution logs already written stay.',
            confirmText: 'Delete rule',
          });
          if (!ok) return;
          try {
            await api('DELETE', path);
          } catch (err) {
            return void (/** @type {HTMLElement} */ (page.querySelector('.page-head')).after(errorBox(err))); // every page starts with its heading
          }
          app.flash(`Rule ${r.name} deleted.`);
          app.navigate('/app/rules');
        },
      }),
    ),
    h(
      'dl',
      { class: 'facts' },
      h('dt', {}, 'Judged by'),
      h(
        'dd',
        {},
        link(r.judge_id ? `/app/judges/${encodeURIComponent(r.judge_id)}` : `/app/evaluators/${encodeURIComponent(/** @type {string} */ (r.evaluator_id))}`, targetLabel(r, names)),
      ), // a rule runs a judge or else an evaluator

      h('dt', {}, 'Active'),
      h('dd', {}, r.active ? badge('active', 'good') : badge('paused')),
      h('dt', {}, 'Scope'),
      h('dd', {}, r.scope, r.delay_seconds ? h('span', { class: 'muted' }, ` · after ${r.delay_seconds} s quiet`) : null),
      h('dt', {}, 'Filter'),
      h(
        'dd',
        {},
        r.filter.length
          ? h(
              'ul',
              { class: 'plain' },
              r.filter.map((c) => h('li', {}, h('code', {}, filterText(c)))),
            )
          : h('span', { class: 'muted' }, 'every span'),
      ),
      h('dt', {}, 'Sampling'),
      h('dd', {}, `${Math.round(r.sampling_rate * 1000) / 10}% of traces`),
      h('dt', {}, 'Daily budget'),
      h('dd', {}, budget.length ? budget.join(' · ') : h('span', { class: 'muted' }, 'none')),
      h('dt', {}, 'Queue'),
      h('dd', {}, `at most ${r.queue_limit} waiting, then ${r.shed_policy.replace('_', ' ')}`),
    ),
    h('section', { 'aria-labelledby': 'status-title' }, h('h2', { id: 'status-title' }, 'Status'), refreshed, statusArea),
    testPanel(path),
  );

  // Live status: read again while this page is the one shown; a failed read says so and goes on.
  let shown = JSON.stringify(r.status);
  const tick = async () => {
    if (!isCurrent() || !statusArea.isConnected) return;
    try {
      /** @type {Rule} */
      const now = await api('GET', path);
      if (!isCurrent()) return;
      // Redrawn only on a change, so focus, selection and screen readers are not disturbed every tick.
      if (JSON.stringify(now.status) !== shown) clear(statusArea).append(statusView(now));
      shown = JSON.stringify(now.status);
      refreshed.textContent = `Live: read every 2 s while this page is open (last ${new Date().toLocaleTimeString()}).`;
    } catch (thrown) {
      const err = /** @type {import('../lib/api.js').ApiError} */ (thrown); // api() throws only ApiError
      if (err.status === 404) return void clear(statusArea).append(errorBox(err));
      refreshed.textContent = `Could not refresh: ${err.message}. Trying again.`;
    }
    setTimeout(tick, REFRESH_MS);
  };
  setTimeout(tick, REFRESH_MS);
}

/**
 * @param {string} path
 */
function testPanel(path) {
  const limit = select(
    'limit',
    [5, 10, 20, 50].map((n) => [String(n), `${n} spans`]),
    '5',
  );
  limit.setAttribute('aria-label', 'Spans to test');
  const out = h('div', { class: 'test-results' });
  const run = button('Test on stored spans', {
    onclick: () =>
      withBusy(run, 'Testing…', async () => {
        try {
          const res = await api('POST', `${path}test/`, { body: { limit: Number(limit.value) } });
          clear(out).append(testResults(res));
        } catch (err) {
          clear(out).append(errorBox(err));
        }
      }),
  });
  return h(
    'section',
    { 'aria-labelledby': 'test-title', class: 'card test-panel' },
    h('h2', { id: 'test-title' }, 'Test the rule'),
    h(
      'p',
      { class: 'hint' },
      'Runs the rule on the latest matching spans already received and shows what would be extracted and judged. No model is called and nothing is written.',
    ),
    h('div', { class: 'actions' }, limit, run),
    out,
  );
}

/**
 * @param {import('../lib/types.js').RuleTest} res
 */
function testResults(res) {
  if (!res.results.length) return h('p', { class: 'empty' }, 'No stored span matches this rule yet: check the filter, or send traces first.');
  return h(
    'div',
    {},
    h('p', {}, `${res.matched_spans} matching span${res.matched_spans === 1 ? '' : 's'} read; the latest ${res.results.length}:`),
    tableWrap(
      h(
        'table',
        { 'aria-label': 'Test results' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ['Span', 'Sampled', 'Would judge'].map((t) => h('th', { scope: 'col' }, t)),
          ),
        ),
        h(
          'tbody',
          {},
          res.results.map((x) =>
            h(
              'tr',
              {},
              h(
                'th',
                { scope: 'row' },
                link(`/app/traces/${encodeURIComponent(x.trace_id)}`, x.span_name),
                h('div', { class: 'muted small' }, x.service_name ?? 'unknown service'),
              ),
              h('td', {}, x.sampled ? badge('sampled', 'good') : badge('not sampled')),
              h('td', { class: 'would-judge' }, x.would_judge ? extractedView(x.would_judge) : h('p', { class: 'muted' }, `Nothing: ${unreadableText(x.reason ?? 'unknown')}`)),
            ),
          ),
        ),
      ),
    ),
  );
}
