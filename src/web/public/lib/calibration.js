// Pieces of the calibration pages: the person-against-judge scatter plot (inline SVG, colours from
// style.css classes so the CSP needs no inline styles), the confusion matrix, the metrics table beside
// the previous run's, and the one-line summary a judge or evaluator page shows.
/** @import { CalibrationItem, CalibrationMetrics, CalibrationSummary } from './types.js' */
import { h, s, uid } from './dom.js';
import { badge, link, notice, tableWrap, time } from './ui.js';

const SIZE = 320;
const M = { left: 44, right: 14, top: 14, bottom: 40 };

// issue 26: a value that rounds to zero prints "0.000", never "-0.000".
export const fmtStat = (/** @type {number | null | undefined} */ v, digits = 3) => (v === null || v === undefined ? '—' : v.toFixed(digits).replace(/^-(0\.0*)$/, '$1'));

// issue 26 item 8: a run's items are not its labels (m.n is per evaluator, so summing counts an item
// once per evaluator labelled on it). The calibrations list shows its batch run's rows; when that
// cannot be read, this lower bound: the most items any one evaluator measured.
export const itemCount = (/** @type {CalibrationMetrics[] | null | undefined} */ metrics) => (metrics?.length ? Math.max(...metrics.map((m) => m.n)) : null);

// issue 26 item 8: a row is a disagreement when its difference prints as something other than 0.00
// (rows the judge did not score stay: they are listed as "not scored").
export const isDisagreement = (/** @type {CalibrationItem} */ item) => item.difference === null || Math.abs(item.difference) >= 0.005;

/** The scatter plot's colours, said once: within 0.25 of the person, or 0.25 and more apart. */
export function scatterLegend() {
  const entry = (/** @type {boolean} */ far, /** @type {string} */ text) =>
    h(
      'li',
      {},
      h(
        'span',
        { class: 'legend-marker', 'aria-hidden': 'true' },
        s('svg', { viewBox: '0 0 12 12', width: 12, height: 12 }, s('circle', { class: ['dot', far ? 'far' : null], cx: 6, cy: 6, r: 5 })),
      ),
      text,
    );
  return h('ul', { class: 'legend scatter-legend' }, entry(false, 'judge within 0.25 of the person'), entry(true, 'judge 0.25 or more from the person'));
}

/**
 * items: calibration items of one evaluator ({expected, score, execution_log_id, difference}). Items the
 * judge did not score are left out (they are not in the metrics either). One circle per item, linking
 * to its run; the diagonal is perfect agreement, the dashed lines the pass threshold.
 * @param {CalibrationItem[]} items
 * @param {{ caption: string, threshold: number }} opts
 */
export function scatterPlot(items, { caption, threshold }) {
  const points = /** @type {Array<CalibrationItem & { score: number }>} */ (items.filter((i) => typeof i.score === 'number'));
  const plot = SIZE - M.left - M.right;
  const x = (/** @type {number} */ v) => M.left + v * plot;
  const y = (/** @type {number} */ v) => M.top + (1 - v) * plot;
  const titleId = uid('scatter');
  const descId = uid('scatter-desc');
  const above = points.filter((p) => p.score > p.expected).length;
  const below = points.filter((p) => p.score < p.expected).length;
  const svg = s(
    'svg',
    { viewBox: `0 0 ${SIZE} ${SIZE + M.bottom - M.right}`, class: 'chart scatter', role: 'img', 'aria-labelledby': `${titleId} ${descId}`, 'data-points': points.length },
    s('title', { id: titleId }, caption),
    s('desc', { id: descId }, `${points.length} items: the judge scored ${above} above the person, ${below} below, ${points.length - above - below} the same.`),
  );
  const grid = s('g', { class: 'grid' });
  for (const v of [0, 0.25, 0.5, 0.75, 1]) {
    grid.append(
      s('line', { x1: x(0), x2: x(1), y1: y(v), y2: y(v) }),
      s('line', { x1: x(v), x2: x(v), y1: y(0), y2: y(1) }),
      s('text', { x: M.left - 6, y: y(v) + 4, 'text-anchor': 'end' }, v.toFixed(2)),
      s('text', { x: x(v), y: y(0) + 16, 'text-anchor': 'middle' }, v.toFixed(2)),
    );
  }
  grid.append(
    s('text', { x: x(0.5), y: y(0) + 32, 'text-anchor': 'middle', class: 'axis-label' }, 'person'),
    s('text', { x: 12, y: y(0.5), 'text-anchor': 'middle', class: 'axis-label', transform: `rotate(-90 12 ${y(0.5)})` }, 'judge'),
    s('line', { class: 'threshold', x1: x(threshold), x2: x(threshold), y1: y(0), y2: y(1) }),
    s('line', { class: 'threshold', x1: x(0), x2: x(1), y1: y(threshold), y2: y(threshold) }),
    s('line', { class: 'diagonal', x1: x(0), y1: y(0), x2: x(1), y2: y(1) }),
  );
  svg.append(grid);
  const g = s('g', { class: 'points' });
  for (const p of points) {
    const label = `person ${p.expected.toFixed(2)}, judge ${p.score.toFixed(2)}`;
    const dot = s(
      'circle',
      { class: ['dot', Math.abs(p.difference ?? 0) >= 0.25 ? 'far' : null], cx: x(p.expected).toFixed(1), cy: y(p.score).toFixed(1), r: 5 },
      s('title', {}, label),
    );
    g.append(p.execution_log_id ? s('a', { href: `/app/logs/${encodeURIComponent(p.execution_log_id)}`, 'aria-label': label }, dot) : dot);
  }
  svg.append(g);
  return h(
    'figure',
    { class: 'chart-figure scatter-figure' },
    svg,
    h(
      'figcaption',
      {},
      scatterLegend(),
      h(
        'p',
        { class: 'muted chart-note' },
        'Each dot is an item (it opens its run): the person’s score across, the judge’s up. On the diagonal they agree; dashed lines: the pass threshold.',
      ),
    ),
  );
}

/**
 * The pass/fail confusion matrix, the person being the truth.
 * @param {CalibrationMetrics['confusion']} c
 * @param {string} label
 */
export function confusionTable(c, label) {
  const cell = (/** @type {number} */ n, /** @type {string} */ cls) => h('td', { class: ['num', cls] }, String(n));
  return tableWrap(
    h(
      'table',
      { 'aria-label': label, class: 'confusion' },
      h('thead', {}, h('tr', {}, h('td', {}), h('th', { scope: 'col' }, 'Judge: pass'), h('th', { scope: 'col' }, 'Judge: fail'))),
      h(
        'tbody',
        {},
        h('tr', {}, h('th', { scope: 'row' }, 'Person: pass'), cell(c.tp, 'agree'), cell(c.fn, 'disagree')),
        h('tr', {}, h('th', { scope: 'row' }, 'Person: fail'), cell(c.fp, 'disagree'), cell(c.tn, 'agree')),
      ),
    ),
  );
}

/** @type {Array<[keyof CalibrationMetrics, string, (v: number | null | undefined) => string]>} */
const ROWS = [
  ['n', 'Labelled items', (v) => (v === undefined ? '—' : String(v))],
  ['kappa', 'Cohen’s κ (pass/fail)', fmtStat],
  ['accuracy', 'Accuracy', fmtStat],
  ['majority_baseline', 'Majority baseline', fmtStat],
  ['mae', 'MAE', fmtStat],
  ['rmse', 'RMSE', fmtStat],
  ['pearson', 'Pearson', fmtStat],
  ['spearman', 'Spearman', fmtStat],
];

/**
 * The metrics of one evaluator, with the previous run's beside them when there is one.
 * @param {CalibrationMetrics} m
 * @param {CalibrationMetrics | null | undefined} previous the previous run's metrics of the same evaluator
 * @param {string} label
 */
export function metricsTable(m, previous, label) {
  return tableWrap(
    h(
      'table',
      { 'aria-label': label, class: 'metrics' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          h('th', { scope: 'col' }, 'Metric'),
          h('th', { scope: 'col' }, 'This run'),
          previous ? h('th', { scope: 'col' }, `Previous run (v${previous.evaluator_version})`) : null,
        ),
      ),
      h(
        'tbody',
        {},
        ROWS.map(([key, name, fmt]) =>
          h(
            'tr',
            { 'data-metric': key },
            h('th', { scope: 'row' }, name),
            h('td', { class: 'num' }, fmt(/** @type {number | null | undefined} */ (m[key]))),
            previous ? h('td', { class: 'num muted' }, fmt(/** @type {number | null | undefined} */ (previous[key]))) : null,
          ),
        ),
      ),
    ),
  );
}

/**
 * How well the judge's confidence predicted agreement with the person: the ECE and the non-empty
 * reliability bins (calibration/reliability.ts on the server). Without any confidence, it says so.
 * @param {CalibrationMetrics} m
 * @param {string} label
 */
export function reliabilityTable(m, label) {
  if (m.ece === null || m.ece === undefined || !m.reliability) {
    return notice('The judge gave no confidence on these results, so there is nothing to check it against.', 'info');
  }
  const head = ['Confidence', 'Items', 'Mean confidence', 'Agreement'].map((t) => h('th', { scope: 'col' }, t));
  const rows = m.reliability
    .filter((b) => b.n > 0)
    .map((b) =>
      h(
        'tr',
        { 'data-bin': b.lo.toFixed(1) },
        h('th', { scope: 'row' }, `${b.lo.toFixed(1)}–${b.hi.toFixed(1)}`),
        h('td', { class: 'num' }, String(b.n)),
        h('td', { class: 'num' }, fmtStat(b.mean_confidence)),
        h('td', { class: 'num' }, fmtStat(b.agreement_rate)),
      ),
    );
  return h(
    'div',
    { class: 'reliability' },
    h(
      'p',
      { class: 'muted' },
      `Expected calibration error ${fmtStat(m.ece)} (0 = the confidence matches how often the judge agrees). Agreement: the judge within 0.2 of the person. A confidence the model states is a weak signal until this is low.`,
    ),
    tableWrap(h('table', { 'aria-label': label, class: 'metrics' }, h('thead', {}, h('tr', {}, head)), h('tbody', {}, rows))),
  );
}

export const statusBadge = (/** @type {string} */ status) => badge(status, status === 'completed' ? 'good' : status === 'failed' || status === 'cancelled' ? 'bad' : 'need');

/**
 * A judge's or evaluator's `calibration` summary, or "uncalibrated" with a link to start one.
 * @param {CalibrationSummary | null | undefined} summary

 * @param {string} startHref
 */
export function calibrationSummary(summary, startHref) {
  if (!summary) {
    return h('span', {}, badge('uncalibrated', 'need'), ' no calibration run measured this version. ', link(startHref, 'Calibrate it'));
  }
  return h(
    'span',
    {},
    // h-review: the fitness level instead of a bare "calibrated" badge (SPEC section 17), and κ's 95% interval.
    badge(summary.fitness ?? 'exploration', summary.fitness === 'gating' ? 'good' : summary.fitness === 'monitoring' ? 'need' : 'bad'),
    ` κ ${fmtStat(summary.kappa)} · MAE ${fmtStat(summary.mae)} on ${summary.n} labelled item${summary.n === 1 ? '' : 's'}${summary.kappa_interval ? ` · κ 95% ${fmtStat(summary.kappa_interval[0])}–${fmtStat(summary.kappa_interval[1])}` : ''} · `,
    time(summary.finished_at),
    ' · ',
    link(`/app/calibrations/${encodeURIComponent(summary.calibration_run_id)}`, 'report'),
  );
}
