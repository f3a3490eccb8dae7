// Evaluation rules (SPEC section 14): which received spans are judged online, by what, and how it is
// going (each rule's counters, and a "falling behind" mark when its queue is not keeping up).
/** @import { ListPage, Rule } from '../lib/types.js' */
import { api } from '../lib/api.js';
import { h } from '../lib/dom.js';
import { statusSummary } from '../lib/rule-status.js';
import { badge, link, pageHeading, tableWrap } from '../lib/ui.js';

/** Judge and evaluator names by id, for showing a rule's target. */
export async function targetNames() {
  /** @type {[ListPage<import('../lib/types.js').Judge>, ListPage<import('../lib/types.js').Evaluator>]} */
  const [judges, evaluators] = await Promise.all([api('GET', '/v1/judges/', { query: { limit: 200 } }), api('GET', '/v1/evaluators/', { query: { limit: 200 } })]);
  return { judges: judges.results, evaluators: evaluators.results, names: new Map([...judges.results, ...evaluators.results].map((x) => [x.id, x.name])) };
}

export const targetLabel = (/** @type {Pick<Rule, 'judge_id' | 'evaluator_id'>} */ rule, /** @type {Map<string | null, string>} */ names) =>
  rule.judge_id ? `judge ${names.get(rule.judge_id) ?? rule.judge_id}` : `evaluator ${names.get(rule.evaluator_id) ?? rule.evaluator_id}`;

/**
 * @param {import('../lib/types.js').PageElement} page
 */
export default async function rules(page) {
  /** @type {[ListPage<Rule>, Awaited<ReturnType<typeof targetNames>>]} */
  const [list, { names }] = await Promise.all([api('GET', '/v1/evaluation-rules/'), targetNames()]);
  page.append(
    pageHeading('Evaluation rules', link('/app/rules/new', 'New rule', { class: 'button' }), link('/app/traces', 'Traces', { class: 'button secondary' })),
    h('p', { class: 'lead' }, 'Each rule judges a sample of the spans your applications send, with a judge or an evaluator; every matched span is counted in one state.'),
  );
  if (!list.results.length) {
    page.append(h('p', { class: 'empty' }, 'No rules yet: create one to judge received traces online.'));
    return;
  }
  page.append(
    tableWrap(
      h(
        'table',
        { 'aria-label': 'Evaluation rules' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ['Rule', 'Judged by', 'Scope', 'Sampling', 'Status'].map((t) => h('th', { scope: 'col' }, t)),
          ),
        ),
        h(
          'tbody',
          {},
          list.results.map((r) =>
            h(
              'tr',
              {},
              h('th', { scope: 'row' }, link(`/app/rules/${encodeURIComponent(r.id)}`, r.name), r.active ? null : [' ', badge('paused')]),
              h('td', {}, targetLabel(r, names)),
              h('td', {}, r.scope),
              h('td', { class: 'num' }, `${Math.round(r.sampling_rate * 1000) / 10}%`),
              h('td', {}, statusSummary(r)),
            ),
          ),
        ),
      ),
    ),
  );
}
