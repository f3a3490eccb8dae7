// Judges: a searchable list, newest first. It opens on the caller's own judges; other organizations'
// public ones (demo users' drafts among them) are shown on request (?include_public=true).
import { api } from '../lib/api.js';
import { h } from '../lib/dom.js';
import { badge, checkboxField, field, link, pageHeading, firstPage, showPage, time } from '../lib/ui.js';

/**
 * @param {import('../lib/types.js').PageElement} page
 * @param {import('../lib/types.js').PageContext} ctx
 */
export default async function judges(page, { app, query }) {
  const search = query.get('search') ?? '';
  const includePublic = query.get('include_public') === 'true';
  const own = await app.ownProjectIds();

  const searchInput = h('input', { type: 'search', value: search, autocomplete: 'off' });
  const form = h(
    'form',
    { class: 'filters simple', role: 'search', 'aria-label': 'Search judges' },
    field({ label: 'Search names, intents and stages', name: 'search' }, searchInput),
    checkboxField({ label: 'Include public judges of other organizations', name: 'include_public', checked: includePublic }),
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Search')),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const params = new URLSearchParams();
    if (searchInput.value.trim()) params.set('search', searchInput.value.trim());
    if (/** @type {HTMLFormControlsCollection & { include_public: HTMLInputElement }} */ (form.elements).include_public.checked) params.set('include_public', 'true');
    app.navigate(`/app/judges${params.size ? `?${params}` : ''}`);
  });

  const listArea = h('div');
  /**
   * @param {string | undefined} cursor
   */
  async function load(cursor) {
    // The REST default includes public judges (SPEC section 2); the web app asks for them explicitly.
    const data = await api('GET', '/v1/judges/', { query: { search, include_public: String(includePublic), limit: 50, cursor } });
    showPage(listArea, cursor, data, {
      label: 'Judges',
      columns: ['Name', 'Intent', 'Stage', 'Evaluators', 'Owner', 'Updated'],
      empty: () => {
        const withPublic = new URLSearchParams({ ...(search ? { search } : {}), include_public: 'true' });
        return h(
          'p',
          { class: 'empty' },
          search ? `No judge${includePublic ? '' : ' of yours'} matches “${search}”. ` : includePublic ? 'No judges yet. ' : 'You have no judges yet. ',
          link('/app/judges/generate', 'Generate one from a description'),
          ' or ',
          link('/app/judges/new', 'assemble one from evaluators'),
          includePublic ? '.' : [', or ', link(`/app/judges?${withPublic}`, 'browse public judges of other organizations'), '.'],
        );
      },
      row: (j) =>
        h(
          'tr',
          {},
          h('th', { scope: 'row' }, link(`/app/judges/${encodeURIComponent(j.id)}`, j.name), j.generation?.status === 'draft' ? badge('draft', 'need') : null),
          h('td', { class: 'intent' }, h('div', { class: 'clamp' }, j.intent)),
          h('td', {}, j.stage ?? h('span', { class: 'muted' }, '—')),
          h('td', { class: 'num' }, String(j.evaluators.length)),
          h('td', {}, own.has(j.project_id) ? badge('yours', 'good') : badge('public')),
          h('td', {}, time(j.updated_at)),
        ),
      more: 'Show more judges',
      load,
    });
  }

  page.append(
    pageHeading(
      'Judges',
      link('/app/judges/generate', 'Generate a judge', { class: 'button' }),
      link('/app/judges/new', 'New judge from evaluators', { class: 'button secondary' }),
    ),
    h('p', { class: 'lead' }, 'A judge is a named set of evaluators for one stage of an application. Open one to see its evaluators, try it, and see its scores over time.'),
    form,
    listArea,
  );
  await firstPage(listArea, load);
}
