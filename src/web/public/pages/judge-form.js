// Create a judge from an explicit list of evaluators, or edit one (/app/judges/:id/edit).
import { api, listAll } from '../lib/api.js';
import { h, uid } from '../lib/dom.js';
import { badge, field, link, pageHeading, select, showFormError, withBusy } from '../lib/ui.js';
import { guardrailFields } from './judge-proxy.js'; // h-proxy

/**
 * @param {import('../lib/types.js').PageElement} page
 * @param {import('../lib/types.js').PageContext} ctx
 */
export default async function judgeForm(page, { app, params }) {
  /** @type {import('../lib/types.js').JudgeFull | null} */
  const editing = params.id ? await api('GET', `/v1/judges/${encodeURIComponent(params.id)}/`) : null;
  /** @type {import('../lib/types.js').Evaluator[]} */
  const all = await listAll('/v1/evaluators/');
  const demo = /** @type {import('../lib/types.js').Session} */ (app.session).organization.is_demo; // a signed-in page

  const name = h('input', { type: 'text', maxlength: '200', value: editing?.name ?? '' });
  const intent = h('textarea', { rows: '3', value: editing?.intent ?? '' });
  const stage = h('input', { type: 'text', value: editing?.stage ?? '' });
  const visibility = select(
    'visibility',
    [
      ['private', 'Private: only your organization'],
      ['public', 'Public: everyone can read and run it'],
    ],
    editing?.visibility ?? (demo ? 'public' : 'private'),
  );

  // Chosen evaluators keep the order in which they were ticked.
  /** @type {string[]} */
  const chosen = editing ? editing.evaluators.map((e) => e.id) : [];
  const chosenText = h('p', { class: 'small', 'aria-live': 'polite' });
  const showChosen = () => {
    const byId = new Map(all.map((e) => [e.id, e.name]));
    chosenText.textContent = chosen.length ? `Order: ${chosen.map((id) => byId.get(id) ?? id).join(' → ')}` : 'No evaluator chosen yet.';
  };
  const filter = h('input', { type: 'search', autocomplete: 'off' });
  const list = h('ul', { class: 'picker' });
  for (const e of all) {
    const id = uid('ev');
    const box = h('input', { type: 'checkbox', id, value: e.id, checked: chosen.includes(e.id) });
    box.addEventListener('change', () => {
      const at = chosen.indexOf(e.id);
      if (box.checked && at < 0) chosen.push(e.id);
      if (!box.checked && at >= 0) chosen.splice(at, 1);
      showChosen();
    });
    list.append(
      h(
        'li',
        { 'data-text': `${e.name} ${e.intent}`.toLowerCase() },
        box,
        h('label', { for: id }, h('strong', {}, e.name), e.is_preset ? badge('preset') : null, h('span', { class: 'muted small' }, ` ${e.intent}`)),
      ),
    );
  }
  filter.addEventListener('input', () => {
    const q = filter.value.trim().toLowerCase();
    // Every item carries data-text (its name, intent and stage, lower case).
    for (const li of /** @type {HTMLCollectionOf<HTMLLIElement>} */ (list.children)) li.hidden = Boolean(q) && !(/** @type {string} */ (li.dataset.text).includes(q));
  });
  showChosen();

  const guardrail = guardrailFields(editing, field, select); // h-proxy
  const submit = h('button', { type: 'submit' }, editing ? 'Save judge' : 'Create judge');
  const form = h(
    'form',
    { class: 'stack card', novalidate: true },
    field({ label: 'Name', name: 'name', required: true, hint: 'Unique in your organization; agents can run a judge by its name.' }, name),
    field({ label: 'Intent', name: 'intent', required: true, hint: 'What the judge evaluates: the application and the stage.' }, intent),
    field({ label: 'Stage', name: 'stage', hint: 'Optional: the stage of your application this judge evaluates.' }, stage),
    field({ label: 'Visibility', name: 'visibility', hint: demo ? 'Demo organizations always make public judges.' : undefined }, visibility),
    h(
      'fieldset',
      { 'data-field': 'evaluator_ids' },
      h('legend', {}, 'Evaluators'),
      field({ label: 'Filter evaluators', hint: `${all.length} evaluators, presets included. Tick them in the order the judge should apply them.` }, filter),
      list,
      chosenText,
    ),
    guardrail.fieldset,
    h('div', { class: 'actions' }, submit, link(editing ? `/app/judges/${encodeURIComponent(editing.id)}` : '/app/judges', 'Cancel', { class: 'button secondary' })),
    h('div', { class: 'form-error' }),
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    /** @type {{ name: string, intent: string, visibility: string, evaluator_ids: string[], stage?: string | null, guardrail?: { action: string, threshold: number, message?: string } | null }} */
    const body = { name: name.value.trim(), intent: intent.value.trim(), visibility: visibility.value, evaluator_ids: [...chosen] };

    if (stage.value.trim()) body.stage = stage.value.trim();
    else if (editing?.stage) body.stage = null;
    const g = guardrail.value(); // h-proxy
    if (g !== undefined) body.guardrail = g;
    await withBusy(submit, 'Saving…', async () => {
      try {
        const saved = editing ? await api('PATCH', `/v1/judges/${encodeURIComponent(editing.id)}/`, { body }) : await api('POST', '/v1/judges/', { body });
        app.flash(editing ? `Judge “${saved.name}” saved (version ${saved.version}).` : `Judge “${saved.name}” created.`);
        app.navigate(`/app/judges/${encodeURIComponent(saved.id)}`);
      } catch (err) {
        showFormError(form, err);
      }
    });
  });

  page.append(
    pageHeading(editing ? `Edit ${editing.name}` : 'New judge from evaluators'),
    editing ? null : h('p', { class: 'lead' }, 'Pick the evaluators yourself, or ', link('/app/judges/generate', 'generate a judge from a description'), ' instead.'),
    form,
  );
}
