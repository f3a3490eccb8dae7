// "Test data" on a judge's page (SPEC section 16): generate synthetic samples with the judge model
// (in the background on the server; this section polls), show them, and save them as a dataset.
import { api } from './api.js';
import { clear, h } from './dom.js';
import { badge, button, errorBox, link, withBusy } from './ui.js';

/**
 * @param {import('./types.js').Judge} j
 */
export function syntheticSection(j) {
  const path = `/v1/judges/${encodeURIComponent(j.id)}/synthetic-data/`;
  const body = h('div', { 'aria-live': 'polite' });
  const generate = button('Generate test data', { class: 'secondary' });
  const show = (/** @type {import('./types.js').SyntheticData} */ state) => {
    clear(body);
    if (state.status === 'pending') return body.append(h('p', { class: 'muted' }, 'Generating test data with the judge model… this page updates by itself.'));
    if (state.status === 'not_generated') {
      return body.append(state.error ? errorBox({ message: `The last attempt failed: ${state.error}` }) : h('p', { class: 'muted' }, 'No test data yet.'));
    }
    const save = button('Save as dataset');
    save.addEventListener('click', () =>
      withBusy(save, 'Saving…', async () => {
        try {
          const out = await api('POST', `${path}dataset/`, { body: {} });
          save.replaceWith(h('p', {}, 'Saved as dataset ', link(`/app/datasets/${encodeURIComponent(out.dataset_id)}`, out.name), ` (${out.item_count} items).`));
        } catch (err) {
          body.append(errorBox(err));
        }
      }),
    );
    body.append(
      h('p', {}, h('strong', {}, state.name), ` — ${state.description}`),
      h(
        'ul',
        { class: 'synthetic-samples', 'aria-label': 'Test data samples' },
        state.samples.map((s) =>
          h(
            'li',
            {},
            badge(s.quality, s.quality === 'high' ? 'good' : 'need'),
            ' ',
            h('span', {}, s.request),
            h('br'),
            h('span', { class: 'muted' }, s.response),
            s.fails_evaluator ? h('p', { class: 'small' }, `Fails ${s.fails_evaluator}: ${s.failure}`) : null,
          ),
        ),
      ),
      save,
    );
  };
  const poll = async () => {
    try {
      const state = await api('GET', path);
      show(state);
      if (state.status === 'pending') setTimeout(() => body.isConnected && poll(), 1000);
    } catch (err) {
      clear(body).append(errorBox(err));
    }
  };
  generate.addEventListener('click', () =>
    withBusy(generate, 'Starting…', async () => {
      try {
        show(await api('POST', path, { body: {} }));
        setTimeout(() => body.isConnected && poll(), 500);
      } catch (err) {
        clear(body).append(errorBox(err));
      }
    }),
  );
  void poll();
  return h(
    'section',
    { 'aria-labelledby': 'synthetic-title', class: 'card' },
    h('h2', { id: 'synthetic-title' }, 'Test data'),
    h(
      'p',
      { class: 'muted' },
      'Realistic requests for this judge, each with a response that meets every rubric and one that fails one evaluator in a named way: a first calibration set.',
    ),
    generate,
    body,
  );
}
