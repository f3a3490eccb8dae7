// Review queues of the organization: progress and agreement per queue, each a link to its review page.
import { api } from '../lib/api.js';
import { h } from '../lib/dom.js';
import { link, pageHeading, tableWrap } from '../lib/ui.js';

/**
 * @param {import('../lib/types.js').PageElement} page
 */
export default async function reviews(page) {
  const { results } = await api('GET', '/v1/review-queues/', { query: { limit: 200 } });
  page.append(pageHeading('Review queues'));
  if (!results.length) {
    page.append(h('p', { class: 'muted' }, 'No review queues yet. Create one with POST /v1/review-queues/ (docs/REVIEW.md).'));
    return;
  }
  const alpha = (/** @type {{ agreement: any[]; }} */ q) =>
    q.agreement.map((/** @type {{ alpha: number | null; }} */ a) => (a.alpha === null ? '—' : a.alpha.toFixed(2))).join(' · ');
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
          results.map(
            (
              /** @type {{ id: string | number | boolean; name: import("../lib/dom.js").Child; counts: { done: any; leased: any; queued: any; skipped: any; }; annotators_per_item: any; }} */ q,
            ) =>
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
