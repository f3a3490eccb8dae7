// Score over time, one line per evaluator, drawn as inline SVG (colours come from style.css classes,
// so the CSP needs no inline styles).
import { h, s, uid } from './dom.js';

const H = 280;
const M = { left: 40, right: 16, top: 14, bottom: 36 };
const COLORS = 8;

/** logs: execution logs (any order). Returns a figure, or null when no run has a score. */
export function scoreChart(logs, { caption }) {
  const series = new Map();
  const sorted = [...logs].sort((a, b) => a.created_at.localeCompare(b.created_at));
  for (const log of sorted) {
    for (const r of log.evaluator_results) {
      if (typeof r.score !== 'number') continue;
      if (!series.has(r.evaluator_id)) series.set(r.evaluator_id, { name: r.evaluator_name, points: [] });
      series.get(r.evaluator_id).points.push({ t: Date.parse(log.created_at), score: r.score, logId: log.id });
    }
  }
  if (!series.size) return null;
  // Drawn at about the width it is shown at, so its text stays readable on a phone.
  const W = Math.round(Math.min(720, Math.max(320, window.innerWidth - 48)));
  const ticks = W < 500 ? 2 : 4;

  const times = [...series.values()].flatMap((se) => se.points.map((p) => p.t));
  // A little room on both sides so the first and last points are not on the frame.
  const first = Math.min(...times);
  const span = Math.max(Math.max(...times) - first, 2000);
  const t0 = first - span * 0.04 - (Math.max(...times) === first ? span / 2 : 0);
  const t1 = t0 + span * 1.08;
  const plotW = W - M.left - M.right;
  const plotH = H - M.top - M.bottom;
  const x = (t) => M.left + ((t - t0) / (t1 - t0)) * plotW;
  const y = (score) => M.top + (1 - score) * plotH;

  const titleId = uid('chart');
  const descId = uid('chart-desc');
  const means = [...series.values()].map((se) => `${se.name} averages ${(se.points.reduce((a, p) => a + p.score, 0) / se.points.length).toFixed(2)} over ${se.points.length} runs`);
  const svg = s(
    'svg',
    { viewBox: `0 0 ${W} ${H}`, class: 'chart', role: 'img', 'aria-labelledby': `${titleId} ${descId}`, preserveAspectRatio: 'xMidYMid meet' },
    s('title', { id: titleId }, caption),
    s('desc', { id: descId }, `From ${new Date(t0).toLocaleString()} to ${new Date(t1).toLocaleString()}: ${means.join('; ')}.`),
  );

  const grid = s('g', { class: 'grid' });
  for (const v of [0, 0.25, 0.5, 0.75, 1]) {
    grid.append(
      s('line', { x1: M.left, x2: W - M.right, y1: y(v), y2: y(v) }),
      s('text', { x: M.left - 6, y: y(v) + 4, 'text-anchor': 'end' }, v.toFixed(2)),
    );
  }
  const sameDay = new Date(t0).toDateString() === new Date(t1).toDateString();
  const fmt = new Intl.DateTimeFormat(
    undefined,
    t1 - t0 < 3_600_000 ? { hour: '2-digit', minute: '2-digit', second: '2-digit' } : sameDay ? { hour: '2-digit', minute: '2-digit' } : { month: 'short', day: 'numeric' },
  );
  for (let i = 0; i <= ticks; i++) {
    const t = t0 + ((t1 - t0) * i) / ticks;
    grid.append(s('text', { x: x(t), y: H - M.bottom + 18, 'text-anchor': i === 0 ? 'start' : i === ticks ? 'end' : 'middle' }, fmt.format(new Date(t))));
  }
  grid.append(s('line', { class: 'axis', x1: M.left, x2: W - M.right, y1: y(0), y2: y(0) }));
  svg.append(grid);

  const legend = h('ul', { class: 'legend' });
  let i = 0;
  for (const se of series.values()) {
    const cls = `s${i % COLORS}`;
    const g = s('g', { class: `series ${cls}` });
    if (se.points.length > 1) g.append(s('polyline', { points: se.points.map((p) => `${x(p.t).toFixed(1)},${y(p.score).toFixed(1)}`).join(' ') }));
    for (const p of se.points) {
      // Each point opens its run.
      g.append(
        s(
          'a',
          { href: `/app/logs/${encodeURIComponent(p.logId)}`, 'aria-label': `${se.name}: ${p.score.toFixed(2)} at ${new Date(p.t).toLocaleString()}` },
          s('circle', { cx: x(p.t).toFixed(1), cy: y(p.score).toFixed(1), r: 4 }, s('title', {}, `${se.name}: ${p.score.toFixed(2)} at ${new Date(p.t).toLocaleString()}`)),
        ),
      );
    }
    svg.append(g);
    const last = se.points[se.points.length - 1];
    legend.append(h('li', {}, h('span', { class: `swatch ${cls}`, 'aria-hidden': 'true' }), `${se.name} `, h('span', { class: 'muted' }, `(latest ${last.score.toFixed(2)}, ${se.points.length} run${se.points.length === 1 ? '' : 's'})`)));
    i++;
  }
  return h('figure', { class: 'chart-figure' }, svg, h('figcaption', {}, legend));
}
