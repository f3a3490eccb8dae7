// Review queues of the organization: progress and agreement per queue, each a link to its review page.
/** @import { ReviewQueue } from '../lib/types.js' */
import { api } from '../lib/api.js';
import { h } from '../lib/dom.js';
import { link, pageHeading, tableWrap } from '../lib/ui.js';

/**
 * @param {import('../lib/types.js').PageElement} page
 */
export default async function reviews(page) {
  /** @type {import('../lib/types.js').ListPage<ReviewQueue>} */
  const { results } = await api('GET', '/v1/review-queues/', { query: { limit: 200 } });
  page.append(pageHeading('Review queues'));
  if (!results.length) {
    page.append(h('p', { class: 'muted' }, 'No review queues yet. Create one with POST /v1/review-queues/ (docs/REVIEW.md).'));
    return;
  }
  const alpha = (/** @type {ReviewQueue} */ q) => q.agreement.map((a) => (a.alpha === null ? '—' : a.alpha.toFixed(2))).join(' · ');
  page.append(
    tableWrap(
      h(
        'table',
        { 'aria-label': 'Review queues' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ['Queue', 'Done', 'Being scored', 'Waiting', 'Skipped', 'People per item', 'Agreement (α)'].map((t) => h('th', {}, t)),
          ),
        ),
        h(
          'tbody',
          {},
          results.map((q) =>
            h(
              'tr',
              {},
              h('td', {}, link(`/app/review/${encodeURIComponent(q.id)}`, q.name)),
              [q.counts.done, q.counts.leased, q.counts.queued, q.counts.skipped, q.annotators_per_item, alpha(q)].map((v) => h('td', {}, String(v))),
            ),
          ),
        ),
      ),
    ),
  );
}
