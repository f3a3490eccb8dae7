// The evaluator form's kind: llm (the rubric), check (a JSON list of checks) or code (a JavaScript
// score(input) body), with a "Try on this input" panel that scores the draft (POST /v1/evaluators/try/)
// without saving it. docs/CHECKS.md.
import { api } from '../lib/api.js';
import { h } from '../lib/dom.js';
import { field, fmtScore, select, showFormError, withBusy } from '../lib/ui.js';

const CHECKS_EXAMPLE = JSON.stringify([{ type: 'json_valid' }, { type: 'length', max: 200, unit: 'words' }], null, 2);
const CODE_EXAMPLE =
  '// input: request, response, contexts, expected_output, turns, metadata\nconst words = input.response.split(/\\s+/).filter(Boolean).length;\nreturn words <= 200 ? 1 : { score: 0, justification: `${words} words` };';

/**
 * Builds the kind controls. `llmOnly` are the form's fields that belong to kind llm (hidden for the
 * others). Returns the section to place in the form and `fields()`, which answers the body fields of
 * the chosen kind (or throws a message for the form).
 * @param {import('../lib/types.js').Evaluator | null} start the evaluator edited or copied; null for a new one
 * @param {HTMLDivElement[]} llmOnly
 */
export function kindEditor(start, llmOnly) {
  const kind = select(
    'kind',
    [
      ['llm', 'LLM: the judge model scores with the rubric'],
      ['check', 'Check: declarative rules, no model'],
      ['code', 'Code: JavaScript score(input), no model'],
    ],
    start?.kind ?? 'llm',
  );
  const checks = h('textarea', { rows: '10', class: 'mono editor', spellcheck: 'false', value: start?.checks ? JSON.stringify(start.checks, null, 2) : CHECKS_EXAMPLE });
  const combine = select(
    'combine',
    [
      ['all', 'all: 1 when every check passes'],
      ['any', 'any: 1 when one passes'],
      ['fraction', 'fraction: the share that passed'],
    ],
    start?.combine ?? 'all',
  );
  const code = h('textarea', { rows: '14', class: 'mono editor', spellcheck: 'false', value: start?.code ?? CODE_EXAMPLE });
  const checkPart = h(
    'div',
    { class: 'stack' },
    field(
      {
        label: 'Checks (JSON)',
        name: 'checks',
        hint: 'json_valid, json_schema {schema}, regex {pattern, flags}, contains / not_contains {value}, equals {value?}, json_path {path, equals?}, length {min?, max?, unit}, tool_call {name, called?, arguments_schema?}; each may read field: response, request or expected_output.',
      },
      checks,
    ),
    field({ label: 'Combine', name: 'combine' }, combine),
  );
  const codePart = field(
    {
      label: 'Code',
      name: 'code',
      hint: 'The body of function score(input), returning a number 0..1 or {score, justification}. It runs in a sandbox: no I/O, a time and a memory limit.',
    },
    code,
  );

  const fields = () => {
    if (kind.value === 'llm') return { kind: 'llm' };
    if (kind.value === 'code') return { kind: 'code', code: code.value };
    let parsed;
    try {
      parsed = JSON.parse(checks.value);
    } catch (err) {
      throw { message: `Checks are not valid JSON: ${/** @type {SyntaxError} */ (err).message}`, errors: [{ field: 'checks', message: 'Not valid JSON.' }] };
    }
    return { kind: 'check', checks: parsed, combine: combine.value };
  };

  // Try on this input.
  const tryResponse = h('textarea', { rows: '4', value: '' });
  const tryRequest = h('input', { type: 'text', value: '' });
  const tryExpected = h('input', { type: 'text', value: '' });
  const tryButton = h('button', { type: 'button', class: 'secondary' }, 'Try on this input');
  const result = h('div', { class: 'try-result', role: 'status', 'aria-live': 'polite' });
  const tryPanel = h(
    'fieldset',
    { class: 'stack' },
    h('legend', {}, 'Try on this input (not saved)'),
    field({ label: 'Response to score', name: 'try_response' }, tryResponse),
    h(
      'div',
      { class: 'row' },
      field({ label: 'Request (optional)', name: 'try_request' }, tryRequest),
      field({ label: 'Expected output (optional)', name: 'try_expected_output' }, tryExpected),
    ),
    h('div', { class: 'actions' }, tryButton),
    result,
  );
  tryButton.addEventListener('click', async () => {
    const form = /** @type {HTMLFormElement} */ (tryButton.closest('form')); // the editor sits in the evaluator form
    /** @type {Record<string, unknown>} */
    let body;
    try {
      body = { ...fields(), response: tryResponse.value };
    } catch (err) {
      showFormError(form, err);
      return;
    }
    if (tryRequest.value) body.request = tryRequest.value;
    if (tryExpected.value) body.expected_output = tryExpected.value;
    await withBusy(tryButton, 'Trying…', async () => {
      result.replaceChildren();
      try {
        const r = await api('POST', '/v1/evaluators/try/', { body });
        result.append(h('p', {}, h('strong', {}, `Score ${fmtScore(r.score)}`), r.error ? ` — error: ${r.error}` : ` — ${r.justification}`));
      } catch (err) {
        showFormError(form, err);
      }
    });
  });

  const sync = () => {
    const k = kind.value;
    checkPart.hidden = k !== 'check';
    codePart.hidden = k !== 'code';
    tryPanel.hidden = k === 'llm';
    for (const el of llmOnly) el.hidden = k !== 'llm';
  };
  kind.addEventListener('change', sync);
  queueMicrotask(sync);
  const section = h(
    'div',
    { class: 'stack' },
    field({ label: 'Kind', name: 'kind', hint: 'How it scores. Check and code evaluators call no model and cost nothing.' }, kind),
    checkPart,
    codePart,
    tryPanel,
  );
  return { section, fields, sync, kind };
}
