// A review queue, one item at a time (issue 31 item 5): keyboard-first. Keys 0-9 set the focused
// evaluator's score (0 = 0.0 ... 9 = 0.9, "1" twice = 1.0 is typed in the box), Tab moves on, Enter
// submits, Escape skips (with a reason). The judge's scores and justifications stay hidden until the
// person has scored (unless the queue shows them), so the judge does not anchor them; then they are
// shown beside the person's, and Enter leases the next item. Progress and agreement so far on top.
/** @import { ExecutionLog, ReviewQueue } from '../lib/types.js' */
import { api } from '../lib/api.js';
import { clear, h } from '../lib/dom.js';
import { badge, errorBox, fmtScore, notice, pageHeading, withBusy } from '../lib/ui.js';

/**
 * @param {import('../lib/types.js').PageElement} page
 * @param {import('../lib/types.js').PageContext} ctx
 */
export default async function review(page, { params }) {
  const id = params.id;
  const status = h('div', { class: 'review-status', 'aria-live': 'polite' });
  const area = h('div', { class: 'review-item' });
  page.append(pageHeading('Review'), status, area);

  async function showStatus() {
    /** @type {ReviewQueue} */
    const q = await api('GET', `/v1/review-queues/${encodeURIComponent(id)}/`);
    /** @type {HTMLHeadingElement} */ (page.querySelector('h1')).textContent = `Review: ${q.name}`; // the page's heading
    clear(status);
    const c = q.counts;
    status.append(
      h(
        'p',
        { class: 'progress' },
        `${c.done} done · ${c.leased} being scored · ${c.queued} waiting · ${c.skipped} skipped · ${q.annotators_per_item} ${q.annotators_per_item === 1 ? 'person' : 'people'} per item`,
      ),
      h(
        'p',
        { class: 'agreement muted' },
        'Agreement so far: ',
        q.agreement
          .map(
            (/** @type {ReviewQueue['agreement'][number]} */ a) =>
              `${a.evaluator_id}: α ${a.alpha === null ? '— (needs two items scored by two people)' : a.alpha.toFixed(2)} (${a.n_items} items)`,
          )
          .join(' · '),
      ),
    );
    return q;
  }

  async function next() {
    clear(area);
    const item = await api('POST', `/v1/review-queues/${encodeURIComponent(id)}/next/`, { body: {} });
    if (!item || !item.item_id) {
      area.append(notice('Nothing left for you in this queue. Thank you!', 'success'));
      return;
    }
    showItem(item);
  }

  /**
   * A leased item (POST .../next/ in src/review/ops.ts): its run, typed there as a plain record, is an
   * execution log whose scores the queue may hide.
   * @param {{ item_id: string, execution_log_id: string, lease_expires_at?: string, evaluator_ids: string[], show_justification?: boolean, log: ExecutionLog }} item
   */
  function showItem(item) {
    const log = item.log;
    const names = new Map(log.evaluator_results.map((r) => [r.evaluator_id, r.evaluator_name]));
    const inputs = item.evaluator_ids.map((evaluatorId) => ({
      evaluatorId,
      score: h('input', {
        type: 'number',
        min: '0',
        max: '1',
        step: '0.1',
        required: true,
        'aria-label': `Score for ${names.get(evaluatorId) ?? evaluatorId}`,
        'data-evaluator': evaluatorId,
      }),
      note: h('input', { type: 'text', maxlength: '4000', 'aria-label': `Note for ${names.get(evaluatorId) ?? evaluatorId}` }),
    }));
    const submit = h('button', { type: 'submit' }, 'Submit (Enter)');
    const skip = h('button', { type: 'button', class: 'secondary' }, 'Skip (Esc)');
    const judgeArea = h('div', { class: 'judge-verdicts' });
    const form = h(
      'form',
      { class: 'card stack', 'aria-label': 'Your scores' },
      log.request ? [h('h3', {}, 'Request'), h('pre', { class: 'text' }, log.request)] : null,
      h('h3', {}, 'Response'),
      h('pre', { class: 'text review-response' }, log.response ?? ''),
      log.contexts?.length ? [h('h3', {}, 'Contexts'), log.contexts.map((c) => h('pre', { class: 'text small' }, c))] : null,
      h('p', { class: 'muted small' }, 'Keys: 0–9 set the focused score (0.0–0.9), Tab moves on, Enter submits, Esc skips.'),
      inputs.map((i) => h('fieldset', {}, h('legend', {}, names.get(i.evaluatorId) ?? i.evaluatorId), i.score, i.note)),
      h('div', { class: 'actions' }, submit, skip),
      h('div', { class: 'form-error' }),
      judgeArea,
    );
    if (item.show_justification) judgeArea.append(judgeVerdicts(log));
    area.append(form);
    if (inputs[0]) focusWhenShown(inputs[0].score);

    form.addEventListener('keydown', (e) => {
      if (e.target instanceof HTMLInputElement && e.target.type === 'number' && /^[0-9]$/.test(e.key)) {
        e.preventDefault();
        e.target.value = (Number(e.key) / 10).toFixed(1);
      } else if (e.key === 'Escape') {
        e.preventDefault();
        skip.click();
      }
    });
    skip.addEventListener('click', async () => {
      const reason = prompt('Why skip this item?', 'not sure');
      if (!reason) return;
      await api('POST', `/v1/review-queues/${encodeURIComponent(id)}/items/${encodeURIComponent(item.item_id)}/skip/`, { body: { reason } });
      await showStatus();
      await next();
    });
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      if (!form.reportValidity()) return;
      const annotations = inputs.map((i) => ({
        evaluator_id: i.evaluatorId,
        score: Number(i.score.value),
        ...(i.note.value.trim() ? { note: i.note.value.trim() } : {}),
      }));
      await withBusy(submit, 'Saving…', async () => {
        try {
          await api('POST', `/v1/review-queues/${encodeURIComponent(id)}/items/${encodeURIComponent(item.item_id)}/annotations/`, { body: { annotations } });
        } catch (err) {
          /** @type {HTMLElement} */ (form.querySelector('.form-error')).replaceChildren(errorBox(err)); // the form has its error area
          return;
        }
        // Scored: now the judge's verdicts may be seen, and Enter goes on.
        const full = await api('GET', `/v1/execution-logs/${encodeURIComponent(item.execution_log_id)}/`);
        for (const el of form.querySelectorAll('input, button')) /** @type {HTMLInputElement | HTMLButtonElement} */ (el).disabled = true;
        clear(judgeArea);
        const go = h('button', { type: 'button', class: 'next-item' }, 'Next item (Enter)');
        go.addEventListener('click', () => next().catch((err) => area.replaceChildren(errorBox(err))));
        judgeArea.append(notice('Saved.', 'success'), judgeVerdicts(full), h('div', { class: 'actions' }, go));
        focusWhenShown(go);
        await showStatus();
      });
    });
  }

  await showStatus();
  await next();
}

/**
 * Focus once the page is in the document (the router shows a page after it has rendered).
 * @param {HTMLElement} el
 */
function focusWhenShown(el, tries = 120) {
  if (el.isConnected) el.focus();
  else if (tries > 0) requestAnimationFrame(() => focusWhenShown(el, tries - 1));
}

/**
 * @param {ExecutionLog} log
 */
function judgeVerdicts(log) {
  return h(
    'section',
    { class: 'stack', 'aria-label': 'The judge said' },
    h('h3', {}, 'The judge said'),
    log.evaluator_results.map((r) => h('p', { class: 'judge-verdict' }, badge(r.evaluator_name), ` ${fmtScore(r.score)} — ${r.justification ?? ''}`)),
  );
}
