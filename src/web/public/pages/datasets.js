// Datasets: the organization's datasets, newest first, and a form to make one.
import { api } from '../lib/api.js';
import { h } from '../lib/dom.js';
import { field, link, pageHeading, showFormError, firstPage, showPage, time, withBusy } from '../lib/ui.js';

/**
 * @param {import('../lib/types.js').PageElement} page
 * @param {import('../lib/types.js').PageContext} ctx
 */
export default async function datasets(page, { app }) {
  const name = h('input', { autocomplete: 'off', maxlength: 200 });
  const description = h('input', { autocomplete: 'off', maxlength: 2000 });
  const submit = h('button', { type: 'submit' }, 'Create dataset');
  const form = h(
    'form',
    { class: 'filters simple', 'aria-label': 'New dataset' },
    field({ label: 'Name', name: 'name', required: true }, name),
    field({ label: 'Description', name: 'description' }, description),
    h('div', { class: 'actions' }, submit),
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      const made = await withBusy(submit, 'Creating…', () =>
        api('POST', '/v1/datasets/', { body: { name: name.value.trim(), description: description.value.trim() || undefined } }),
      );
      app.flash(`Dataset “${made.name}” was created: import a file to fill it.`);
      app.navigate(`/app/datasets/${encodeURIComponent(made.id)}`);
    } catch (err) {
      showFormError(form, err);
    }
  });

  const listArea = h('div');
  /**
   * @param {string | undefined} cursor
   */
  async function load(cursor) {
    const data = await api('GET', '/v1/datasets/', { query: { limit: 50, cursor } });
    showPage(listArea, cursor, data, {
      label: 'Datasets',
      columns: ['Name', 'Description', 'Items', 'Updated'],
      empty: () => h('p', { class: 'empty' }, 'You have no datasets yet: create one above, then import a JSONL or CSV file into it.'),
      row: (d) =>
        h(
          'tr',
          {},
          h('th', { scope: 'row' }, link(`/app/datasets/${encodeURIComponent(d.id)}`, d.name)),
          h('td', { class: 'intent' }, h('div', { class: 'clamp' }, d.description)),
          h('td', { class: 'num' }, String(d.item_count)),
          h('td', {}, time(d.updated_at)),
        ),
      more: 'Show more datasets',
      load,
    });
  }

  page.append(
    pageHeading('Datasets'),
    h('p', { class: 'lead' }, 'A dataset holds inputs to run judges over: responses with their requests, contexts, reference answers, and the scores people expect.'),
    form,
    listArea,
  );
  await firstPage(listArea, load);
}
