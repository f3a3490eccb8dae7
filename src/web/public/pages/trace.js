// One trace (SPEC section 14): its spans as a tree, each with what an evaluation would judge from it
// (or why it cannot be read) and the evaluations linked to it, each linking to its execution log.
/** @import { TraceSpan } from '../lib/types.js' */
import { api } from '../lib/api.js';
import { h } from '../lib/dom.js';
import { extractedView, unreadableText } from '../lib/extracted.js';
import { badge, fmtMs, link, pageHeading, scoreBar, time } from '../lib/ui.js';

const durationMs = (/** @type {TraceSpan} */ s) => Number(BigInt(s.end_time_unix_nano) - BigInt(s.start_time_unix_nano)) / 1e6;
// Deeper levels stop indenting, so a deep agent trace still fits the page.
const MAX_INDENT = 10;

/**
 * @param {import('../lib/types.js').PageElement} page
 * @param {import('../lib/types.js').PageContext} ctx
 */
export default async function trace(page, { params }) {
  /** @type {{ trace_id: string, spans: TraceSpan[] }} */
  const t = await api('GET', `/v1/traces/${encodeURIComponent(params.id)}/`);
  const root = t.spans.find((s) => s.depth === 0) ?? t.spans[0];
  const services = [...new Set(t.spans.map((s) => s.service_name).filter(Boolean))];
  const evaluations = t.spans.reduce((n, s) => n + s.evaluations.length, 0);
  const starts = t.spans.map((s) => s.start_time).sort();
  const ends = t.spans.map((s) => s.end_time).sort();
  page.append(
    pageHeading(`Trace: ${root.name}`, link(`/app/logs?trace_id=${encodeURIComponent(t.trace_id)}`, 'Its execution logs', { class: 'button secondary' })),
    h(
      'dl',
      { class: 'facts' },
      h('dt', {}, 'Trace id'),
      h('dd', {}, h('code', {}, t.trace_id)),
      h('dt', {}, services.length > 1 ? 'Services' : 'Service'),
      h('dd', {}, services.length ? services.join(', ') : h('span', { class: 'muted' }, 'unknown')),
      h('dt', {}, 'Started'),
      h('dd', {}, time(starts[0])),
      h('dt', {}, 'Duration'),
      h(
        'dd',
        {},
        fmtMs(
          new Date(/** @type {string} */ (ends.at(-1))).getTime() - // a trace has spans
            new Date(starts[0]).getTime(),
        ),
      ),
      h('dt', {}, 'Spans'),
      h('dd', {}, String(t.spans.length)),
      h('dt', {}, 'Evaluations'),
      h('dd', {}, String(evaluations)),
    ),
    h('section', { 'aria-labelledby': 'spans-title' }, h('h2', { id: 'spans-title' }, 'Spans'), h('ol', { class: 'span-tree', 'aria-label': 'Span tree' }, t.spans.map(spanItem))),
  );
}

/** @param {TraceSpan} s */
function spanItem(s) {
  const item = h(
    'li',
    { class: 'span-node', 'data-span-id': s.span_id },
    h(
      'div',
      { class: 'span-head' },
      s.depth ? h('span', { class: 'sr-only' }, `Level ${s.depth + 1}, under the span before it:`) : null,
      h('strong', { class: 'span-name' }, s.name),
      badge(s.kind),
      s.status.code === 'error' ? badge(s.status.message ? `error: ${s.status.message}` : 'error', 'bad') : null,
      s.evaluations.length ? badge(`${s.evaluations.length} evaluation${s.evaluations.length > 1 ? 's' : ''}`, 'good') : null,
      h('span', { class: 'muted small' }, `${s.service_name ?? 'unknown service'} · ${fmtMs(durationMs(s))}`),
    ),
    s.evaluations.length ? evaluationList(s.evaluations) : null,
    h(
      'details',
      { class: 'span-inputs', open: s.evaluations.length > 0 },
      h('summary', {}, s.extracted ? 'What would be judged' : 'Not readable'),
      s.extracted ? extractedView(s.extracted) : h('p', { class: 'muted' }, `Nothing to judge: ${unreadableText(s.unreadable ?? 'no_known_format')}.`),
    ),
    h(
      'details',
      { class: 'span-attributes' },
      h('summary', {}, `Attributes (${Object.keys(s.attributes).length})`),
      h('pre', { class: 'text' }, JSON.stringify(s.attributes, null, 2)),
    ),
  );
  item.style.setProperty('--depth', String(Math.min(s.depth, MAX_INDENT))); // CSSOM, allowed under the CSP
  return item;
}

const evaluationList = (/** @type {import('../lib/types.js').SpanEvaluationView[]} */ list) =>
  h(
    'ul',
    { class: 'span-evaluations', 'aria-label': 'Evaluations' },
    list.map((e) =>
      h(
        'li',
        {},
        h('span', { class: 'eval-name' }, e.name),
        scoreBar(e.score, e.name),
        link(`/app/logs/${encodeURIComponent(e.execution_log_id)}`, 'Execution log'),
        h('span', { class: 'muted small' }, ' ', time(e.created_at)),
      ),
    ),
  );
