// Batch runs: the organization's runs, newest first (filter by status, kept in the address), and a
// form to compare two ended runs over the same dataset (an experiment).
/** @import { BatchExecution } from '../lib/types.js' */
import { api } from '../lib/api.js';
import { clear, h } from '../lib/dom.js';
import { spendLine } from '../lib/spend.js';
import { badge, errorBox, field, fmtCost, link, pageHeading, select, showFormError, showMore, tableWrap, time } from '../lib/ui.js';

const STATUSES = ['queued', 'running', 'completed', 'failed', 'cancelled'];
const ENDED = new Set(['completed', 'failed', 'cancelled']);

export const statusBadge = (/** @type {string} */ status) => badge(status, `status-${status}`);
export const runLabel = (/** @type {BatchExecution} */ b) =>
  `${b.id.slice(0, 12)}… · ${b.status} · ${b.total} rows${b.dataset_id ? '' : ' (given items)'} · ${new Date(b.created_at).toLocaleString()}`;

/**
 * @param {import('../lib/types.js').PageElement} page
 * @param {import('../lib/types.js').PageContext} ctx
 */
export default async function batches(page, { app, query }) {
  const status = STATUSES.includes(/** @type {string} */ (query.get('status'))) ? /** @type {string} */ (query.get('status')) : ''; // includes(null) is false
  const datasetId = query.get('dataset_id') ?? '';
  const statusSelect = select('status', [['', 'Any status'], ...STATUSES.map((s) => /** @type {[string, string]} */ ([s, s]))], status);
  const filters = h(
    'form',
    { class: 'filters simple', 'aria-label': 'Filter batch runs' },
    field({ label: 'Status', name: 'status' }, statusSelect),
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Apply')),
  );
  filters.addEventListener('submit', (e) => {
    e.preventDefault();
    const params = new URLSearchParams();
    if (statusSelect.value) params.set('status', statusSelect.value);
    if (datasetId) params.set('dataset_id', datasetId);
    app.navigate(`/app/batches${params.size ? `?${params}` : ''}`);
  });

  const listArea = h('div');
  /** @type {BatchExecution[]} */
  const seen = [];
  /**
   * @param {string} [cursor]
   */
  async function load(cursor) {
    /** @type {import('../lib/types.js').ListPage<BatchExecution>} */
    const data = await api('GET', '/v1/judges/batch-executions/', { query: { limit: 50, cursor, status: status || undefined, dataset_id: datasetId || undefined } });
    let tbody = /** @type {HTMLTableSectionElement} */ (listArea.querySelector('tbody')); // a later page adds to the first page's table
    if (!cursor) {
      if (!data.results.length) {
        clear(listArea).append(h('p', { class: 'empty' }, 'No batch runs yet: open a dataset and run a judge over it.'));
        return;
      }
      tbody = h('tbody');
      clear(listArea).append(
        tableWrap(
          h(
            'table',
            { 'aria-label': 'Batch runs' },
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                ['Run of', 'Status', 'Rows', 'Failed', 'Dataset', 'Cost', 'Created'].map((t) => h('th', { scope: 'col' }, t)),
              ),
            ),
            tbody,
          ),
        ),
      );
    }
    // Names, not ids (issue 26): the judge (or evaluator) and the dataset; the ids are on hover.
    await Promise.all(data.results.flatMap((b) => [targetName(b), b.dataset_id ? nameOf('datasets', b.dataset_id) : null]));
    for (const b of data.results) {
      seen.push(b);
      tbody.append(
        h(
          'tr',
          { 'data-batch': b.id },
          h('th', { scope: 'row' }, link(`/app/batches/${encodeURIComponent(b.id)}`, await targetName(b), { title: b.id, 'aria-label': `Run ${b.id} of ${await targetName(b)}` })),
          h('td', {}, statusBadge(b.status)),
          h('td', { class: 'num' }, `${b.done + b.failed} / ${b.total}`),
          h('td', { class: 'num' }, String(b.failed)),
          h(
            'td',
            {},
            b.dataset_id
              ? link(`/app/datasets/${encodeURIComponent(b.dataset_id)}`, await nameOf('datasets', b.dataset_id), { title: b.dataset_id })
              : h('span', { class: 'muted' }, 'given items'),
          ),
          h('td', { class: 'num' }, fmtCost(b.cost_usd)),
          h('td', {}, time(b.created_at)),
        ),
      );
    }
    showMore(listArea, 'Show more runs', data.next_cursor, load);
    renderCompare();
  }

  // Compare two ended runs: A is the baseline, B the candidate.
  const compareArea = h('div');
  function renderCompare() {
    const ended = seen.filter((b) => ENDED.has(b.status));
    if (ended.length < 2) return clear(compareArea);
    const a = select(
      'a',
      ended.map((b) => [b.id, runLabel(b)]),
      ended[1].id,
    );
    const b = select(
      'b',
      ended.map((r) => [r.id, runLabel(r)]),
      ended[0].id,
    );
    const form = h(
      'form',
      { class: 'filters simple', 'aria-label': 'Compare two runs' },
      field({ label: 'Baseline (A)', name: 'a' }, a),
      field({ label: 'Candidate (B)', name: 'b', hint: 'Two runs over the same dataset: their rows are paired item by item.' }, b),
      h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Compare runs')),
      h('div', { class: 'form-error' }),
    );
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      if (a.value === b.value) return showFormError(form, { message: 'Choose two different runs.', errors: [{ field: 'b', message: 'same run as A' }] });
      app.navigate(`/app/experiments?a=${encodeURIComponent(a.value)}&b=${encodeURIComponent(b.value)}`);
    });
    clear(compareArea).append(h('h2', {}, 'Compare two runs'), form);
  }

  page.append(
    pageHeading('Batch runs'),
    h('p', { class: 'lead' }, 'A batch run scores every item of a dataset with a judge on the server. Start one from a dataset’s page.'),
    spendLine(), // room h-cost
    datasetId ? h('p', {}, `Runs over dataset ${datasetId}. `, link('/app/batches', 'All runs')) : null,
    filters,
    listArea,
    compareArea,
  );
  try {
    await load();
  } catch (err) {
    clear(listArea).append(errorBox(err));
  }
}

// A resource's name by id, asked once per page load; the id itself when it cannot be read (deleted).
/** @type {Map<string, Promise<string>>} */
const names = new Map();
/**
 * @param {string} kind the REST collection: judges, evaluators, datasets
 * @param {string} id
 * @returns {Promise<string>}
 */
export function nameOf(kind, id) {
  const key = `${kind}/${id}`;
  if (!names.has(key))
    names.set(
      key,
      api('GET', `/v1/${kind}/${encodeURIComponent(id)}/`).then(
        (/** @type {{ name?: string }} */ r) => r.name ?? id,
        () => id,
      ),
    );
  return /** @type {Promise<string>} */ (names.get(key)); // set just above
}
/** What a run ran: its judge's (or evaluator's) name. */
export const targetName = (/** @type {Pick<BatchExecution, 'judge_id' | 'evaluator_id'>} */ b) =>
  b.judge_id ? nameOf('judges', b.judge_id) : nameOf('evaluators', /** @type {string} */ (b.evaluator_id)); // a run has a judge or else an evaluator
