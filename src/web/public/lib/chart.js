// Score over time, one line per evaluator, drawn as inline SVG (colours come from style.css classes,
// so the CSP needs no inline styles). The x axis is ordinal, one evenly spaced slot per run, oldest to
// newest: a burst of runs in one minute after weeks of quiet would squeeze into one edge on a linear
// time axis. Series are nudged apart inside a slot and each has its own marker shape, so two
// evaluators with equal scores stay visible.
import { chartRuns } from './chart-runs.js';
import { h, s, uid } from './dom.js';

const H = 280;
const M = { left: 40, right: 16, top: 14, bottom: 36 };
const COLORS = 8;
const SHAPES = ['circle', 'square', 'diamond', 'triangle'];

/**
 * Gives a series' line and markers its colour (--s0 .. --s7, by its place): style.css strokes and
 * fills with --series-colour. Set through the CSSOM, which the page's CSP allows (a style attribute
 * in markup it would refuse).
 * @template {SVGElement} E
 * @param {E} el
 * @param {string} cls
 * @returns {E}
 */
function inSeriesColour(el, cls) {
  el.style.setProperty('--series-colour', `var(--${cls})`);
  return el;
}

/**
 * A marker of `shape` centred on (cx, cy), about 8 px across, with `title` as its tooltip when given.
 * @param {string} shape
 * @param {number} cx
 * @param {number} cy
 * @param {string} [title]
 */
function marker(shape, cx, cy, title) {
  const at = (/** @type {number} */ dx, /** @type {number} */ dy) => `${(cx + dx).toFixed(1)},${(cy + dy).toFixed(1)}`;
  const tip = title ? s('title', {}, title) : null;
  if (shape === 'square') return s('rect', { class: 'marker', x: (cx - 3.5).toFixed(1), y: (cy - 3.5).toFixed(1), width: 7, height: 7 }, tip);
  if (shape === 'diamond') return s('polygon', { class: 'marker', points: [at(0, -5), at(5, 0), at(0, 5), at(-5, 0)].join(' ') }, tip);
  if (shape === 'triangle') return s('polygon', { class: 'marker', points: [at(0, -5), at(4.5, 3.5), at(-4.5, 3.5)].join(' ') }, tip);
  return s('circle', { class: 'marker', cx: cx.toFixed(1), cy: cy.toFixed(1), r: 4 }, tip);
}

/**
 * Time labels as precise as the runs' spread needs.
 * @param {number} first epoch milliseconds
 * @param {number} last epoch milliseconds
 */
function timeFormat(first, last) {
  const span = last - first;
  if (span < 3_600_000 && new Date(first).toDateString() === new Date(last).toDateString())
    return new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });
  if (new Date(first).toDateString() === new Date(last).toDateString()) return new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
  return new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
}

/**
 * logs: execution logs (any order); batchRuns: batch runs, one point each. Returns a figure, or null when no run has a score.
 * @param {import('./types.js').ExecutionLog[]} logs
 * @param {{ caption: string, batchRuns?: import('./types.js').BatchExecution[] }} opts
 */
export function scoreChart(logs, { caption, batchRuns = [] }) {
  /** @typedef {{ run: number, t: number, score: number, href: string, batchRows: number }} Point one run's score, `run` its place on the x axis */
  /** @type {Map<string, { name: string, points: Point[] }>} */
  const series = new Map();
  // issue 26 item 7: a batch run is one point (its mean), not one per row.
  const runs = chartRuns(logs, batchRuns);
  runs.forEach((log, run) => {
    for (const r of log.evaluator_results) {
      if (!series.has(r.evaluator_id)) series.set(r.evaluator_id, { name: r.evaluator_name, points: [] });
      /** @type {{ points: Point[] }} */ (series.get(r.evaluator_id)).points.push({
        run,
        t: Date.parse(log.created_at),
        score: r.score,
        href: log.href,
        batchRows: log.batch?.rows ?? 0,
      });
    }
  });
  if (!series.size) return null;
  // Drawn at about the width it is shown at, so its text stays readable on a phone.
  const W = Math.round(Math.min(720, Math.max(320, window.innerWidth - 48)));
  const ticks = W < 500 ? 2 : 4;

  const plotW = W - M.left - M.right;
  const plotH = H - M.top - M.bottom;
  const slot = plotW / runs.length;
  // Within a run's slot the series sit side by side (at most 7 px apart), centred on the slot.
  const nudge = series.size > 1 ? Math.min(7, (slot * 0.7) / (series.size - 1)) : 0;
  const x = (/** @type {number} */ run, k = (series.size - 1) / 2) => M.left + (run + 0.5) * slot + (k - (series.size - 1) / 2) * nudge;
  const y = (/** @type {number} */ score) => M.top + (1 - score) * plotH;
  const t0 = Date.parse(runs[0].created_at);
  const t1 = Date.parse(runs[runs.length - 1].created_at);
  const titleId = uid('chart');
  const descId = uid('chart-desc');
  const means = [...series.values()].map((se) => `${se.name} averages ${(se.points.reduce((a, p) => a + p.score, 0) / se.points.length).toFixed(2)} over ${se.points.length} runs`);
  const svg = s(
    'svg',
    { viewBox: `0 0 ${W} ${H}`, class: 'chart', role: 'img', 'aria-labelledby': `${titleId} ${descId}`, preserveAspectRatio: 'xMidYMid meet' },
    s('title', { id: titleId }, caption),
    s(
      'desc',
      { id: descId },
      `${runs.length} run${runs.length === 1 ? '' : 's'} from ${new Date(t0).toLocaleString()} to ${new Date(t1).toLocaleString()}, evenly spaced: ${means.join('; ')}.`,
    ),
  );

  const grid = s('g', { class: 'grid' });
  for (const v of [0, 0.25, 0.5, 0.75, 1]) {
    grid.append(s('line', { x1: M.left, x2: W - M.right, y1: y(v), y2: y(v) }), s('text', { x: M.left - 6, y: y(v) + 4, 'text-anchor': 'end' }, v.toFixed(2)));
  }
  // Labels under a few runs spread along the axis, each with that run's time; as many as fit without
  // touching (about 6.3 px a character at 11 px).
  const fmt = timeFormat(t0, t1);
  const labelW = fmt.format(new Date(t1)).length * 6.3 + 14;
  const wanted = Math.max(1, Math.min(runs.length, ticks + 1, Math.floor(plotW / labelW)));
  const picks = [...new Set(Array.from({ length: wanted }, (_, i) => (wanted === 1 ? runs.length - 1 : Math.round((i * (runs.length - 1)) / (wanted - 1)))))];
  let lastRight = -Infinity;
  for (const run of picks) {
    const centre = Math.min(Math.max(x(run), M.left + labelW / 2), W - M.right - labelW / 2);
    if (centre - labelW / 2 < lastRight) continue;
    lastRight = centre + labelW / 2;
    grid.append(s('text', { x: centre.toFixed(1), y: H - M.bottom + 18, 'text-anchor': 'middle' }, fmt.format(new Date(Date.parse(runs[run].created_at)))));
  }
  grid.append(s('line', { class: 'axis', x1: M.left, x2: W - M.right, y1: y(0), y2: y(0) }));
  svg.append(grid);

  const legend = h('ul', { class: 'legend' });
  let k = 0;
  for (const se of series.values()) {
    const cls = `s${k % COLORS}`;
    const shape = SHAPES[k % SHAPES.length];
    const g = inSeriesColour(s('g', { class: `series ${cls}`, 'data-shape': shape }), cls);
    const px = (/** @type {Point} */ p) => x(p.run, k);
    if (se.points.length > 1) g.append(s('polyline', { points: se.points.map((p) => `${px(p).toFixed(1)},${y(p.score).toFixed(1)}`).join(' ') }));
    for (const p of se.points) {
      // Each point opens its run.
      const of = p.batchRows ? ` (mean of a batch run's ${p.batchRows} row${p.batchRows === 1 ? '' : 's'})` : '';
      const label = `${se.name}: ${p.score.toFixed(2)}${of} at ${new Date(p.t).toLocaleString()}`;
      g.append(s('a', { href: p.href, 'aria-label': label }, marker(shape, px(p), y(p.score), label)));
    }
    svg.append(g);
    const last = se.points[se.points.length - 1];
    legend.append(
      h(
        'li',
        {},
        h(
          'span',
          { class: 'legend-marker', 'aria-hidden': 'true' },
          inSeriesColour(s('svg', { viewBox: '0 0 12 12', width: 12, height: 12, class: `series ${cls}` }, marker(shape, 6, 6)), cls),
        ),
        `${se.name} `,
        h('span', { class: 'muted' }, `(latest ${last.score.toFixed(2)}, ${se.points.length} run${se.points.length === 1 ? '' : 's'})`),
      ),
    );
    k++;
  }
  const note = h(
    'p',
    { class: 'muted chart-note' },
    'One slot per run, oldest to newest (evenly spaced, whatever the time between runs); a batch run is one slot, the mean of its rows.',
  );
  return h('figure', { class: 'chart-figure' }, svg, h('figcaption', {}, legend, note));
}
