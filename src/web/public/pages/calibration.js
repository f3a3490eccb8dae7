// One calibration run: its status (polled while the batch runs), then per evaluator the metrics beside
// the previous run's, a scatter plot of person against judge, the confusion matrix, and the
// disagreements largest first, each linking to its run; chosen disagreements become demonstrations.
/** @import { CalibrationMetrics, CalibrationRun } from '../lib/types.js' */
import { api, listAll } from '../lib/api.js';
import { confusionTable, isDisagreement, metricsTable, reliabilityTable, scatterPlot, statusBadge } from '../lib/calibration.js';
import { clear, h } from '../lib/dom.js';
import { button, errorBox, fmtScore, link, notice, pageHeading, showMore, tableWrap, time, withBusy } from '../lib/ui.js';

const POLL_MS = 1000;
const DONE = ['completed', 'failed', 'cancelled'];

/**
 * What the run measured: its judge, or else its evaluator.
 * @param {CalibrationRun} run
 * @returns {Promise<{ text: string, href: string | null }>}
 */
async function subjectName(run) {
  if (!run.judge_id) {
    const evaluatorId = /** @type {string} */ (run.evaluator_id);
    return { text: run.evaluator_versions[0]?.evaluator_name ?? evaluatorId, href: `/app/evaluators/${encodeURIComponent(evaluatorId)}` };
  }
  try {
    const j = await api('GET', `/v1/judges/${encodeURIComponent(run.judge_id)}/`);
    return { text: j.name, href: `/app/judges/${encodeURIComponent(j.id)}` };
  } catch {
    return { text: run.judge_id, href: null };
  }
}

/**
 * @param {import('../lib/types.js').PageElement} page
 * @param {import('../lib/types.js').PageContext} ctx
 */
export default async function calibration(page, { app, params, isCurrent }) {
  const path = `/v1/calibration-runs/${encodeURIComponent(params.id)}`;
  /** @type {CalibrationRun} */
  const run = await api('GET', `${path}/`);
  const subject = await subjectName(run);
  const datasetName = await api('GET', `/v1/datasets/${encodeURIComponent(run.dataset_id)}/`).then(
    (d) => d.name,
    () => run.dataset_id,
  );

  page.append(
    pageHeading(`Calibration of ${subject.text}`),
    h(
      'dl',
      { class: 'facts' },
      h('dt', {}, run.judge_id ? 'Judge' : 'Evaluator'),
      h('dd', {}, subject.href ? link(subject.href, subject.text) : subject.text, run.judge_version ? h('span', { class: 'muted' }, ` version ${run.judge_version}`) : null),
      h('dt', {}, 'Evaluator versions'),
      h('dd', {}, run.evaluator_versions.map((v) => `${v.evaluator_name} v${v.version}`).join(', ')),
      h('dt', {}, 'Dataset'),
      h('dd', {}, link(`/app/datasets/${encodeURIComponent(run.dataset_id)}`, datasetName)),
      h('dt', {}, 'Pass threshold'),
      h('dd', {}, `score ≥ ${run.threshold}`),
      h('dt', {}, 'Status'),
      h('dd', { id: 'calibration-status' }, statusBadge(run.status)),
      h('dt', {}, 'Started'),
      h('dd', {}, time(run.created_at)),
      h('dt', {}, 'Finished'),
      h('dd', {}, time(run.finished_at, 'not yet')),
      run.previous_run_id ? [h('dt', {}, 'Previous run'), h('dd', {}, link(`/app/calibrations/${encodeURIComponent(run.previous_run_id)}`, 'the last run on this dataset'))] : null,
      h('dt', {}, 'Run id'),
      h('dd', {}, h('code', {}, run.id)),
    ),
  );

  if (!DONE.includes(run.status)) {
    const progress = h('p', { class: 'notice info', role: 'status' }, 'The dataset is being scored; this page refreshes when the run finishes.');
    page.append(progress);
    const poll = async () => {
      if (!isCurrent()) return;
      try {
        /** @type {CalibrationRun} */
        const now = await api('GET', `${path}/`);
        if (!isCurrent()) return;
        if (DONE.includes(now.status)) return app.navigate(location.pathname, { replace: true });
        const batch = await api('GET', `/v1/judges/batch-executions/${encodeURIComponent(now.batch_execution_id)}/`).catch(() => null);
        if (batch && isCurrent())
          progress.textContent = `Scoring the dataset: ${batch.done + batch.failed} of ${batch.total} items (${now.status}). This page refreshes when the run finishes.`;
      } catch (err) {
        progress.replaceWith(errorBox(err));
        return;
      }
      setTimeout(poll, POLL_MS);
    };
    setTimeout(poll, POLL_MS);
    return;
  }
  if (run.status !== 'completed') {
    page.append(notice(`This run was ${run.status} before every item was scored: there are no metrics.`, 'warn'));
    return;
  }
  if (!run.metrics?.length) {
    page.append(notice('No evaluator had labelled items the judge scored.', 'warn'));
    return;
  }
  const previous = new Map((run.previous_metrics ?? []).map((m) => [m.evaluator_id, m]));
  for (const m of run.metrics) page.append(await evaluatorSection(run, m, previous.get(m.evaluator_id), path));
}

/**
 * @param {CalibrationRun} run
 * @param {CalibrationMetrics} m
 * @param {CalibrationMetrics | undefined} previous the same evaluator in the previous run
 * @param {string} path the run's REST path
 */
async function evaluatorSection(run, m, previous, path) {
  const titleId = `ev-${m.evaluator_id}`;
  // The scatter needs every scored item (paged underneath); the list below pages on its own.
  /** @type {import('../lib/types.js').CalibrationItem[]} */
  const items = await listAll(`${path}/items/`, { evaluator_id: m.evaluator_id }, 5000);
  const kappa = m.kappa;
  const warning =
    m.accuracy !== null && m.majority_baseline !== null && m.accuracy <= m.majority_baseline
      ? notice(`Accuracy ${m.accuracy.toFixed(3)} is not above always answering the more common verdict (${m.majority_baseline.toFixed(3)}): read κ.`, 'warn')
      : kappa === null
        ? notice('κ is undefined here: the person or the judge gave one verdict only.', 'info')
        : null;
  return h(
    'section',
    { class: 'calibration-evaluator', 'aria-labelledby': titleId, 'data-evaluator': m.evaluator_id },
    h('h2', { id: titleId }, m.evaluator_name, h('span', { class: 'muted' }, ` v${m.evaluator_version}`)),
    warning,
    h(
      'div',
      { class: 'grid-2' },
      h(
        'div',
        {},
        metricsTable(m, previous, `Metrics of ${m.evaluator_name}`),
        h('h3', {}, 'Pass / fail'),
        confusionTable(m.confusion, `Confusion matrix of ${m.evaluator_name}`),
        h('h3', {}, 'Confidence against agreement'),
        reliabilityTable(m, `Reliability of ${m.evaluator_name}`),
      ),
      scatterPlot(items, { caption: `${m.evaluator_name}: person (across) against judge (up)`, threshold: run.threshold }),
    ),
    h('h3', {}, 'Disagreements, largest first'),
    disagreements(run, m, path),
  );
}

/**
 * @param {CalibrationRun} run
 * @param {CalibrationMetrics} m
 * @param {string} path the run's REST path
 */
function disagreements(run, m, path) {
  const area = h('div', { class: 'disagreements' });
  const chosen = new Set();
  const result = h('div', { 'aria-live': 'polite' });
  const teach = button('Add the chosen items as demonstrations', { class: 'secondary', disabled: true });
  const tbody = h('tbody');
  const table = tableWrap(
    h(
      'table',
      { 'aria-label': `Disagreements of ${m.evaluator_name}` },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['Teach', 'Person', 'Judge', 'Difference', 'Judge’s justification', 'Person’s note', 'Run'].map((t) => h('th', { scope: 'col' }, t)),
        ),
      ),
      tbody,
    ),
  );
  teach.addEventListener('click', () =>
    withBusy(teach, 'Adding…', async () => {
      try {
        const out = await api('POST', `${path}/demonstrations/`, { body: { items: [...chosen].map((item_id) => ({ item_id, evaluator_id: m.evaluator_id })) } });
        const e = out.evaluators[0];
        clear(result).append(
          notice(`${e.evaluator_name}: ${e.added} demonstration${e.added === 1 ? '' : 's'} added (version ${e.version} now holds ${e.demonstrations}). ${out.next}`, 'success'),
        );
      } catch (err) {
        clear(result).append(errorBox(err));
      }
    }).then(() => {
      teach.disabled = chosen.size === 0;
    }),
  );

  /**
   * @param {string} [cursor] the next page's cursor; none for the first page
   */
  async function load(cursor) {
    const data = await api('GET', `${path}/items/`, { query: { evaluator_id: m.evaluator_id, limit: 20, cursor } });
    if (!cursor && !data.results.length) {
      clear(area).append(h('p', { class: 'empty' }, 'No labelled items.'));
      return;
    }
    // issue 26 item 8: rows whose difference prints as 0.00 are agreements, not listed here.
    if (!cursor && !data.next_cursor && !data.results.some(isDisagreement)) {
      clear(area).append(h('p', { class: 'empty' }, 'No disagreements: the judge’s score equals the person’s on every item.'));
      return;
    }
    for (const it of data.results.filter(isDisagreement)) {
      const box = h('input', { type: 'checkbox', 'aria-label': `Teach ${m.evaluator_name} this item (person ${fmtScore(it.expected)}, judge ${fmtScore(it.score)})` });
      box.addEventListener('change', () => {
        if (box.checked) chosen.add(it.item_id);
        else chosen.delete(it.item_id);
        teach.disabled = chosen.size === 0 || chosen.size > 20;
      });
      tbody.append(
        h(
          'tr',
          { 'data-item': it.item_id },
          h('td', {}, box),
          h('td', { class: 'num' }, fmtScore(it.expected)),
          h('td', { class: 'num' }, fmtScore(it.score)),
          h('td', { class: 'num' }, it.difference === null ? 'not scored' : (it.difference > 0 ? '+' : '') + it.difference.toFixed(2)),
          h('td', { class: 'justification' }, h('div', { class: 'clamp' }, it.justification ?? '')),
          h('td', { class: 'justification' }, it.note ?? h('span', { class: 'muted' }, '—')),
          h('td', {}, it.execution_log_id ? link(`/app/logs/${encodeURIComponent(it.execution_log_id)}`, 'Open run') : '—'),
        ),
      );
    }
    showMore(area, 'Show more disagreements', data.next_cursor, load);
  }
  clear(area).append(table);
  load().catch((err) => clear(area).append(errorBox(err)));
  return h(
    'div',
    {},
    area,
    h(
      'div',
      { class: 'actions' },
      teach,
      h(
        'span',
        { class: 'muted small' },
        ' Each chosen item, with the person’s score and note, becomes a demonstration: a new version of the evaluator. Run the calibration again to compare; confirm on items it has not seen.',
      ),
    ),
    result,
  );
}
