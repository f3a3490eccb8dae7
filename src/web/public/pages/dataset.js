// One dataset: its items in the order they were added, a file import (JSONL or CSV, streamed to the
// server as it is read), a batch run of a judge over it, the export, and delete.
import { api } from '../lib/api.js';
import { clear, h } from '../lib/dom.js';
import { ownerLabels } from '../lib/owner.js';
import { button, checkboxField, confirmDialog, errorBox, field, link, notice, pageHeading, select, showFormError, tableWrap, time, withBusy, showMore } from '../lib/ui.js';

const preview = (/** @type {string | null | undefined} */ text) => (text == null ? h('span', { class: 'muted' }, '—') : h('div', { class: 'clamp' }, text));

/**
 * @param {import('../lib/types.js').PageElement} page
 * @param {import('../lib/types.js').PageContext} ctx
 */
export default async function dataset(page, { app, params }) {
  const d = await api('GET', `/v1/datasets/${encodeURIComponent(params.id)}/`);
  const path = `/v1/datasets/${encodeURIComponent(d.id)}`;
  const actionError = h('div');

  const fileInput = h('input', { type: 'file', accept: '.jsonl,.ndjson,.csv,application/x-ndjson,text/csv' });
  const submit = h('button', { type: 'submit' }, 'Import');
  const result = h('div', { 'aria-live': 'polite' });
  const form = h(
    'form',
    { class: 'filters simple', 'aria-label': 'Import items' },
    field({ label: 'Import a file', name: 'file', hint: 'JSON Lines (one item per line) or CSV with a header row; bad lines are skipped and listed.' }, fileInput),
    h('div', { class: 'actions' }, submit),
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const file = fileInput.files?.[0];
    if (!file) return showFormError(form, { message: 'Choose a .jsonl or .csv file first.', errors: [{ field: 'file', message: 'no file chosen' }] });
    const csv = /\.csv$/i.test(file.name) || file.type === 'text/csv';
    try {
      const answer = await withBusy(submit, 'Importing…', () => api('POST', `${path}/items/import/`, { rawBody: file, contentType: csv ? 'text/csv' : 'application/x-ndjson' }));
      /** @type {Node[]} */
      const shown = [notice(`Imported ${answer.created} items from ${file.name}; skipped ${answer.skipped_count} lines.`, answer.skipped_count ? 'info' : 'success')];
      // The skipped lines are listed only when there are some (the first 50).
      if (answer.skipped.length) {
        const lines = answer.skipped.slice(0, 50).map((/** @type {{ line: number, error: string }} */ s) => h('li', {}, `line ${s.line}: ${s.error}`));
        shown.push(h('ul', { class: 'skipped' }, lines));
      }
      clear(result).append(...shown);
      await loadItems();
    } catch (err) {
      showFormError(form, err);
    }
  });

  // Run a judge over every item on the server, then follow it on the batch page.
  /** @type {import('../lib/types.js').ListPage<import('../lib/types.js').Judge>} */
  const judges = await api('GET', '/v1/judges/', { query: { limit: 200 } });
  const judgeLabel = ownerLabels(judges.results, await app.ownProjectIds()); // issue 26 item 2: owners of shared names
  const judgeSelect = select('judge_id', [['', 'Choose a judge'], ...judges.results.map((j) => /** @type {[string, string]} */ ([j.id, judgeLabel.get(j.id)]))], '');
  const runTags = h('input', { type: 'text', autocomplete: 'off' });
  const useCache = checkboxField({ label: 'Reuse cached results', name: 'use_cache', hint: 'Rows identical to an earlier run may reuse its result.' });
  const runSubmit = h('button', { type: 'submit' }, 'Run batch');
  const runForm = h(
    'form',
    { class: 'filters simple', 'aria-label': 'Run a judge over this dataset', novalidate: true },
    field({ label: 'Judge', name: 'judge_id', required: true }, judgeSelect),
    field({ label: 'Tags', name: 'tags', hint: 'Comma-separated labels added to every row’s log.' }, runTags),
    useCache,
    h('div', { class: 'actions' }, runSubmit),
    h('div', { class: 'form-error' }),
  );
  runForm.addEventListener('submit', async (e) => {
    e.preventDefault();
    if (!judgeSelect.value) return showFormError(runForm, { message: 'Choose a judge to run.', errors: [{ field: 'judge_id', message: 'no judge chosen' }] });
    const tags = runTags.value
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean);
    const useCacheBox = /** @type {HTMLInputElement} */ (useCache.querySelector('input')); // a checkbox field
    const body = { dataset_id: d.id, ...(tags.length ? { tags } : {}), ...(useCacheBox.checked ? { use_cache: true } : {}) };

    try {
      const started = await withBusy(runSubmit, 'Starting…', () => api('POST', `/v1/judges/${encodeURIComponent(judgeSelect.value)}/batch-execute/`, { body }));
      app.flash(`Batch run started over ${d.item_count} items.`);
      app.navigate(`/app/batches/${encodeURIComponent(started.batch_execution_id)}`);
    } catch (err) {
      showFormError(runForm, err);
    }
  });

  const itemsArea = h('div');
  /**
   * @param {string} [cursor] the next page's cursor; none for the first page
   */
  async function loadItems(cursor) {
    const data = await api('GET', `${path}/items/`, { query: { limit: 50, cursor } });
    let tbody = /** @type {HTMLTableSectionElement} */ (itemsArea.querySelector('tbody')); // a later page adds to the first page's table
    if (!cursor) {
      if (!data.results.length) {
        clear(itemsArea).append(h('p', { class: 'empty' }, 'No items yet: import a file above.'));
        return;
      }
      tbody = h('tbody');
      clear(itemsArea).append(
        tableWrap(
          h(
            'table',
            { 'aria-label': 'Items' },
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                ['Request', 'Response', 'Contexts', 'Tags', 'Expected scores'].map((t) => h('th', { scope: 'col' }, t)),
              ),
            ),
            tbody,
          ),
        ),
      );
    }
    for (const item of data.results) {
      tbody.append(
        h(
          'tr',
          { 'data-item': item.id },
          // A conversation item shows its first user turn as the request and its last turn as the response.
          h('td', { class: 'intent' }, preview(item.turns ? (item.turns.find((/** @type {{ role: string; }} */ t) => t.role === 'user')?.content ?? '') : item.request)),
          h('td', { class: 'intent' }, preview(item.turns ? `${item.turns[item.turns.length - 1].content} (${item.turns.length} turns)` : item.response)),
          h('td', { class: 'num' }, String(item.contexts?.length ?? 0)),
          h('td', {}, item.tags.join(', ')),
          h(
            'td',
            {},
            item.expected_scores
              ? Object.entries(item.expected_scores)
                  .map(([k, v]) => `${k}: ${v}`)
                  .join(', ')
              : '',
          ),
        ),
      );
    }
    showMore(itemsArea, 'Show more items', data.next_cursor, loadItems);
  }

  page.append(
    pageHeading(
      d.name,
      link(`${path}/items/export/`, 'Export JSONL', { class: 'button secondary', download: `${d.name}.jsonl` }),
      button('Delete', {
        class: 'danger',
        onclick: async () => {
          const ok = await confirmDialog({
            title: `Delete dataset “${d.name}”?`,
            message: 'The dataset and all its items are deleted. Execution logs stay. This cannot be undone.',
            confirmText: 'Delete dataset',
          });
          if (!ok) return;
          try {
            await api('DELETE', `${path}/`);
            app.flash(`Dataset “${d.name}” was deleted.`);
            app.navigate('/app/datasets');
          } catch (err) {
            clear(actionError).append(errorBox(err));
          }
        },
      }),
    ),
    actionError,
    h('p', { class: 'meta' }, h('span', { class: 'muted' }, `${d.item_count} items · updated `), time(d.updated_at), h('span', { class: 'muted' }, ` · id ${d.id}`)),
    d.description ? h('p', { class: 'lead' }, d.description) : null,
    h('h2', {}, 'Run a judge over it'),
    runForm,
    h('p', {}, link(`/app/batches?dataset_id=${encodeURIComponent(d.id)}`, 'Batch runs over this dataset')),
    h('h2', {}, 'Import'),
    form,
    result,
    h('h2', {}, 'Items'),
    itemsArea,
  );
  await loadItems();
}
