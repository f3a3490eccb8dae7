// API keys of the organization: list, create (secret shown once), revoke with a confirmation.
/** @import { ApiKey } from '../lib/types.js' */
import { api } from '../lib/api.js';
import { clear, h } from '../lib/dom.js';
import { badge, button, confirmDialog, copyField, errorBox, field, pageHeading, showFormError, tableWrap, time, withBusy, showMore } from '../lib/ui.js';

/**
 * @param {import('../lib/types.js').PageElement} page
 * @param {import('../lib/types.js').PageContext} ctx
 */
export default async function keys(page, { app }) {
  const session = /** @type {import('../lib/types.js').Session} */ (app.session); // a signed-in page
  const current = session.key;
  const created = h('div', { class: 'created-key' });
  const listArea = h('div');

  const nameInput = h('input', { type: 'text', autocomplete: 'off', maxlength: '200' });
  const daysInput = h('input', { type: 'number', min: '1', max: '3650', step: '1', inputmode: 'numeric' });
  const submit = h('button', { type: 'submit' }, 'Create key');
  const form = h(
    'form',
    { class: 'card inline-form', 'aria-labelledby': 'create-key-title' },
    h('h2', { id: 'create-key-title' }, 'Create a key'),
    h(
      'div',
      { class: 'row' },
      field({ label: 'Name', name: 'name', required: true, hint: 'What the key is for, e.g. “CI” or “Claude Desktop”.' }, nameInput),
      field(
        {
          label: 'Expires in (days)',
          name: 'expires_in_days',
          hint: session.organization.is_demo ? 'Demo keys never outlive the demo.' : 'Leave empty for a key that does not expire.',
        },
        daysInput,
      ),
    ),
    h('div', { class: 'actions' }, submit),
    h('div', { class: 'form-error' }),
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    if (!form.reportValidity()) return;
    await withBusy(submit, 'Creating…', async () => {
      try {
        /** @type {{ name: string, expires_in_days?: number }} */
        const body = { name: nameInput.value.trim() };
        if (daysInput.value) body.expires_in_days = Number(daysInput.value);
        const key = await api('POST', '/v1/api-keys/', { body });
        form.reset();
        clear(created).append(
          h(
            'section',
            { class: 'notice warn stack', 'aria-labelledby': 'new-key-title' },
            h('h2', { id: 'new-key-title', tabindex: '-1' }, `New key “${key.name}”`),
            h('p', {}, h('strong', {}, 'Copy it now: this is the only time it is shown. '), 'Tribunal stores only a hash of it; if you lose it, revoke it and create another.'),
            copyField(key.api_key, 'Secret API key'),
            button('Done, I have stored it', { class: 'secondary', onclick: () => clear(created) }),
          ),
        );
        /** @type {HTMLHeadingElement} */ (created.querySelector('h2')).focus(); // the section above
        await loadList();
      } catch (err) {
        showFormError(form, err);
      }
    });
  });

  /**
   * @param {ApiKey} key
   * @param {HTMLTableCellElement} cell
   */
  async function revoke(key, cell) {
    const own = key.id === current.id;
    const ok = await confirmDialog({
      title: `Revoke key “${key.name}”?`,
      message: [
        `Every program using ${key.prefix}… gets 401 Unauthorized from now on. This cannot be undone.`,
        own ? 'You are signed in with this key: revoking it signs you out.' : null,
      ].filter((m) => m !== null),
      confirmText: 'Revoke key',
    });
    if (!ok) return;
    try {
      await api('DELETE', `/v1/api-keys/${encodeURIComponent(key.id)}/`);
      if (own) return app.signOut();
      await loadList();
    } catch (err) {
      clear(cell).append(errorBox(err));
    }
  }

  /**
   * @param {ApiKey} key
   */
  function status(key) {
    if (key.revoked_at) return h('span', {}, badge('revoked', 'bad'), ' ', time(key.revoked_at));
    if (key.expires_at && new Date(key.expires_at) <= new Date()) return badge('expired', 'bad');
    return badge('active', 'good');
  }

  /**
   * @param {string | undefined} [cursor]
   */
  async function loadList(cursor, append = false) {
    /** @type {import('../lib/types.js').ListPage<ApiKey>} */
    const pageData = await api('GET', '/v1/api-keys/', { query: { limit: 50, cursor } });
    let tbody = /** @type {HTMLTableSectionElement} */ (listArea.querySelector('tbody')); // a later page adds to the first page's table
    if (!append || !tbody) {
      tbody = h('tbody');
      clear(listArea).append(
        tableWrap(
          h(
            'table',
            { 'aria-label': 'API keys' },
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                ['Name', 'Prefix', 'Created', 'Last used', 'Expires', 'Status', h('span', { class: 'sr-only' }, 'Actions')].map((t) => h('th', { scope: 'col' }, t)),
              ),
            ),
            tbody,
          ),
        ),
      );
    }
    for (const key of pageData.results) {
      const actionCell = h('td', { class: 'actions-cell' });
      if (!key.revoked_at) actionCell.append(button('Revoke', { class: 'danger small', 'aria-label': `Revoke key ${key.name}`, onclick: () => revoke(key, actionCell) }));
      tbody.append(
        h(
          'tr',
          { 'data-key-id': key.id },
          h('th', { scope: 'row' }, key.name, key.id === current.id ? h('span', { class: 'muted' }, ' (this session)') : null),
          h('td', {}, h('code', {}, key.prefix)),
          h('td', {}, time(key.created_at)),
          h('td', {}, time(key.last_used_at, 'never')),
          h('td', {}, time(key.expires_at, 'never')),
          h('td', {}, status(key)),
          actionCell,
        ),
      );
    }
    showMore(listArea, 'Show more keys', pageData.next_cursor, (cursor) => loadList(cursor, true));
    if (!pageData.results.length && !append) clear(listArea).append(h('p', { class: 'muted' }, 'No keys yet.'));
  }

  page.append(
    pageHeading('API keys'),
    h('p', { class: 'lead' }, `Keys of ${session.organization.name}. A key authenticates REST calls and MCP agents: `, h('code', {}, 'Authorization: Api-Key <key>'), '.'),
    form,
    created,
    h('h2', {}, 'Keys'),
    listArea,
  );
  try {
    await loadList();
  } catch (err) {
    clear(listArea).append(errorBox(err));
  }
}
