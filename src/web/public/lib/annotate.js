// On a run's page: per evaluator result, what a person says it should have scored (0..1) and why.
// One annotation per (run, evaluator): the first save creates it (POST), later saves edit it (PATCH).
// Annotations feed calibration datasets (POST /v1/datasets/{id}/items/from-annotations/).
import { api } from './api.js';
import { clear, h } from './dom.js';
import { field, fmtScore, notice, showFormError, time, withBusy } from './ui.js';

/** @import { Annotation, EvaluatorResult, ExecutionLog } from './types.js' */

/** @param {ExecutionLog} log */
export async function annotationsSection(log) {
  const results = log.evaluator_results.filter((r) => r.evaluator_id);
  if (!results.length) return null;
  const { results: existing } = await api('GET', '/v1/annotations/', { query: { execution_log_id: log.id, limit: 200 } });
  const byEvaluator = new Map(/** @type {Annotation[]} */ (existing).map((a) => [a.evaluator_id, a]));
  return h(
    'section',
    { 'aria-labelledby': 'annotate-title' },
    h('h2', { id: 'annotate-title' }, 'Your verdict'),
    h('p', { class: 'muted' }, 'Where an evaluator got it wrong, say what it should have scored: annotations become the labelled items a calibration measures the judge against.'),
    h(
      'div',
      { class: 'cards annotations' },
      results.map((r) => annotationForm(log, r, byEvaluator.get(r.evaluator_id) ?? null)),
    ),
  );
}

/**
 * @param {ExecutionLog} log
 * @param {EvaluatorResult} result
 * @param {Annotation | null} annotation the person's earlier verdict, if any

 */
function annotationForm(log, result, annotation) {
  let current = annotation;
  const score = h('input', { type: 'number', min: '0', max: '1', step: '0.05', required: true, value: current ? String(current.score) : '' });
  const note = h('textarea', { rows: '2', maxlength: '4000' }, current?.note ?? '');
  const submit = h('button', { type: 'submit' }, 'Save verdict');
  const saved = h('div', { class: 'saved', 'aria-live': 'polite' });
  const showSaved = () => {
    clear(saved);
    if (current)
      saved.append(
        h('p', { class: 'small' }, `Person: ${fmtScore(current.score)} (judge ${fmtScore(result.score)})${current.note ? ` — ${current.note}` : ''} · `, time(current.updated_at)),
      );
    else saved.append(h('p', { class: 'small muted' }, 'Not annotated yet.'));
  };
  showSaved();
  const form = h(
    'form',
    { class: 'card stack', 'data-evaluator': result.evaluator_id },
    h(
      'fieldset',
      {},
      h('legend', {}, result.evaluator_name, h('span', { class: 'muted' }, ` scored ${fmtScore(result.score)}`)),
      field({ label: 'Score it should have had', name: 'score', hint: '0 to 1' }, score),
      field({ label: 'Note', name: 'note', hint: 'Why (optional): it becomes the demonstration’s justification.' }, note),
      h('div', { class: 'actions' }, submit),
      h('div', { class: 'form-error' }),
      saved,
    ),
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    if (!form.reportValidity()) return;
    const body = { score: Number(score.value), note: note.value.trim() || null };
    await withBusy(submit, 'Saving…', async () => {
      try {
        current = current
          ? await api('PATCH', `/v1/annotations/${encodeURIComponent(current.id)}/`, { body })
          : await api('POST', '/v1/annotations/', { body: { execution_log_id: log.id, evaluator_id: result.evaluator_id, ...body, note: body.note ?? undefined } });
        form.querySelector('.form-error')?.replaceChildren();
        showSaved();
        saved.prepend(notice('Saved.', 'success'));
      } catch (err) {
        showFormError(form, err);
      }
    });
  });
  return form;
}
