// The organization's registered judge models: list with capabilities, register (the API key is
// write-only: a password field, never shown again), verify with one tiny real call, delete.
import { api } from '../lib/api.js';
import { clear, h } from '../lib/dom.js';
import { badge, button, checkboxField, confirmDialog, errorBox, field, notice, pageHeading, select, showFormError, tableWrap, time, withBusy } from '../lib/ui.js';

const capabilityText = (/** @type {import('../lib/types.js').Model['capabilities']} */ c) =>
  c
    ? Object.entries(c)
        .filter(([, v]) => v)
        .map(([k]) => k.replace('_', ' '))
        .join(', ') || 'JSON in the prompt only'
    : null;

/**
 * @param {import('../lib/types.js').PageElement} page
 */
export default async function models(page) {
  const listArea = h('div');
  const input = (/** @type {import("../lib/dom.js").Props | null | undefined} */ props) => h('input', { type: 'text', autocomplete: 'off', ...props });
  const nameInput = input({ maxlength: '200' });
  const providerSelect = select(
    'provider',
    [
      ['openai', 'openai (Chat Completions: OpenAI, vLLM, Ollama, LM Studio, llama.cpp, LiteLLM)'],
      ['anthropic', 'anthropic (Messages API)'],
    ],
    'openai',
  );
  const modelInput = input({ maxlength: '200' });
  const baseUrlInput = input({ type: 'url', placeholder: 'http://127.0.0.1:11434/v1' });
  const keyInput = h('input', { type: 'password', autocomplete: 'new-password' });
  const concurrencyInput = h('input', { type: 'number', min: '1', max: '256', step: '1', value: '4' });
  const priceIn = h('input', { type: 'number', min: '0', step: 'any' });
  const priceOut = h('input', { type: 'number', min: '0', step: 'any' });
  const attachmentsBox = checkboxField({
    label: 'Takes images and PDFs',
    name: 'supports_attachments',
    hint: 'Runs with attachments may use this model only when it reads images and PDF documents.',
  });
  const submit = h('button', { type: 'submit' }, 'Register model');
  const form = h(
    'form',
    { class: 'card inline-form', 'aria-labelledby': 'register-model-title' },
    h('h2', { id: 'register-model-title' }, 'Register a model'),
    h(
      'div',
      { class: 'row' },
      field({ label: 'Name', name: 'name', required: true, hint: "What an evaluator's model field names." }, nameInput),
      field({ label: 'Provider', name: 'provider', required: true }, providerSelect),
      field({ label: 'Model id', name: 'model', required: true, hint: "The provider's own id, e.g. llama3.1:8b." }, modelInput),
    ),
    h(
      'div',
      { class: 'row' },
      field({ label: 'Base URL', name: 'base_url', hint: "Empty: the provider's public API." }, baseUrlInput),
      field({ label: 'Model API key', name: 'api_key', hint: 'Stored encrypted; never shown again.' }, keyInput),
      field({ label: 'Max concurrency', name: 'max_concurrency' }, concurrencyInput),
      field({ label: 'Input price', name: 'price', hint: 'USD per million tokens; empty: unknown.' }, priceIn),
      field({ label: 'Output price', name: 'price' }, priceOut),
    ),
    // h-attach: never guessed from the model id (docs/SURFACE.md, "Attachments").
    attachmentsBox,
    h('div', { class: 'actions' }, submit),
    h('div', { class: 'form-error' }),
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    if (!form.reportValidity()) return;
    await withBusy(submit, 'Registering…', async () => {
      try {
        /** @type {{ name: string, provider: string, model: string, base_url?: string, api_key?: string, max_concurrency?: number, price?: { input: number, output: number }, supports_attachments?: boolean }} */
        const body = { name: nameInput.value.trim(), provider: providerSelect.value, model: modelInput.value.trim() };
        if (baseUrlInput.value.trim()) body.base_url = baseUrlInput.value.trim();
        if (keyInput.value) body.api_key = keyInput.value;
        if (concurrencyInput.value) body.max_concurrency = Number(concurrencyInput.value);
        if (priceIn.value !== '' || priceOut.value !== '') body.price = { input: Number(priceIn.value || 0), output: Number(priceOut.value || 0) };
        if (/** @type {HTMLInputElement} */ (attachmentsBox.querySelector('input')).checked) body.supports_attachments = true;
        await api('POST', '/v1/models/', { body });
        form.reset();
        await loadList();
      } catch (err) {
        showFormError(form, err);
      }
    });
  });

  /**
   * @param {import('../lib/types.js').Model} model
   * @param {HTMLTableCellElement} cell
   * @param {HTMLButtonElement} btn
   */
  async function verify(model, cell, btn) {
    await withBusy(btn, 'Verifying…', async () => {
      try {
        await api('POST', `/v1/models/${encodeURIComponent(model.id)}/verify/`);
        await loadList();
      } catch (err) {
        clear(cell).append(errorBox(err));
      }
    });
  }

  /**
   * @param {import('../lib/types.js').Model} model
   * @param {HTMLTableCellElement} cell
   */
  async function remove(model, cell) {
    const ok = await confirmDialog({
      title: `Delete model “${model.name}”?`,
      message: ['Evaluators that name it stop scoring until a model of that name is registered again.'],
      confirmText: 'Delete model',
    });
    if (!ok) return;
    try {
      await api('DELETE', `/v1/models/${encodeURIComponent(model.id)}/`);
      await loadList();
    } catch (err) {
      clear(cell).append(errorBox(err));
    }
  }

  async function loadList() {
    /** @type {import('../lib/types.js').ListPage<import('../lib/types.js').Model>} */
    const pageData = await api('GET', '/v1/models/', { query: { limit: 200 } });

    if (!pageData.results.length) return clear(listArea).append(h('p', { class: 'muted' }, 'No models registered yet: evaluators use the server’s model.'));
    const tbody = h('tbody');
    for (const m of pageData.results) {
      const actionCell = h('td', { class: 'actions-cell' });
      const verifyButton = button('Verify', { class: 'secondary small', 'aria-label': `Verify model ${m.name}` });
      verifyButton.addEventListener('click', () => verify(m, actionCell, verifyButton));
      actionCell.append(verifyButton, ' ', button('Delete', { class: 'danger small', 'aria-label': `Delete model ${m.name}`, onclick: () => remove(m, actionCell) }));
      const caps = capabilityText(m.capabilities);
      tbody.append(
        h(
          'tr',
          { 'data-model-id': m.id },
          h('th', { scope: 'row' }, m.name),
          h('td', {}, m.provider),
          h('td', {}, h('code', {}, m.model)),
          h('td', {}, m.base_url ? h('code', {}, m.base_url) : 'default'),
          h('td', {}, m.api_key_hint ? h('code', {}, `…${m.api_key_hint}`) : '—'),
          h('td', {}, caps ? h('span', {}, badge('verified', 'good'), ' ', caps) : badge('not verified'), m.supports_attachments ? ' · attachments' : null),
          h('td', {}, time(m.created_at)),
          actionCell,
        ),
      );
    }
    clear(listArea).append(
      tableWrap(
        h(
          'table',
          { 'aria-label': 'Judge models' },
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              ['Name', 'Provider', 'Model id', 'Base URL', 'Key', 'Capabilities', 'Created', h('span', { class: 'sr-only' }, 'Actions')].map((t) => h('th', { scope: 'col' }, t)),
            ),
          ),
          tbody,
        ),
      ),
    );
  }

  page.append(
    pageHeading('Judge models'),
    h('p', { class: 'lead' }, 'Your organization’s own judge models: local (vLLM, Ollama, LM Studio, llama.cpp) or hosted. An evaluator uses one when its model field names it.'),
    form,
    h('h2', {}, 'Models'),
    listArea,
  );
  // issue 26 item 12: without a server secret every registration answers 503 not_available: say so first.
  const registry = await api('GET', '/v1/model-registry/').catch(() => null);
  if (registry && !registry.keeps_api_keys) {
    /** @type {HTMLHeadingElement} */ (form.querySelector('h2')).after(notice(`${registry.detail} Until then, evaluators use the server’s own model.`, 'warn'));
    submit.disabled = true;
  }
  try {
    await loadList();
  } catch (err) {
    clear(listArea).append(errorBox(err));
  }
}
