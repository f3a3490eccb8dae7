// Calibrations: how far judges are from the people. The organization's calibration runs, newest first,
// and a form to start one (a judge or one evaluator over a dataset whose items carry expected scores).
import { api, listAll } from '../lib/api.js';
import { fmtStat, itemCount, statusBadge } from '../lib/calibration.js';
import { clear, h } from '../lib/dom.js';
import { ownerLabels } from '../lib/owner.js';
import { errorBox, field, link, pageHeading, showFormError, showMore, tableWrap, time, withBusy } from '../lib/ui.js';

/**
 * @param {import('../lib/types.js').PageElement} page
 * @param {import('../lib/types.js').PageContext} ctx
 */
export default async function calibrations(page, { app, query }) {
  const [judges, evaluators, datasets] = await Promise.all([listAll('/v1/judges/'), listAll('/v1/evaluators/'), listAll('/v1/datasets/')]);
  // issue 26 item 2: the owner where two share a name (an evaluator of yours beside a preset).
  const own = await app.ownProjectIds();
  const judgeLabel = ownerLabels(judges, own);
  const evaluatorLabel = ownerLabels(evaluators, own);
  const judgeName = new Map(judges.map((j) => [j.id, j.name]));
  const datasetName = new Map(datasets.map((d) => [d.id, d.name]));

  const chosen = query.get('judge_id') ? `judge:${query.get('judge_id')}` : query.get('evaluator_id') ? `evaluator:${query.get('evaluator_id')}` : '';
  const target = h(
    'select',
    {},
    h('option', { value: '' }, 'Choose a judge or an evaluator'),
    h(
      'optgroup',
      { label: 'Judges' },
      judges.map((j) => h('option', { value: `judge:${j.id}`, selected: chosen === `judge:${j.id}` }, judgeLabel.get(j.id))),
    ),
    h(
      'optgroup',
      { label: 'Evaluators' },
      evaluators.map((e) => h('option', { value: `evaluator:${e.id}`, selected: chosen === `evaluator:${e.id}` }, evaluatorLabel.get(e.id))),
    ),
  );
  const dataset = h(
    'select',
    {},
    h('option', { value: '' }, 'Choose a dataset'),
    datasets.map((d) => h('option', { value: d.id, selected: query.get('dataset_id') === d.id }, `${d.name} (${d.item_count} items)`)),
  );
  const threshold = h('input', { type: 'number', min: '0', max: '1', step: '0.05', value: '0.5' });
  const submit = h('button', { type: 'submit' }, 'Start calibration');
  const form = h(
    'form',
    { class: 'filters', 'aria-label': 'Start a calibration' },
    field({ label: 'What to measure', name: 'target', required: true }, target),
    field({ label: 'Dataset', name: 'dataset_id', required: true, hint: 'Its items carry expected_scores: the person’s score per evaluator.' }, dataset),
    field({ label: 'Pass threshold', name: 'threshold', hint: 'A score at or above it passes (for κ, accuracy and the confusion matrix).' }, threshold),
    h('div', { class: 'actions' }, submit),
    h('div', { class: 'form-error' }),
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    if (!form.reportValidity()) return;
    const [kind, id] = [target.value.slice(0, target.value.indexOf(':')), target.value.slice(target.value.indexOf(':') + 1)];
    /** @type {Record<string, string | number>} */
    const body = { [kind === 'judge' ? 'judge_id' : 'evaluator_id']: id, dataset_id: dataset.value };
    if (threshold.value !== '') body.threshold = Number(threshold.value);
    await withBusy(submit, 'Starting…', async () => {
      try {
        const run = await api('POST', '/v1/calibration-runs/', { body });
        app.flash('Calibration started: the dataset is being scored.');
        app.navigate(`/app/calibrations/${encodeURIComponent(run.id)}`);
      } catch (err) {
        showFormError(form, err);
      }
    });
  });

  const listArea = h('div');
  /**
   * @param {string} [cursor] the next page's cursor; none for the first page
   */
  async function load(cursor) {
    /** @type {import('../lib/types.js').ListPage<import('../lib/types.js').CalibrationRun>} */
    const data = await api('GET', '/v1/calibration-runs/', { query: { limit: 50, cursor } });
    let tbody = /** @type {HTMLTableSectionElement} */ (listArea.querySelector('tbody')); // a later page adds to the first page's table
    if (!cursor) {
      if (!data.results.length) {
        clear(listArea).append(
          h('p', { class: 'empty' }, 'No calibrations yet: label some items (annotate runs, or import a dataset with expected_scores), then start one above.'),
        );
        return;
      }
      tbody = h('tbody');
      clear(listArea).append(
        tableWrap(
          h(
            'table',
            { 'aria-label': 'Calibration runs' },
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                ['Started', 'Measured', 'Dataset', 'Status', 'Lowest κ', 'Items', 'Finished'].map((t) => h('th', { scope: 'col' }, t)),
              ),
            ),
            tbody,
          ),
        ),
      );
    }
    // issue 26 item 8: "Items" is the items the run scored (its batch run's rows), not the labels
    // (summing each evaluator's n counts an item once per evaluator that has a label on it).
    const totals = await Promise.all(
      data.results.map((r) =>
        api('GET', `/v1/judges/batch-executions/${encodeURIComponent(r.batch_execution_id)}/`).then(
          (b) => b.total,
          () => itemCount(r.metrics),
        ),
      ),
    );
    for (const [i, r] of data.results.entries()) {
      const measured = r.judge_id
        ? `${judgeName.get(r.judge_id) ?? r.judge_id} (judge v${r.judge_version})`
        : `${r.evaluator_versions[0]?.evaluator_name ?? r.evaluator_id} (evaluator v${r.evaluator_versions[0]?.version ?? '?'})`;
      const kappas = (r.metrics ?? []).map((m) => m.kappa);
      const lowest = kappas.length ? (kappas.includes(null) ? null : Math.min(.../** @type {number[]} */ (kappas))) : null;
      tbody.append(
        h(
          'tr',
          { 'data-run': r.id },
          h('th', { scope: 'row' }, link(`/app/calibrations/${encodeURIComponent(r.id)}`, time(r.created_at))),
          h('td', {}, measured),
          h('td', {}, datasetName.get(r.dataset_id) ?? r.dataset_id),
          h('td', {}, statusBadge(r.status)),
          h('td', { class: 'num' }, r.metrics ? fmtStat(lowest) : '—'),
          h('td', { class: 'num', 'data-items': '' }, totals[i] === null || totals[i] === undefined ? '—' : String(totals[i])),
          h('td', {}, time(r.finished_at)),
        ),
      );
    }
    showMore(listArea, 'Show more calibrations', data.next_cursor, load);
  }

  page.append(
    pageHeading('Calibrations'),
    h(
      'p',
      { class: 'lead' },
      'How far a judge is from the people whose judgement it replaces: it scores a labelled dataset, and each evaluator’s scores are compared with the people’s.',
    ),
    form,
    h('h2', {}, 'Runs'),
    listArea,
  );
  try {
    await load();
  } catch (err) {
    clear(listArea).append(errorBox(err));
  }
}
