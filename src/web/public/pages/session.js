// One session of the evaluated application: every run logged with this session_id, oldest first, so
// a conversation's turns can be followed run by run.
import { api } from '../lib/api.js';
import { h } from '../lib/dom.js';
import { badge, fmtCost, link, pageHeading, scoreBar, tableWrap, time } from '../lib/ui.js';

/** At most this many runs are shown; the logs page pages through more. */
const MAX_RUNS = 1000;

/**
 * @param {import('../lib/types.js').PageElement} page
 * @param {import('../lib/types.js').PageContext} ctx
 */
export default async function session(page, { params }) {
  const runs = [];
  let cursor;
  do {
    const data = await api('GET', '/v1/execution-logs/', { query: { session_id: params.id, limit: 200, cursor } });
    runs.push(...data.results);
    cursor = data.next_cursor ?? undefined;
  } while (cursor && runs.length < MAX_RUNS);
  runs.reverse();
  const last = (/** @type {import('../lib/types.js').ExecutionLog} */ l) => (l.turns?.length ? l.turns.length : null);
  page.append(
    pageHeading(`Session ${params.id}`),
    h(
      'p',
      { class: 'lead' },
      `Every run logged with this session, oldest first. `,
      link(`/app/logs?session_id=${encodeURIComponent(params.id)}`, 'Filter the execution logs by it'),
    ),
    runs.length
      ? tableWrap(
          h(
            'table',
            { 'aria-label': 'Runs of the session' },
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                ['#', 'When', 'Judge or evaluator', 'Turns', 'Judged response', 'Score', 'Cost'].map((t) => h('th', { scope: 'col' }, t)),
              ),
            ),
            h(
              'tbody',
              {},
              runs.map((l, i) =>
                h(
                  'tr',
                  {},
                  h('td', { class: 'num' }, String(i + 1)),
                  h('td', { class: 'nowrap' }, link(`/app/logs/${encodeURIComponent(l.id)}`, time(l.created_at))),
                  h('td', {}, l.type === 'judge' ? l.judge_name : l.evaluator_name, ' ', badge(l.type)),
                  h('td', { class: 'num' }, last(l) === null ? '—' : String(last(l))),
                  h('td', {}, l.response.length > 120 ? `${l.response.slice(0, 120)}…` : l.response),
                  h('td', {}, scoreBar(l.score)),
                  h('td', { class: 'num' }, fmtCost(l.cost_usd)),
                ),
              ),
            ),
          ),
        )
      : h('p', { class: 'empty' }, 'No run has this session id.'),
  );
}
