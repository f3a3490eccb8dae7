// Create or edit an evaluation rule: what judges (a judge or an evaluator), which spans (filter rows:
// field, operator, value), how many (sampling rate, daily budget), when (scope and delay), and what
// happens when the queue is full. The server checks everything; its field errors show beside the rows.
/** @import { FilterCondition, Rule } from '../lib/types.js' */
import { api } from '../lib/api.js';
import { h } from '../lib/dom.js';
import { button, checkboxField, field, link, pageHeading, select, showFormError, withBusy } from '../lib/ui.js';
import { targetNames } from './rules.js';

/** @type {Array<[op: string, text: string]>} */
const OPS = [
  ['eq', 'equals'],
  ['ne', 'does not equal'],
  ['in', 'is one of (comma-separated)'],
  ['contains', 'contains'],
  ['exists', 'exists'],
  ['gt', 'greater than'],
  ['lt', 'less than'],
];
const FIELDS = ['service.name', 'span.name', 'span.kind', 'status', 'gen_ai.operation.name', 'gen_ai.request.model', 'openinference.span.kind'];

/**
 * A row's value as the API takes it: a list for `in`, a number for gt/lt, none for exists.
 * @param {string} op
 * @param {string} text
 */
function apiValue(op, text) {
  if (op === 'exists') return undefined;
  if (op === 'in')
    return text
      .split(',')
      .map((/** @type {string} */ v) => v.trim())
      .filter(Boolean);
  if ((op === 'gt' || op === 'lt') && text.trim() !== '' && Number.isFinite(Number(text))) return Number(text);
  return text;
}
const textOf = (/** @type {FilterCondition['value']} */ value) => (value === undefined ? '' : Array.isArray(value) ? value.join(', ') : String(value));

/**
 * @param {FilterCondition[]} initial the rule's conditions (none for a new rule)
 */
function filterRows(initial) {
  const list = h('ol', { class: 'filter-rows' });
  const renumber = () =>
    [...list.children].forEach((li, i) => {
      for (const [sel, what] of [
        ['[data-part="field"]', 'Field'],
        ['[data-part="op"]', 'Operator'],
        ['[data-part="value"]', 'Value'],
        ['button', 'Remove condition'],
      ]) {
        const part = /** @type {Element} */ (li.querySelector(sel)); // every row has its four parts
        part.setAttribute('aria-label', `${what} ${i + 1}`);
      }
    });
  const add = (/** @type {FilterCondition} */ c = { field: '', op: 'eq', value: '' }) => {
    const fieldInput = h('input', {
      type: 'text',
      value: c.field,
      list: 'rule-fields',
      autocomplete: 'off',
      spellcheck: 'false',
      'data-part': 'field',
      placeholder: 'service.name',
    });
    const op = select('op', OPS, c.op);
    op.dataset.part = 'op';
    const value = h('input', { type: 'text', value: textOf(c.value), autocomplete: 'off', 'data-part': 'value' });
    const sync = () => (value.disabled = op.value === 'exists');
    op.addEventListener('change', sync);
    sync();
    const li = h('li', { class: 'filter-row' }, fieldInput, op, value);
    li.append(button('Remove', { class: 'secondary small', onclick: () => (li.remove(), renumber()) }));
    list.append(li);
    renumber();
    return fieldInput;
  };
  for (const c of initial) add(c);
  const read = () =>
    [...list.children]
      .map((li) => {
        // Every row has its three parts (add() builds them).
        const f = /** @type {HTMLInputElement} */ (li.querySelector('[data-part="field"]')).value.trim();
        const op = /** @type {HTMLSelectElement} */ (li.querySelector('[data-part="op"]')).value;
        const v = apiValue(op, /** @type {HTMLInputElement} */ (li.querySelector('[data-part="value"]')).value);
        return f ? { field: f, op, ...(v === undefined ? {} : { value: v }) } : null;
      })
      .filter(Boolean);
  const fieldset = h(
    'fieldset',
    { 'data-field': 'filter' },
    h('legend', {}, 'Which spans'),
    h('p', { class: 'hint' }, 'All conditions must hold. A field is service.name, span.name, span.kind, status, or any span attribute key. No condition: every span.'),
    h(
      'datalist',
      { id: 'rule-fields' },
      FIELDS.map((f) => h('option', { value: f })),
    ),
    list,
    button('Add a condition', { class: 'secondary small', onclick: () => add().focus() }),
  );
  return { fieldset, read };
}

/**
 * @param {import('../lib/types.js').PageElement} page
 * @param {import('../lib/types.js').PageContext} ctx
 */
export default async function ruleForm(page, { app, params }) {
  const editing = params.id !== undefined;
  // r is the rule when editing (null for a new one): the casts to Rule below sit behind `editing`.
  /** @type {[Rule | null, Awaited<ReturnType<typeof targetNames>>]} */
  const [r, { judges, evaluators }] = await Promise.all([editing ? api('GET', `/v1/evaluation-rules/${encodeURIComponent(params.id)}/`) : null, targetNames()]);
  const name = h('input', { type: 'text', value: r?.name ?? '', autocomplete: 'off' });
  const current = r ? (r.judge_id ? `judge:${r.judge_id}` : `evaluator:${r.evaluator_id}`) : '';
  const target = h(
    'select',
    { name: 'judge_id' },
    h('option', { value: '' }, 'Choose a judge or an evaluator'),
    h(
      'optgroup',
      { label: 'Judges' },
      judges.map((j) => h('option', { value: `judge:${j.id}`, selected: current === `judge:${j.id}` }, j.name)),
    ),
    h(
      'optgroup',
      { label: 'Evaluators' },
      evaluators.map((e) => h('option', { value: `evaluator:${e.id}`, selected: current === `evaluator:${e.id}` }, e.name)),
    ),
  );
  const scope = select(
    'scope',
    [
      ['span', 'Each matching span'],
      ['trace', 'A trace as one conversation'],
      ['session', 'A session as one conversation'],
    ],
    r?.scope ?? 'span',
  );
  const number = (/** @type {number | undefined} */ value, /** @type {import("../lib/dom.js").Props} */ props) =>
    h('input', { type: 'number', inputmode: 'decimal', value: value ?? '', ...props });
  const rate = number(r?.sampling_rate ?? 1, { min: '0', max: '1', step: 'any' });
  const delay = number(r?.delay_seconds ?? 0, { min: '0', max: '86400', step: '1' });
  const maxRuns = number(r?.budget?.max_runs_per_day, { min: '0', step: '1' });
  const maxCost = number(r?.budget?.max_cost_usd_per_day, { min: '0', step: 'any' });
  const queueLimit = number(r?.queue_limit ?? 10000, { min: '1', step: '1' });
  const shed = select(
    'shed_policy',
    [
      ['drop_oldest', 'Drop the oldest waiting unit'],
      ['drop_newest', 'Drop the newest unit'],
    ],
    r?.shed_policy ?? 'drop_oldest',
  );
  const active = checkboxField({ label: 'Active', name: 'active', checked: r?.active ?? true, hint: 'A paused rule matches nothing.' });
  const filter = filterRows(r?.filter ?? [{ field: 'gen_ai.operation.name', op: 'eq', value: 'chat' }]);
  const save = h('button', { type: 'submit' }, editing ? 'Save rule' : 'Create rule');
  const num = (/** @type {HTMLInputElement} */ input) => (input.value.trim() === '' ? undefined : Number(input.value));
  const form = h(
    'form',
    { class: 'stack rule-form', novalidate: true, 'aria-label': editing ? 'Edit rule' : 'New rule' },
    field({ label: 'Name', name: 'name', required: true }, name),
    field({ label: 'Judged by', name: 'judge_id', required: true }, target),
    filter.fieldset,
    h(
      'div',
      { class: 'row' },
      field({ label: 'Sampling rate', name: 'sampling_rate', hint: '0 to 1: the share of traces judged (by trace id, so rules agree).' }, rate),
      field({ label: 'Scope', name: 'scope' }, scope),
      field({ label: 'Delay (seconds)', name: 'delay_seconds', hint: 'Wait this long after the last matching span.' }, delay),
    ),
    h(
      'fieldset',
      { 'data-field': 'budget' },
      h('legend', {}, 'Daily budget (optional)'),
      h(
        'div',
        { class: 'row' },
        field({ label: 'Runs per day', name: 'max_runs_per_day' }, maxRuns),
        field({ label: 'Cost per day (USD)', name: 'max_cost_usd_per_day' }, maxCost),
      ),
    ),
    h(
      'div',
      { class: 'row' },
      field({ label: 'Queue limit', name: 'queue_limit', hint: 'Units waiting at most.' }, queueLimit),
      field({ label: 'When the queue is full', name: 'shed_policy' }, shed),
    ),
    active,
    h('div', { class: 'actions' }, save, link(editing ? `/app/rules/${encodeURIComponent(/** @type {Rule} */ (r).id)}` : '/app/rules', 'Cancel', { class: 'button secondary' })),
    h('div', { class: 'form-error' }),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const [kind, id] = target.value.split(/:(.*)/);
    const budget = { max_runs_per_day: num(maxRuns), max_cost_usd_per_day: num(maxCost) };
    const body = {
      name: name.value,
      ...(kind === 'judge' ? { judge_id: id, evaluator_id: null } : kind === 'evaluator' ? { evaluator_id: id, judge_id: null } : {}),
      scope: scope.value,
      filter: filter.read(),
      sampling_rate: num(rate),
      delay_seconds: num(delay),
      budget: budget.max_runs_per_day === undefined && budget.max_cost_usd_per_day === undefined ? null : JSON.parse(JSON.stringify(budget)),
      queue_limit: num(queueLimit),
      shed_policy: shed.value,
      active: /** @type {HTMLInputElement} */ (active.querySelector('input')).checked, // a checkbox field
    };
    void withBusy(save, 'Saving…', async () => {
      try {
        const saved = editing
          ? await api('PATCH', `/v1/evaluation-rules/${encodeURIComponent(/** @type {Rule} */ (r).id)}/`, { body })
          : await api('POST', '/v1/evaluation-rules/', { body });
        app.flash(editing ? `Rule ${saved.name} saved.` : `Rule ${saved.name} created: matching spans received from now on are judged.`);
        app.navigate(`/app/rules/${encodeURIComponent(saved.id)}`);
      } catch (err) {
        showFormError(form, err);
      }
    });
  });
  page.append(pageHeading(editing ? `Edit rule: ${/** @type {Rule} */ (r).name}` : 'New evaluation rule'), form);
}
