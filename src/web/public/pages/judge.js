// One judge: its evaluators, a "try it" form, and its scores over time.
import { api } from '../lib/api.js';
import { scoreChart } from '../lib/chart.js';
import { clear, h } from '../lib/dom.js';
import { tryItForm } from '../lib/try-it.js';
import { badge, button, confirmDialog, errorBox, fill, link, needs, pageHeading, time } from '../lib/ui.js';

export default async function judge(page, { app, params }) {
  const j = await api('GET', `/v1/judges/${encodeURIComponent(params.id)}/`);
  const own = await app.isOwn(j);
  const base = `/app/judges/${encodeURIComponent(j.id)}`;

  const actions = [];
  const actionError = h('div');
  if (own) {
    actions.push(
      link(`${base}/edit`, 'Edit', { class: 'button secondary' }),
      button('Delete', {
        class: 'danger',
        onclick: async () => {
          const ok = await confirmDialog({
            title: `Delete judge “${j.name}”?`,
            message: 'The judge is deleted for everyone who uses it. Its execution logs stay. This cannot be undone.',
            confirmText: 'Delete judge',
          });
          if (!ok) return;
          try {
            await api('DELETE', `/v1/judges/${encodeURIComponent(j.id)}/`);
            app.flash(`Judge “${j.name}” was deleted.`);
            app.navigate('/app/judges');
          } catch (err) {
            clear(actionError).append(errorBox(err));
          }
        },
      }),
    );
  }

  const chartArea = h('div', { class: 'chart-area' });
  const loadChart = () =>
    fill(chartArea, async () => {
      const logs = await api('GET', '/v1/execution-logs/', { query: { judge_id: j.id, limit: 200 } });
      const chart = scoreChart(logs.results, { caption: `Scores of ${j.name} over time, one line per evaluator` });
      return chart ?? h('p', { class: 'muted' }, 'No scored runs yet: try the judge above and its scores appear here.');
    });

  page.append(
    pageHeading(j.name, ...actions),
    actionError,
    h(
      'p',
      { class: 'meta' },
      own ? badge('yours', 'good') : badge('public'),
      j.stage ? badge(`stage: ${j.stage}`) : null,
      badge(j.visibility),
      h('span', { class: 'muted' }, ` version ${j.version} · updated `),
      time(j.updated_at),
      h('span', { class: 'muted' }, ' · id '),
      h('code', {}, j.id),
    ),
    h('p', { class: 'lead intent-text' }, j.intent),
    h(
      'section',
      { 'aria-labelledby': 'evaluators-title' },
      h('h2', { id: 'evaluators-title' }, `Evaluators (${j.evaluators.length})`),
      h(
        'ul',
        { class: 'cards' },
        j.evaluators.map((e) =>
          h(
            'li',
            { class: 'card' },
            h('h3', {}, link(`/app/evaluators/${encodeURIComponent(e.id)}`, e.name), e.is_preset ? badge('preset') : null),
            h('p', {}, e.intent),
            h('p', { class: 'small' }, h('span', { class: 'muted' }, 'Required inputs: '), needs(e)),
            h('p', { class: 'small muted' }, e.pinned_version ? `pinned at version ${e.pinned_version}` : `latest version (${e.version})`),
          ),
        ),
      ),
    ),
    h(
      'section',
      { 'aria-labelledby': 'try-title', class: 'card' },
      h('h2', { id: 'try-title' }, 'Try it'),
      h('p', { class: 'muted' }, 'Runs the judge on your inputs with the judge model and records an execution log.'),
      tryItForm({ evaluators: j.evaluators, endpoint: `/v1/judges/${encodeURIComponent(j.id)}/execute/`, submitText: 'Run judge', onRun: () => void loadChart() }),
    ),
    h(
      'section',
      { 'aria-labelledby': 'chart-title' },
      h('h2', { id: 'chart-title' }, 'Score over time'),
      chartArea,
      h('p', {}, link(`/app/logs?judge_id=${encodeURIComponent(j.id)}`, 'All execution logs of this judge')),
    ),
  );
  await loadChart();
}
