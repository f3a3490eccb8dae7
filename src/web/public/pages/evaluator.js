// One evaluator: intent, rubric, required inputs, demonstrations, versions; edit, copy, try, delete.
import { api } from '../lib/api.js';
import { calibrationSummary } from '../lib/calibration.js';
import { clear, h } from '../lib/dom.js';
import { tryItForm } from '../lib/try-it.js';
import { badge, button, confirmDialog, errorBox, fill, link, needs, pageHeading, time } from '../lib/ui.js';

/**
 * @param {import('../lib/types.js').PageElement} page
 * @param {import('../lib/types.js').PageContext} ctx
 */
export default async function evaluator(page, { app, params }) {
  /** @type {import('../lib/types.js').EvaluatorView} */
  const e = await api('GET', `/v1/evaluators/${encodeURIComponent(params.id)}/`);
  const own = !e.is_preset && (await app.isOwn(e));
  const base = `/app/evaluators/${encodeURIComponent(e.id)}`;
  const actionError = h('div');

  const actions = [];
  if (own) {
    actions.push(
      link(`${base}/edit`, 'Edit', { class: 'button' }),
      button('Delete', {
        class: 'danger',
        onclick: async () => {
          const ok = await confirmDialog({
            title: `Delete evaluator “${e.name}”?`,
            message: 'Only an evaluator that no judge uses can be deleted. Its execution logs stay. This cannot be undone.',
            confirmText: 'Delete evaluator',
          });
          if (!ok) return;
          try {
            await api('DELETE', `/v1/evaluators/${encodeURIComponent(e.id)}/`);
            app.flash(`Evaluator “${e.name}” was deleted.`);
            app.navigate('/app/evaluators');
          } catch (err) {
            clear(actionError).append(errorBox(err));
          }
        },
      }),
    );
  }
  actions.push(link(`/app/evaluators/new?from=${encodeURIComponent(e.id)}`, own ? 'Duplicate' : 'Copy into a new evaluator', { class: 'button secondary' }));

  const versionsArea = h('div');
  page.append(
    pageHeading(e.name, ...actions),
    actionError,
    h(
      'p',
      { class: 'meta' },
      e.is_preset ? badge('preset', 'preset') : own ? badge('yours', 'good') : badge('public'),
      badge(e.visibility),
      h('span', { class: 'muted' }, ` version ${e.version} · updated `),
      time(e.updated_at),
      h('span', { class: 'muted' }, ' · id '),
      h('code', {}, e.id),
    ),
    h('p', { class: 'lead' }, e.intent),
    h(
      'dl',
      { class: 'facts' },
      h('dt', {}, 'Required inputs'),
      h('dd', {}, needs(e)),
      h('dt', {}, 'Judge model'),
      h(
        'dd',
        {},
        e.models?.length ? `jury of ${e.models.join(', ')} (${e.aggregation ?? 'mean'})` : (e.model ?? 'server default'),
        e.scoring === 'logprobs' ? h('span', { class: 'muted' }, ' · log-probability scoring') : null,
      ),
      h('dt', {}, 'Calibration'),
      h('dd', { class: 'calibration-summary' }, calibrationSummary(e.calibration, `/app/calibrations?evaluator_id=${encodeURIComponent(e.id)}`)),
    ),
    h('section', { 'aria-labelledby': 'rubric-title' }, h('h2', { id: 'rubric-title' }, 'Rubric'), h('pre', { class: 'rubric', tabindex: '0' }, e.rubric)),
    // h-checks: what a check or code evaluator runs.
    e.kind === 'check'
      ? h(
          'section',
          { 'aria-labelledby': 'checks-title' },
          h('h2', { id: 'checks-title' }, `Checks (combine: ${e.combine ?? 'all'})`),
          h('pre', { class: 'rubric mono', tabindex: '0' }, JSON.stringify(e.checks, null, 2)),
        )
      : null,
    e.kind === 'code'
      ? h('section', { 'aria-labelledby': 'code-title' }, h('h2', { id: 'code-title' }, 'Code: score(input)'), h('pre', { class: 'rubric mono', tabindex: '0' }, e.code))
      : null,
    e.demonstrations.length
      ? h(
          'section',
          { 'aria-labelledby': 'demo-title' },
          h('h2', { id: 'demo-title' }, `Demonstrations (${e.demonstrations.length})`),
          h(
            'ol',
            { class: 'demos' },
            e.demonstrations.map((d) =>
              h(
                'li',
                { class: 'card' },
                d.request ? h('p', {}, h('strong', {}, 'Request: '), d.request) : null,
                h('p', {}, h('strong', {}, 'Response: '), d.response),
                d.contexts?.length ? h('p', {}, h('strong', {}, 'Contexts: '), d.contexts.join(' | ')) : null,
                d.expected_output ? h('p', {}, h('strong', {}, 'Expected output: '), d.expected_output) : null,
                h('p', {}, h('strong', {}, 'Score: '), d.score.toFixed(2), d.justification ? ` — ${d.justification}` : ''),
              ),
            ),
          ),
        )
      : null,
    h('section', { 'aria-labelledby': 'versions-title' }, h('h2', { id: 'versions-title' }, 'Versions'), versionsArea),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'try-title' },
      h('h2', { id: 'try-title' }, 'Try it'),
      h('p', { class: 'muted' }, 'Runs this evaluator alone and records an execution log.'),
      tryItForm({ evaluators: [e], endpoint: `/v1/evaluators/${encodeURIComponent(e.id)}/execute/`, submitText: 'Run evaluator' }),
    ),
  );

  await fill(versionsArea, async () => {
    /** @type {import('../lib/types.js').ListPage<import('../lib/types.js').Evaluator>} */
    const { results } = await api('GET', `/v1/evaluators/${encodeURIComponent(e.id)}/versions/`);
    return h(
      'ol',
      { class: 'versions', reversed: true },
      results.map((v) =>
        h(
          'li',
          {},
          h(
            'details',
            {},
            h('summary', {}, `Version ${v.version}`, v.version === e.version ? ' (current)' : '', ' · ', time(v.updated_at), ` · ${v.name}`),
            h('p', {}, h('strong', {}, 'Intent: '), v.intent),
            h(
              'p',
              {},
              h('strong', {}, 'Required inputs: '),
              needs(v),
              ` · model ${v.models?.length ? `jury of ${v.models.join(', ')}` : (v.model ?? 'server default')} · ${v.visibility}`,
            ),
            h('pre', { class: 'rubric' }, v.rubric),
          ),
        ),
      ),
    );
  });
}
