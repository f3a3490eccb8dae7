// Shared pieces of the pages: headings, error display, dates, score bars, dialogs, copy fields.
import { clear, h, uid } from './dom.js';

/** @import { Child, Leaf, Props } from './dom.js' */

/**
 * @param {string} title
 * @param {...Leaf} actions buttons and links beside the heading
 */
export function pageHeading(title, ...actions) {
  return h('div', { class: 'page-head' }, h('h1', { tabindex: '-1', text: title }), actions.length ? h('div', { class: 'actions' }, actions) : null);
}

export const link = (/** @type {string} */ href, /** @type {Child} */ text, /** @type {Props} */ props = {}) => h('a', { href, ...props }, text);
export const button = (/** @type {Child} */ text, /** @type {Props} */ props = {}) => h('button', { type: 'button', ...props }, text);

/**
 * A problem's detail, announced to screen readers.
 * @param {unknown} err usually an Error (an ApiError), but whatever was thrown
 */
export function errorBox(err) {
  return h('p', { class: 'error', role: 'alert' }, /** @type {{ message?: string } | null | undefined} */ (err)?.message ?? String(err));
}

/**
 * @param {Child} text
 * @param {string} [kind] info, warn...: the CSS class that colours it
 */
export function notice(text, kind = 'info') {
  return h('p', { class: `notice ${kind}`, role: 'status' }, text);
}

/**
 * A labelled form control: field({label, name, hint}, control). The wrapper carries data-field so a
 * problem's field errors land next to the control that caused them.
 * @param {{ label: string, name?: string, hint?: string | null, required?: boolean }} spec
 * @param {HTMLElement & { name?: string, required?: boolean }} control
 */
export function field({ label, name, hint, required }, control) {
  const id = control.id || uid(name || 'f');
  control.id = id;
  if (name && !control.name) control.name = name;
  const hintId = hint ? `${id}-hint` : null;
  if (hintId) control.setAttribute('aria-describedby', hintId);
  if (required) control.required = true;
  return h(
    'div',
    { class: 'field', 'data-field': name },
    h('label', { for: id }, label, required ? h('span', { class: 'req', 'aria-hidden': 'true' }, ' *') : null),
    control,
    hint ? h('p', { class: 'hint', id: hintId }, hint) : null,
  );
}

/** @param {{ label: string, name?: string, hint?: string, checked?: boolean }} spec */
export function checkboxField({ label, name, hint, checked }) {
  const id = uid(name);
  const hintId = hint ? `${id}-hint` : null;
  const input = h('input', { type: 'checkbox', id, name, checked, 'aria-describedby': hintId });
  return h('div', { class: 'field check', 'data-field': name }, input, h('label', { for: id }, label), hint ? h('p', { class: 'hint', id: hintId }, hint) : null);
}

/**
 * A select of [value, text] options, with `value` chosen.
 * @param {string} name
 * @param {ReadonlyArray<readonly [string | number, string]>} options
 * @param {string | number | null} [value]
 */
export function select(name, options, value) {
  return h(
    'select',
    { name },
    options.map(([v, text]) => h('option', { value: v, selected: String(v) === String(value ?? '') }, text)),
  );
}

/**
 * Removes the error marks a previous submit left on a form.
 * @param {HTMLFormElement} form
 */
export function clearFormErrors(form) {
  for (const el of form.querySelectorAll('.field-error, .form-error > *')) el.remove();
  for (const el of form.querySelectorAll('[aria-invalid]')) {
    el.removeAttribute('aria-invalid');
    const described = (el.getAttribute('aria-describedby') ?? '').split(' ').filter((id) => id && !id.endsWith('-err'));
    if (described.length) el.setAttribute('aria-describedby', described.join(' '));
    else el.removeAttribute('aria-describedby');
  }
}

/**
 * Shows a failed request on its form: the problem's detail beside the submit button, and each field
 * error (or a field the detail names) beside its control.
 * @param {HTMLFormElement} form
 * @param {unknown} err an ApiError, or whatever else was thrown (shown by its message)
 */
export function showFormError(form, err) {
  clearFormErrors(form);
  const problem = /** @type {Partial<import('./api.js').ApiError>} */ (err);
  const fields = [...(problem.errors ?? [])];
  if (problem.code === 'missing_field' && !fields.length) {
    const message = String(problem.message);
    for (const name of ['contexts', 'expected_output']) if (message.includes(name)) fields.push({ field: name, message });
  }
  /** @type {HTMLElement | null} */
  let first = null;
  for (const fe of fields) {
    const name = String(fe.field).split('.')[0];
    const wrap = form.querySelector(`[data-field="${CSS.escape(name)}"]`);
    if (!wrap) continue;
    const errId = uid('err') + '-err';
    wrap.append(h('p', { class: 'field-error', id: errId }, fe.message));
    /** @type {HTMLElement | null} */
    const control = wrap.querySelector('input, textarea, select');
    if (control) {
      control.setAttribute('aria-invalid', 'true');
      control.setAttribute('aria-describedby', [control.getAttribute('aria-describedby'), errId].filter(Boolean).join(' '));
      first ??= control;
    }
  }
  const region = form.querySelector('.form-error');
  if (region) region.append(errorBox(err));
  else form.append(h('div', { class: 'form-error' }, errorBox(err)));
  first?.focus();
}

/**
 * Disables a submit button while a request runs.
 * @template T
 * @param {HTMLButtonElement} buttonEl
 * @param {string} busyText
 * @param {() => Promise<T>} fn
 * @returns {Promise<T>}
 */
export async function withBusy(buttonEl, busyText, fn) {
  const original = buttonEl.textContent;
  buttonEl.disabled = true;
  buttonEl.textContent = busyText;
  buttonEl.setAttribute('aria-busy', 'true');
  try {
    return await fn();
  } finally {
    buttonEl.disabled = false;
    buttonEl.textContent = original;
    buttonEl.removeAttribute('aria-busy');
  }
}

/**
 * A run started from a form (try it, compare): the button busy and a waiting note in `results` while
 * `send` runs; then its answer drawn there with the focus on its heading, or the error on the form.
 * @template T
 * @param {HTMLFormElement} form
 * @param {HTMLButtonElement} submit
 * @param {HTMLElement} results
 * @param {{ busyText: string, waiting: string, send: () => Promise<T>, render: (result: T) => Node, onRun?: (result: T) => void }} run
 */
export async function runFromForm(form, submit, results, { busyText, waiting, send, render, onRun }) {
  await withBusy(submit, busyText, async () => {
    clear(results).append(h('p', { class: 'muted', role: 'status' }, waiting));
    try {
      const result = await send();
      clearFormErrors(form);
      clear(results).append(render(result));
      /** @type {HTMLElement | null} */ (results.querySelector('h3'))?.focus();
      onRun?.(result);
    } catch (err) {
      clear(results);
      showFormError(form, err);
    }
  });
}

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/**
 * @param {string | null | undefined} iso an ISO-8601 timestamp as the API writes them
 * @param {string} [empty] shown when there is no time
 */
export function time(iso, empty = '—') {
  if (!iso) return h('span', { class: 'muted' }, empty);
  const d = new Date(iso);
  return h('time', { datetime: iso, title: iso }, dateTime.format(d));
}

/** @typedef {number | null | undefined} MaybeNumber a figure the API may leave out (undefined) or not know (null) */

export const fmtScore = (/** @type {MaybeNumber} */ score) => (score === null || score === undefined ? '—' : score.toFixed(2));
// null is an unknown cost (a model without a price on the server), not a missing one.
export const fmtCost = (/** @type {MaybeNumber} */ usd) => (usd === null ? 'unknown' : usd === undefined ? '—' : `$${usd < 0.01 && usd > 0 ? usd.toPrecision(2) : usd.toFixed(4)}`);
export const fmtMs = (/** @type {MaybeNumber} */ ms) => (ms === null || ms === undefined ? '—' : ms >= 1000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms)} ms`);
export const fmtInt = (/** @type {MaybeNumber} */ n) => (n === null || n === undefined ? '—' : n.toLocaleString());

/**
 * A horizontal bar for a 0..1 score, with the number beside it.
 * @param {MaybeNumber} score
 * @param {string | null} [label] what the score is of, for screen readers
 */
export function scoreBar(score, label) {
  const known = typeof score === 'number';
  const fill = h('span', { class: ['fill', known && score < 0.4 ? 'low' : known && score < 0.7 ? 'mid' : 'high'] });
  fill.style.width = `${known ? Math.round(score * 100) : 0}%`; // CSSOM, allowed under the CSP
  return h(
    'span',
    { class: 'score', role: 'img', 'aria-label': `${label ? `${label}: ` : ''}score ${known ? score.toFixed(2) : 'none'} of 1` },
    h('span', { class: 'bar', 'aria-hidden': 'true' }, fill),
    h('span', { class: 'num', 'aria-hidden': 'true' }, fmtScore(score)),
  );
}

export const badge = (/** @type {Child} */ text, kind = '') => h('span', { class: `badge ${kind}` }, text);

/**
 * Declared inputs of an evaluator (and whether it caps the score), as badges.
 * @param {Pick<import('./types.js').Evaluator, 'requires_turns' | 'requires_request' | 'requires_contexts' | 'requires_expected_output' | 'critical'>} evaluator
 */
export function needs(evaluator) {
  return h(
    'span',
    { class: 'needs' },
    badge(evaluator.requires_turns ? 'turns' : 'response'),
    evaluator.requires_request ? badge('request', 'need') : null,
    evaluator.requires_contexts ? badge('contexts', 'need') : null,
    evaluator.requires_expected_output ? badge('expected output', 'need') : null,
    evaluator.critical ? badge('critical', 'need') : null,
  );
}

/**
 * The paging button under a list: replaces the previous one, and loads the next page from
 * `nextCursor` when clicked (an error takes the button's place).
 * @param {HTMLElement} area
 * @param {string} label
 * @param {string | null | undefined} nextCursor
 * @param {(cursor: string) => Promise<unknown>} loadNext
 */
export function showMore(area, label, nextCursor, loadNext) {
  area.querySelector('.more')?.remove();
  if (!nextCursor) return;
  const more = button(label, { class: 'secondary more', onclick: () => loadNext(nextCursor).catch((err) => more.replaceWith(errorBox(err))) });
  area.append(more);
}

export const tableWrap = (/** @type {HTMLTableElement} */ table) =>
  h('div', { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': table.getAttribute('aria-label') ?? 'table' }, table);

/**
 * A list's first page, or the reason it could not be read in its place.
 * @param {HTMLElement} area
 * @param {(cursor?: string) => Promise<void>} load reads the first page (no cursor)

 */
export async function firstPage(area, load) {
  try {
    await load();
  } catch (err) {
    clear(area).append(errorBox(err));
  }
}

/**
 * One page of a paged list drawn into `area`: the first page (no cursor) starts the table, or shows
 * `empty()` when the list has nothing; a later page adds its rows to that table. Then the button for
 * the next page, when there is one.
 * @template T
 * @param {HTMLElement} area
 * @param {string | undefined} cursor the cursor this page was read with
 * @param {{ results: T[], next_cursor?: string | null }} data
 * @param {{ label: string, columns: string[], empty: () => Node, row: (item: T) => Node, more: string, load: (cursor: string) => Promise<void> }} list
 */
export function showPage(area, cursor, data, { label, columns, empty, row, more, load }) {
  let tbody = area.querySelector('tbody');
  if (!cursor) {
    if (!data.results.length) {
      clear(area).append(empty());
      return;
    }
    tbody = h('tbody');
    const headings = columns.map((t) => h('th', { scope: 'col' }, t));
    clear(area).append(tableWrap(h('table', { 'aria-label': label }, h('thead', {}, h('tr', {}, headings)), tbody)));
  }
  for (const item of data.results) tbody?.append(row(item));
  showMore(area, more, data.next_cursor, load);
}

/**
 * A modal confirmation. Resolves true when confirmed; Escape or Cancel resolve false.
 * @param {{ title: string, message: string | string[], confirmText: string, danger?: boolean }} spec
 * @returns {Promise<boolean>}
 */
export function confirmDialog({ title, message, confirmText, danger = true }) {
  return new Promise((resolve) => {
    const titleId = uid('dlg');
    const cancel = button('Cancel', { class: 'secondary' });
    const ok = button(confirmText, { class: danger ? 'danger' : '' });
    const dialog = h(
      'dialog',
      { 'aria-labelledby': titleId },
      h('h2', { id: titleId, text: title }),
      /** @type {string[]} */ ([]).concat(message).map((m) => h('p', {}, m)),
      h('div', { class: 'actions' }, ok, cancel),
    );
    const done = (/** @type {boolean} */ value) => {
      dialog.close();
      dialog.remove();
      resolve(value);
    };
    ok.addEventListener('click', () => done(true));
    cancel.addEventListener('click', () => done(false));
    dialog.addEventListener('cancel', (e) => {
      e.preventDefault();
      done(false);
    });
    document.body.append(dialog);
    dialog.showModal();
    cancel.focus();
  });
}

/**
 * A read-only field with a Copy button, for a secret shown once.
 * @param {string} value
 * @param {string} label
 */
export function copyField(value, label) {
  const input = h('input', { type: 'text', readonly: true, value, class: 'mono', spellcheck: 'false', autocomplete: 'off' });
  const status = h('span', { class: 'copy-status', role: 'status' });
  const copy = button('Copy', {
    class: 'secondary',
    onclick: async () => {
      input.select();
      try {
        await navigator.clipboard.writeText(value);
        status.textContent = 'Copied to the clipboard.';
      } catch {
        status.textContent = 'Copying is blocked here: the text is selected, press Ctrl+C (⌘C).';
      }
    },
  });
  const row = field({ label }, input);
  row.classList.add('copy');
  row.append(h('div', { class: 'copy-row' }, copy, status));
  return row;
}

export function loading(text = 'Loading…') {
  return h('p', { class: 'muted loading', role: 'status' }, text);
}

/**
 * Replaces a placeholder's content once an async part of a page is ready (or failed).
 * @param {HTMLElement} container
 * @param {() => Promise<Node | null | undefined | ReadonlyArray<Node | null | undefined>>} fn what to put there (nothing: it is left empty)
 */
export async function fill(container, fn) {
  clear(container).append(loading());
  try {
    const node = await fn();
    clear(container).append(.../** @type {Node[]} */ (/** @type {(Node | null | undefined)[]} */ ([]).concat(node).filter(Boolean)));
  } catch (err) {
    clear(container).append(errorBox(err));
  }
}
