// Evaluators: presets and custom ones, searchable.
import { api } from '../lib/api.js';
import { h } from '../lib/dom.js';
import { badge, field, link, needs, pageHeading, select, firstPage, showPage } from '../lib/ui.js';

/**
 * @param {import('../lib/types.js').PageElement} page
 * @param {import('../lib/types.js').PageContext} ctx
 */
export default async function evaluators(page, { app, query }) {
  const search = query.get('search') ?? '';
  const kind = query.get('kind') ?? 'all';
  const own = await app.ownProjectIds();

  const searchInput = h('input', { type: 'search', value: search, autocomplete: 'off' });
  const kindSelect = select(
    'kind',
    [
      ['all', 'All evaluators'],
      ['preset', 'Presets only'],
      ['custom', 'Custom only (no presets)'],
    ],
    kind,
  );
  const form = h(
    'form',
    { class: 'filters simple', role: 'search', 'aria-label': 'Search evaluators' },
    field({ label: 'Search names and intents', name: 'search' }, searchInput),
    field({ label: 'Show', name: 'kind' }, kindSelect),
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Search')),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const params = new URLSearchParams();
    if (searchInput.value.trim()) params.set('search', searchInput.value.trim());
    if (kindSelect.value !== 'all') params.set('kind', kindSelect.value);
    app.navigate(`/app/evaluators${params.size ? `?${params}` : ''}`);
  });

  const listArea = h('div');
  /**
   * @param {string | undefined} cursor
   */
  async function load(cursor) {
    const isPreset = kind === 'preset' ? 'true' : kind === 'custom' ? 'false' : undefined;
    const data = await api('GET', '/v1/evaluators/', { query: { search, is_preset: isPreset, limit: 100, cursor } });
    showPage(listArea, cursor, data, {
      label: 'Evaluators',
      columns: ['Name', 'Intent', 'Required inputs', 'Version', 'Kind'],
      empty: () => h('p', { class: 'empty' }, search ? `No evaluator matches “${search}”. ` : 'No evaluators here yet. ', link('/app/evaluators/new', 'Write one'), '.'),
      row: (e) =>
        h(
          'tr',
          {},
          h('th', { scope: 'row' }, link(`/app/evaluators/${encodeURIComponent(e.id)}`, e.name)),
          h('td', { class: 'intent' }, h('div', { class: 'clamp' }, e.intent)),
          h('td', {}, needs(e)),
          h('td', { class: 'num' }, String(e.version)),
          h('td', {}, e.is_preset ? badge('preset', 'preset') : own.has(e.project_id) ? badge('yours', 'good') : badge('public')),
        ),
      more: 'Show more evaluators',
      load,
    });
  }

  page.append(
    pageHeading('Evaluators', link('/app/evaluators/new', 'New evaluator', { class: 'button' })),
    h(
      'p',
      { class: 'lead' },
      'An evaluator measures one quality and scores it from 0 to 1 with a written justification, following its rubric. Presets ship with Tribunal; they are public and read-only.',
    ),
    form,
    listArea,
  );
  await firstPage(listArea, load);
}
