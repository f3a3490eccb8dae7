// Create an evaluator (optionally starting from another's rubric: ?from=<id>) or edit one of yours.
/** @import { Evaluator } from '../lib/types.js' */
import { api } from '../lib/api.js';
import { h } from '../lib/dom.js';
import { checkboxField, field, link, pageHeading, select, showFormError, withBusy } from '../lib/ui.js';
import { kindEditor } from './evaluator-kind.js';

/**
 * @param {import('../lib/types.js').PageElement} page
 * @param {import('../lib/types.js').PageContext} ctx
 */
export default async function evaluatorForm(page, { app, params, query }) {
  const fromId = query.get('from');
  /** @type {Evaluator | null} */
  const editing = params.id ? await api('GET', `/v1/evaluators/${encodeURIComponent(params.id)}/`) : null;
  /** @type {Evaluator | null} */
  const from = !editing && fromId ? await api('GET', `/v1/evaluators/${encodeURIComponent(fromId)}/`) : null;
  const start = editing ?? from;
  const demo = /** @type {import('../lib/types.js').Session} */ (app.session).organization.is_demo; // a signed-in page

  const name = h('input', { type: 'text', maxlength: '200', value: editing?.name ?? (from ? `${from.name} (copy)` : '') });
  const intent = h('textarea', { rows: '3', value: start?.intent ?? '' });
  const rubric = h('textarea', { rows: '18', class: 'mono editor', spellcheck: 'true', value: start?.rubric ?? '' });
  const model = h('input', { type: 'text', autocomplete: 'off', value: start?.model ?? '', placeholder: 'server default' });
  const visibility = select(
    'visibility',
    [
      ['private', 'Private: only your organization'],
      ['public', 'Public: everyone can read and run it'],
    ],
    editing?.visibility ?? (demo ? 'public' : 'private'),
  );
  const demos = h('textarea', { rows: '6', class: 'mono', value: start?.demonstrations?.length ? JSON.stringify(start.demonstrations, null, 2) : '' });

  const submit = h('button', { type: 'submit' }, editing ? 'Save a new version' : 'Create evaluator');
  const cancelHref = editing ? `/app/evaluators/${encodeURIComponent(editing.id)}` : from ? `/app/evaluators/${encodeURIComponent(from.id)}` : '/app/evaluators';
  // h-checks: the rubric, model and demonstrations belong to kind llm; checks and code have their own editors.
  const rubricField = field(
    { label: 'Rubric', name: 'rubric', required: true, hint: 'The scoring criteria the judge model follows: what earns a high, a middling and a low score.' },
    rubric,
  );
  const modelField = field({ label: 'Judge model', name: 'model', hint: 'Optional: a model to use instead of the server default.' }, model);
  const demosField = field(
    {
      label: 'Demonstrations (JSON)',
      name: 'demonstrations',
      hint: 'Optional scored examples that calibrate the judge model: a JSON array of {request?, response, contexts?, expected_output?, score (0..1), justification?}.',
    },
    demos,
  );
  const kinds = kindEditor(start, [rubricField, modelField, demosField]);
  const form = h(
    'form',
    { class: 'stack card', novalidate: true },
    field({ label: 'Name', name: 'name', required: true, hint: 'Unique in your organization; agents can run an evaluator by its name.' }, name),
    field({ label: 'Intent', name: 'intent', required: true, hint: 'What it measures, in one or two sentences.' }, intent),
    kinds.section,
    rubricField,
    h(
      'fieldset',
      {},
      h('legend', {}, 'Required inputs'),
      checkboxField({ label: 'Needs contexts (retrieved snippets)', name: 'requires_contexts', checked: start?.requires_contexts }),
      checkboxField({ label: 'Needs an expected output (reference answer)', name: 'requires_expected_output', checked: start?.requires_expected_output }),
    ),
    h(
      'div',
      { class: 'row' },
      modelField,
      field({ label: 'Visibility', name: 'visibility', hint: demo ? 'Demo organizations always make public evaluators.' : undefined }, visibility),
    ),
    demosField,
    h('div', { class: 'actions' }, submit, link(cancelHref, 'Cancel', { class: 'button secondary' })),
    h('div', { class: 'form-error' }),
  );

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const checkboxes = /** @type {HTMLFormControlsCollection & Record<'requires_contexts' | 'requires_expected_output', HTMLInputElement>} */ (form.elements);
    /** @type {Record<string, unknown>} the JSON body, built field by field */
    const body = {
      name: name.value.trim(),
      intent: intent.value.trim(),
      rubric: rubric.value,
      requires_contexts: checkboxes.requires_contexts.checked,
      requires_expected_output: checkboxes.requires_expected_output.checked,
      visibility: visibility.value,
    };
    // h-checks: the kind's own fields; a check or code evaluator's rubric describes itself.
    let kindFields;
    try {
      kindFields = kinds.fields();
    } catch (err) {
      showFormError(form, err);
      return;
    }
    if (kindFields.kind !== 'llm') {
      Object.assign(body, kindFields);
      delete body.rubric;
    } else {
      if (editing?.kind && editing.kind !== 'llm') body.kind = 'llm';
      if (model.value.trim()) body.model = model.value.trim();
      else if (editing?.model) body.model = null;
    }
    if (demos.value.trim()) {
      try {
        body.demonstrations = JSON.parse(demos.value);
      } catch (err) {
        showFormError(form, {
          message: `Demonstrations are not valid JSON: ${/** @type {SyntaxError} */ (err).message}`,
          errors: [{ field: 'demonstrations', message: 'Not valid JSON.' }],
        });
        return;
      }
    } else if (editing?.demonstrations?.length) body.demonstrations = [];
    if (kindFields.kind !== 'llm') delete body.demonstrations;
    await withBusy(submit, 'Saving…', async () => {
      try {
        const saved = editing ? await api('PATCH', `/v1/evaluators/${encodeURIComponent(editing.id)}/`, { body }) : await api('POST', '/v1/evaluators/', { body });
        app.flash(editing ? `Saved: “${saved.name}” is now at version ${saved.version}.` : `Evaluator “${saved.name}” created.`);
        app.navigate(`/app/evaluators/${encodeURIComponent(saved.id)}`);
      } catch (err) {
        showFormError(form, err);
      }
    });
  });

  page.append(
    pageHeading(editing ? `Edit ${editing.name}` : 'New evaluator'),
    editing
      ? h(
          'p',
          { class: 'lead' },
          'Saving a content change makes a new version; judges that follow the latest version use it from their next run, and past execution logs keep the version they used.',
        )
      : null,
    from ? h('p', { class: 'lead' }, `Starting from ${from.name} (version ${from.version}).`) : null,
    form,
  );
}
