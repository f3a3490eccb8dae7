// Generate a judge from a plain-language intent (SPEC section 5), walking through its follow-ups:
// multiple_stages -> choose a stage; missing_context_from_system_goal -> answer the questions; success
// -> the new judge.
import { api } from '../lib/api.js';
import { clear, h, uid } from '../lib/dom.js';
import { checkboxField, field, link, notice, pageHeading, select, showFormError, withBusy } from '../lib/ui.js';

/**
 * @param {import('../lib/types.js').PageElement} page
 * @param {import('../lib/types.js').PageContext} ctx
 */
export default async function generate(page, { app }) {
  const demo = /** @type {import('../lib/types.js').Session} */ (app.session).organization.is_demo; // a signed-in page
  // What the follow-up calls carry over: the draft judge and every answer given so far.
  /** @type {{ judgeId: string | undefined, extra: Record<string, string> }} */
  const state = { judgeId: undefined, extra: {} };

  const intent = h('textarea', { rows: '8' });
  const stage = h('input', { type: 'text', autocomplete: 'off' });
  const visibility = select(
    'visibility',
    [
      ['private', 'Private: only your organization'],
      ['public', 'Public: everyone can read and run it'],
    ],
    demo ? 'public' : 'private',
  );
  const effort = select(
    'reasoning_effort',
    [
      ['off', 'Off'],
      ['low', 'Low'],
      ['medium', 'Medium (default)'],
      ['high', 'High'],
    ],
    'medium',
  );
  const contextAware = checkboxField({
    label: 'Add context-aware evaluators',
    name: 'enable_context_aware_evaluators',
    hint: 'For retrieval-augmented applications: evaluators that catch hallucination and drift from the retrieved contexts.',
  });
  const submit = h('button', { type: 'submit' }, 'Generate judge');
  const form = h(
    'form',
    { class: 'stack card', novalidate: true },
    field(
      {
        label: 'Describe what to evaluate',
        name: 'intent',
        required: true,
        hint: 'Several sentences: the application, its users, the stage to evaluate, the qualities and policies that matter.',
      },
      intent,
    ),
    field({ label: 'Stage', name: 'stage', hint: 'Optional: the stage to evaluate, when your description covers several.' }, stage),
    h(
      'div',
      { class: 'row' },
      field({ label: 'Visibility', name: 'visibility', hint: demo ? 'Demo organizations always make public judges.' : undefined }, visibility),
      field({ label: 'Reasoning effort', name: 'reasoning_effort', hint: 'How much the model may think while designing the judge.' }, effort),
    ),
    contextAware,
    h('div', { class: 'actions' }, submit),
    h('div', { class: 'form-error' }),
  );
  const followUp = h('div', { class: 'follow-up', 'aria-live': 'polite' });

  /**
   * @param {HTMLFormElement} sourceForm
   * @param {HTMLButtonElement} sourceButton
   */
  async function run(sourceForm, sourceButton) {
    if (!intent.value.trim()) {
      showFormError(form, { message: 'Describe the application and what to evaluate.', errors: [{ field: 'intent', message: 'Required.' }] });
      return;
    }
    /** @type {{ intent: string, visibility: string, reasoning_effort: string, enable_context_aware_evaluators: boolean, stage?: string, judge_id?: string, extra_contexts?: Record<string, string> }} */
    const body = {
      intent: intent.value.trim(),
      visibility: visibility.value,
      reasoning_effort: effort.value,
      enable_context_aware_evaluators: /** @type {HTMLFormControlsCollection & { enable_context_aware_evaluators: HTMLInputElement }} */ (form.elements)
        .enable_context_aware_evaluators.checked,
    };
    if (stage.value.trim()) body.stage = stage.value.trim();
    if (state.judgeId) body.judge_id = state.judgeId;
    if (Object.keys(state.extra).length) body.extra_contexts = { ...state.extra };
    await withBusy(sourceButton, 'Generating… (this can take a minute)', async () => {
      try {
        const out = await api('POST', '/v1/judges/generate/', { body });
        handle(out);
      } catch (err) {
        showFormError(sourceForm, err);
      }
    });
  }

  /**
   * @param {import('../lib/types.js').GenerateJudgeOutput} out
   */
  function handle(out) {
    clear(followUp);
    if (out.error_code === 'multiple_stages') return askStage(out.stages ?? []);
    if (out.error_code === 'missing_context_from_system_goal') {
      state.judgeId = out.judge_id;
      return askContext(out.missing_context_from_system_goal ?? []);
    }
    const evaluators = out.evaluator_details ?? [];
    app.flash(
      h(
        'div',
        { class: 'notice success', role: 'status' },
        h('p', {}, `Judge generated with ${evaluators.length} evaluator${evaluators.length === 1 ? '' : 's'}:`),
        h(
          'ul',
          {},
          evaluators.map((e) => h('li', {}, `${e.name} (${e.is_preset ? 'preset' : 'written for this judge'})`)),
        ),
      ),
    );
    app.navigate(`/app/judges/${encodeURIComponent(/** @type {string} */ (out.judge_id))}`); // a generated judge has its id
  }

  /**
   * @param {string[]} stages
   */
  function askStage(stages) {
    const groupName = uid('stage');
    const otherId = uid('other');
    const otherText = h('input', { type: 'text', 'aria-label': 'Another stage name', autocomplete: 'off' });
    const next = h('button', { type: 'submit' }, 'Generate for this stage');
    const stageForm = h(
      'form',
      { class: 'stack card', novalidate: true, 'aria-labelledby': 'stage-title' },
      h('h2', { id: 'stage-title', tabindex: '-1' }, 'Which stage should this judge evaluate?'),
      h('p', {}, 'Your description covers several stages of the application. A judge evaluates one; pick it (you can generate another judge for each other stage).'),
      h(
        'fieldset',
        { 'data-field': 'stage' },
        h('legend', {}, 'Stage'),
        stages.map((st, i) => {
          const id = `${groupName}-${i}`;
          return h('div', { class: 'check' }, h('input', { type: 'radio', name: groupName, id, value: st, checked: i === 0 }), h('label', { for: id }, st));
        }),
        h('div', { class: 'check' }, h('input', { type: 'radio', name: groupName, id: otherId, value: '' }), h('label', { for: otherId }, 'Another stage:'), otherText),
      ),
      h('div', { class: 'actions' }, next),
      h('div', { class: 'form-error' }),
    );
    // The radios and the heading below are built above, so the queries always find them.
    const otherRadio = /** @type {HTMLInputElement} */ (stageForm.querySelector(`#${otherId}`));
    otherText.addEventListener('focus', () => (otherRadio.checked = true));

    stageForm.addEventListener('submit', async (e) => {
      e.preventDefault();
      /** @type {HTMLInputElement | null} */
      const picked = stageForm.querySelector(`input[name="${groupName}"]:checked`);
      const value = picked?.value || otherText.value.trim();
      if (!value) {
        showFormError(stageForm, { message: 'Pick a stage or name another one.', errors: [{ field: 'stage', message: 'Required.' }] });
        return;
      }
      stage.value = value;
      await run(stageForm, next);
    });
    followUp.append(stageForm);
    /** @type {HTMLHeadingElement} */ (stageForm.querySelector('h2')).focus();
  }

  /**
   * @param {import('../lib/types.js').GenerationQuestion[]} questions
   */
  function askContext(questions) {
    const next = h('button', { type: 'submit' }, 'Continue');
    const answers = questions.map((q) => ({
      q,
      input: h('textarea', { rows: '3', value: state.extra[q.form_field_name] ?? '' }),
    }));
    const ctxForm = h(
      'form',
      { class: 'stack card', novalidate: true, 'aria-labelledby': 'ctx-title' },
      h('h2', { id: 'ctx-title', tabindex: '-1' }, 'A few questions about your application'),
      h('p', {}, 'The judge needs this to measure what matters to you. A draft judge was saved; your answers complete it.'),
      answers.map(({ q, input }) => field({ label: q.form_field_description, name: q.form_field_name, required: true }, input)),
      h('div', { class: 'actions' }, next),
      h('div', { class: 'form-error' }),
    );
    ctxForm.addEventListener('submit', async (e) => {
      e.preventDefault();
      const empty = answers.filter(({ input }) => !input.value.trim());
      if (empty.length) {
        showFormError(ctxForm, { message: 'Answer every question (a short answer is fine).', errors: empty.map(({ q }) => ({ field: q.form_field_name, message: 'Required.' })) });
        return;
      }
      for (const { q, input } of answers) state.extra[q.form_field_name] = input.value.trim();
      await run(ctxForm, next);
    });
    followUp.append(ctxForm);
    /** @type {HTMLHeadingElement} */ (ctxForm.querySelector('h2')).focus();
  }

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    // A new description starts over: no draft judge and no earlier answers.
    state.judgeId = undefined;
    state.extra = {};
    clear(followUp);
    await run(form, submit);
  });

  page.append(
    pageHeading('Generate a judge'),
    h(
      'p',
      { class: 'lead' },
      'Describe your application and the stage to evaluate. Tribunal picks preset evaluators where they fit and writes new ones, with rubrics, where none does.',
    ),
    demo ? notice('Judges made with a demo key are public.', 'info') : null,
    form,
    followUp,
    h('p', {}, 'Prefer to choose the evaluators yourself? ', link('/app/judges/new', 'Assemble a judge from evaluators'), '.'),
  );
}
