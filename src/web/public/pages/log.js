// One run in full: its inputs and every evaluator's score, justification, model, tokens, cost, latency.
import { annotationsSection } from '../lib/annotate.js';
import { api } from '../lib/api.js';
import { conversationView } from '../lib/conversation.js';
import { h } from '../lib/dom.js';
import { badge, errorBox, fill, fmtCost, fmtInt, fmtMs, link, pageHeading, scoreBar, tableWrap, time } from '../lib/ui.js';

export default async function log(page, { params }) {
  const l = await api('GET', `/v1/execution-logs/${encodeURIComponent(params.id)}/`);
  const subject =
    l.type === 'judge'
      ? link(`/app/judges/${encodeURIComponent(l.judge_id)}`, l.judge_name)
      : link(`/app/evaluators/${encodeURIComponent(l.evaluator_id)}`, l.evaluator_name);
  const version = l.type === 'judge' ? l.judge_version : l.evaluator_version;

  const annotateArea = h('div');
  const text = (label, value) => (value ? [h('h3', {}, label), h('pre', { class: 'text', tabindex: '0' }, value)] : null);

  page.append(
    pageHeading(`Run of ${l.type === 'judge' ? l.judge_name : l.evaluator_name}`),
    h(
      'dl',
      { class: 'facts' },
      h('dt', {}, l.type === 'judge' ? 'Judge' : 'Evaluator'),
      h('dd', {}, subject, version ? h('span', { class: 'muted' }, ` version ${version}`) : null),
      h('dt', {}, 'When'),
      h('dd', {}, time(l.created_at)),
      h('dt', {}, 'Score'),
      h('dd', {}, scoreBar(l.score, 'Overall')),
      h('dt', {}, 'Cost'),
      h('dd', {}, fmtCost(l.cost_usd)),
      h('dt', {}, 'Latency'),
      h('dd', {}, fmtMs(l.latency_ms)),
      h('dt', {}, 'Tags'),
      h('dd', {}, l.tags.length ? l.tags.map((t) => badge(t, 'tag')) : h('span', { class: 'muted' }, 'none')),
      l.user_id ? [h('dt', {}, 'User'), h('dd', {}, l.user_id)] : null,
      l.session_id ? [h('dt', {}, 'Session'), h('dd', {}, link(`/app/sessions/${encodeURIComponent(l.session_id)}`, l.session_id))] : null,
      h('dt', {}, 'Run id'),
      h('dd', {}, h('code', {}, l.id)),
    ),
    h(
      'section',
      { 'aria-labelledby': 'scores-title' },
      h('h2', { id: 'scores-title' }, 'Scores'),
      tableWrap(
        h(
          'table',
          { 'aria-label': 'Evaluator results', class: 'results-table' },
          h('thead', {}, h('tr', {}, ['Evaluator', 'Score', 'Justification', 'Model', 'Tokens in / out', 'Cost', 'Latency'].map((t) => h('th', { scope: 'col' }, t)))),
          h(
            'tbody',
            {},
            l.evaluator_results.map((r) =>
              h(
                'tr',
                {},
                h('th', { scope: 'row' }, link(`/app/evaluators/${encodeURIComponent(r.evaluator_id)}`, r.evaluator_name), h('span', { class: 'muted' }, ` v${r.evaluator_version}`)),
                h('td', {}, scoreBar(r.score, r.evaluator_name)),
                h('td', { class: 'justification' }, r.error ? errorBox({ message: r.error }) : null, r.justification ?? ''),
                h('td', { class: 'model' }, r.model ?? '—'),
                h('td', { class: 'num' }, `${fmtInt(r.input_tokens)} / ${fmtInt(r.output_tokens)}`),
                h('td', { class: 'num' }, fmtCost(r.cost_usd)),
                h('td', { class: 'num' }, fmtMs(r.latency_ms)),
              ),
            ),
          ),
        ),
      ),
    ),
    annotateArea,
    h(
      'section',
      { 'aria-labelledby': 'inputs-title' },
      h('h2', { id: 'inputs-title' }, 'Inputs'),
      l.turns?.length ? [h('h3', {}, 'Conversation'), conversationView(l.turns, l.system_prompt)] : [text('System prompt', l.system_prompt), text('Request', l.request), text('Response', l.response)],
      l.contexts?.length ? [h('h3', {}, 'Contexts'), h('ol', { class: 'context-list' }, l.contexts.map((c) => h('li', {}, h('pre', { class: 'text' }, c))))] : null,
      text('Expected output', l.expected_output),
    ),
  );
  await fill(annotateArea, () => annotationsSection(l));
}
