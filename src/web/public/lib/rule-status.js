// An evaluation rule's status (SPEC section 14): every matched span in exactly one counted state, and
// a visible "falling behind" warning when the queue is not keeping up (its age or its depth), before
// it sheds work. Used by the rules list and, refreshed live, by the rule page.
import { h } from './dom.js';
import { unreadableText } from './extracted.js';
import { badge, fmtInt } from './ui.js';

/** Waiting units at this share of the rule's queue_limit count as falling behind (shedding is near). */
export const DEPTH_WARNING = 0.8;

const shed = (/** @type {import('./types.js').RuleStatus} */ st) => (st.skipped.shed_oldest ?? 0) + (st.skipped.shed_newest ?? 0);

/**
 * Why the rule is falling behind, or null when it keeps up.
 * @param {import('./types.js').Rule} rule
 */
export function fallingBehind(rule) {
  const st = rule.status;
  const why = [];
  if (st.backlog) why.push(`the oldest unit has waited ${Math.round(/** @type {number} */ (st.oldest_queued_age_s))} s (delay ${rule.delay_seconds} s)`); // a backlog has a waiting unit
  if (st.queued >= DEPTH_WARNING * rule.queue_limit)
    why.push(`${fmtInt(st.queued)} units wait, ${Math.round((100 * st.queued) / rule.queue_limit)}% of the queue limit ${fmtInt(rule.queue_limit)}`);
  if (!why.length) return null;
  const policy = rule.shed_policy === 'drop_oldest' ? 'the oldest waiting unit' : 'the newest unit';
  return `Falling behind: ${why.join('; ')}. When the queue is full, ${policy} is dropped and counted as skipped${shed(st) ? ` (${fmtInt(shed(st))} so far)` : ''}.`;
}

/**
 * A short summary for a table cell.
 * @param {import('./types.js').Rule} rule
 */
export function statusSummary(rule) {
  const st = rule.status;
  const skipped = Object.values(st.skipped).reduce((a, b) => a + b, 0);
  const warn = fallingBehind(rule);
  return h(
    'span',
    { class: 'status-summary' },
    `${fmtInt(st.matched)} matched · ${fmtInt(st.done)} done · ${fmtInt(st.queued + st.running)} waiting · ${fmtInt(st.failed)} failed · ${fmtInt(skipped)} skipped`,
    warn ? [' ', badge('falling behind', 'warn')] : null,
  );
}

/** @type {Array<[key: 'matched' | 'sampled' | 'queued' | 'running' | 'done' | 'failed', label: string, hint: string]>} */
const COUNTERS = [
  ['matched', 'Matched', 'spans that passed the filter'],
  ['sampled', 'Sampled', 'in the sample (sampling_rate)'],
  ['queued', 'Queued', 'waiting to be judged'],
  ['running', 'Running', 'being judged now'],
  ['done', 'Done', 'judged: an execution log each'],
  ['failed', 'Failed', 'the run failed'],
];

/**
 * The counters as a definition list, the skipped reasons, the oldest waiting age and the warning.
 * @param {import('./types.js').Rule} rule

 */
export function statusView(rule) {
  const st = rule.status;
  const warn = fallingBehind(rule);
  const skipped = Object.entries(st.skipped).sort((a, b) => b[1] - a[1]);
  return h(
    'div',
    { class: 'rule-status' },
    // role=status (polite): the rule page re-renders only when the status changed, so it is announced then.
    warn ? h('p', { class: 'notice warn falling-behind', role: 'status' }, warn) : null,
    h(
      'dl',
      { class: 'counters' },
      COUNTERS.map(([key, label, hint]) => h('div', { class: 'counter', 'data-counter': key, title: hint }, h('dt', {}, label), h('dd', {}, fmtInt(st[key])))),
      h(
        'div',
        { class: 'counter', 'data-counter': 'oldest_queued_age_s', title: 'age of the oldest waiting unit, its delay included' },
        h('dt', {}, 'Oldest waiting'),
        h('dd', {}, st.oldest_queued_age_s === null ? '—' : `${Math.round(st.oldest_queued_age_s)} s`),
      ),
    ),
    h('h3', {}, 'Skipped'),
    skipped.length
      ? h(
          'ul',
          { class: 'skipped' },
          skipped.map(([reason, n]) =>
            h(
              'li',
              { 'data-reason': reason },
              h('strong', {}, fmtInt(n)),
              ' ',
              reason,
              reason.startsWith('unreadable_') ? h('span', { class: 'muted small' }, ` — ${unreadableText(reason)}`) : null,
            ),
          ),
        )
      : h('p', { class: 'muted' }, 'None.'),
  );
}
