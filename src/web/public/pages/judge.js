// One judge: its evaluators, a "try it" form, and its scores over time.
/** @import { JudgeFull, JudgeView } from '../lib/types.js' */
import { api } from '../lib/api.js';
import { calibrationSummary } from '../lib/calibration.js';
import { proxySection } from './judge-proxy.js'; // h-proxy
import { scoreChart } from '../lib/chart.js';
import { clear, h } from '../lib/dom.js';
import { compareForm } from '../lib/compare-form.js';
import { tryItForm } from '../lib/try-it.js';
import { syntheticSection } from '../lib/synthetic.js';
import { badge, button, confirmDialog, errorBox, field, fill, link, needs, notice, pageHeading, showFormError, time, withBusy } from '../lib/ui.js';

/**
 * @param {import('../lib/types.js').PageElement} page
 * @param {import('../lib/types.js').PageContext} ctx
 */
export default async function judge(page, { app, params }) {
  /** @type {JudgeView} */
  const j = await api('GET', `/v1/judges/${encodeURIComponent(params.id)}/`);
  const own = await app.isOwn(j);
  const base = `/app/judges/${encodeURIComponent(j.id)}`;
  const draft = j.generation?.status === 'draft';

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
      // Interactive runs and batch runs are read apart (issue 26 item 7): a batch larger than the page
      // would otherwise push every interactive run out of the chart.
      const [logs, batches] = await Promise.all([
        api('GET', '/v1/execution-logs/', { query: { judge_id: j.id, in_batch: false, limit: 200 } }),
        api('GET', '/v1/judges/batch-executions/', { query: { judge_id: j.id, limit: 50 } }),
      ]);
      const chart = scoreChart(logs.results, { caption: `Scores of ${j.name} over time, one line per evaluator`, batchRuns: batches.results });
      return (
        chart ??
        h('p', { class: 'muted' }, draft ? 'No scored runs yet: finish the draft above, then try it.' : 'No scored runs yet: try the judge above and its scores appear here.')
      );
    });

  page.append(
    pageHeading(j.name, ...actions),
    actionError,
    h(
      'p',
      { class: 'meta' },
      own ? badge('yours', 'good') : badge('public'),
      draft ? badge('draft', 'need') : null,
      j.stage ? badge(`stage: ${j.stage}`) : null,
      badge(j.visibility),
      h('span', { class: 'muted' }, ` version ${j.version} · updated `),
      time(j.updated_at),
      h('span', { class: 'muted' }, ' · id '),
      h('code', {}, j.id),
    ),
    h('p', { class: 'lead intent-text' }, j.intent),
    h('p', { class: 'calibration-summary' }, h('strong', {}, 'Calibration: '), calibrationSummary(j.calibration, `/app/calibrations?judge_id=${encodeURIComponent(j.id)}`)),
    generationRecord(j.generation),
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
    // A draft cannot run (the server answers 409): finishing it takes the place of "Try it".
    draft
      ? finishDraft(j, { own, app, base })
      : h(
          'section',
          { 'aria-labelledby': 'try-title', class: 'card' },
          h('h2', { id: 'try-title' }, 'Try it'),
          h('p', { class: 'muted' }, 'Runs the judge on your inputs with the judge model and records an execution log.'),
          tryModes(j, loadChart),
        ),
    draft ? null : proxySection(j), // h-proxy
    own && !draft ? syntheticSection(j) : null, // room surface: "Generate test data"
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

// A judge made by generate_judge carries its generation state (`generation`, null for hand-made
// judges): show the context it was built from folded away.
/** @param {JudgeFull['generation']} gen */
function generationRecord(gen) {
  if (!gen) return null;
  const answers = Object.entries(gen.answers);
  return h(
    'details',
    { class: 'generated' },
    h('summary', {}, gen.status === 'draft' ? 'Generation so far' : 'How this judge was generated'),
    h(
      'dl',
      { class: 'facts' },
      h('dt', {}, 'Made by'),
      h('dd', {}, gen.status === 'draft' ? 'generation, waiting for answers' : 'generation, complete'),
      h('dt', {}, 'Context-aware evaluators'),
      h('dd', {}, gen.context_aware ? 'on' : 'off'),
      answers.flatMap(([name, answer]) => [h('dt', {}, h('code', {}, name)), h('dd', {}, answer)]),
    ),
  );
}

// A draft waits for answers to its open questions. Its owner answers them here: generation then
// completes this same judge (same id, a new version), and the page shows it.
/**
 * @param {JudgeFull} j a draft
 * @param {{ own: boolean, app: import('../lib/types.js').App, base: string }} where
 */
function finishDraft(j, { own, app, base }) {
  const questions = /** @type {NonNullable<JudgeFull['generation']>} */ (j.generation).open_questions; // a draft has its generation

  const intro = h(
    'p',
    {},
    'This judge is a draft: generation is waiting for answers to ',
    questions.length === 1 ? 'one question' : `${questions.length} questions`,
    ', and the judge cannot run until they are answered.',
  );
  if (!own) {
    return h(
      'section',
      { 'aria-labelledby': 'finish-title', class: 'card' },
      h('h2', { id: 'finish-title' }, 'Draft'),
      intro,
      h(
        'ul',
        {},
        questions.map((q) => h('li', {}, q.form_field_description)),
      ),
    );
  }
  const inputs = questions.map((q) => ({ q, input: h('textarea', { rows: '3' }) }));
  const submit = h('button', { type: 'submit' }, 'Complete the judge');
  const form = h(
    'form',
    { class: 'stack', novalidate: true },
    inputs.map(({ q, input }) => field({ label: q.form_field_description, name: q.form_field_name, required: true }, input)),
    h('div', { class: 'actions' }, submit),
    h('div', { class: 'form-error' }),
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const empty = inputs.filter(({ input }) => !input.value.trim());
    if (empty.length) {
      showFormError(form, { message: 'Answer every question (a short answer is fine).', errors: empty.map(({ q }) => ({ field: q.form_field_name, message: 'Required.' })) });
      return;
    }
    const body = { intent: j.intent, judge_id: j.id, extra_contexts: Object.fromEntries(inputs.map(({ q, input }) => [q.form_field_name, input.value.trim()])) };
    await withBusy(submit, 'Generating… (this can take a minute)', async () => {
      try {
        const out = await api('POST', '/v1/judges/generate/', { body });
        if (out.error_code) app.flash(notice('Thanks: generation has more questions for this draft.', 'info'));
        else app.flash(`Judge generated with ${out.evaluator_details.length} evaluator${out.evaluator_details.length === 1 ? '' : 's'}; it is ready to run.`);
        app.navigate(base, { replace: true });
      } catch (err) {
        showFormError(form, err);
      }
    });
  });
  return h(
    'section',
    { 'aria-labelledby': 'finish-title', class: 'card' },
    h('h2', { id: 'finish-title' }, 'Finish this draft'),
    intro,
    h('p', { class: 'muted' }, 'Your answers complete this same judge.'),
    form,
  );
}

/**
 * Try it: score one response, or compare two (each evaluator asked in both orders).
 * @param {JudgeFull} j
 * @param {() => Promise<void>} loadChart redraws the score chart after a run
 */
function tryModes(j, loadChart) {
  const score = tryItForm({ evaluators: j.evaluators, endpoint: `/v1/judges/${encodeURIComponent(j.id)}/execute/`, submitText: 'Run judge', onRun: () => void loadChart() });
  const compare = compareForm({ evaluators: j.evaluators, endpoint: `/v1/judges/${encodeURIComponent(j.id)}/compare/` });
  compare.hidden = true;
  const radio = (/** @type {string} */ value, /** @type {string} */ text, /** @type {boolean} */ checked) =>
    h(
      'label',
      {},
      h('input', { type: 'radio', name: 'try-mode', value, checked, onchange: () => ((score.hidden = value !== 'score'), (compare.hidden = value !== 'compare')) }),
      text,
    );
  return h(
    'div',
    {},
    h(
      'fieldset',
      { class: 'try-mode' },
      h('legend', { class: 'sr-only' }, 'Try-it mode'),
      radio('score', 'Score one response', true),
      radio('compare', 'Compare two responses', false),
    ),
    score,
    compare,
  );
}
