// issue 26 item 15: the one way to enter contexts, in both modes of "Try it" (score one response,
// compare two): one box per context, "Add a context" for another. Required by some evaluators, so the
// forms place it right after the response(s), before anything optional.
import { h } from './dom.js';
import { button, field } from './ui.js';

const names = (/** @type {Array<{ name: string }>} */ list) => list.map((e) => e.name).join(', ');

/**
 * needContexts: the evaluators that require contexts. Returns { fieldset, read() → string[] }.
 * @param {Array<{ name: string }>} needContexts
 */
export function contextsField(needContexts) {
  const contextList = h('ol', { class: 'contexts' });
  const addContext = (text = '') => {
    const n = contextList.children.length + 1;
    const area = h('textarea', { rows: '2', value: text, 'data-context': '' });
    const item = h('li', {}, field({ label: `Context ${n}` }, area));
    item.append(
      button('Remove', {
        class: 'secondary small',
        'aria-label': `Remove context ${n}`,
        onclick: () => {
          item.remove();
          renumber();
          /** @type {HTMLButtonElement} */ (fieldset.querySelector('.add-context')).focus(); // the fieldset always has it
        },
      }),
    );
    contextList.append(item);
    return area;
  };
  const renumber = () => {
    [...contextList.children].forEach((li, i) => {
      // Every item is built by addContext, with its label and its Remove button.
      /** @type {HTMLLabelElement} */ (li.querySelector('label')).textContent = `Context ${i + 1}`;
      /** @type {HTMLButtonElement} */ (li.querySelector('button')).setAttribute('aria-label', `Remove context ${i + 1}`);
    });
  };
  const fieldset = h(
    'fieldset',
    { 'data-field': 'contexts' },
    h('legend', {}, needContexts.length ? 'Contexts (required)' : 'Contexts'),
    h(
      'p',
      { class: 'hint' },
      needContexts.length
        ? `Required by ${names(needContexts)}: the retrieved snippets the response should be grounded in, one per box.`
        : 'Optional: retrieved snippets the response should be grounded in, one per box.',
    ),
    contextList,
    button('Add a context', { class: 'secondary small add-context', onclick: () => addContext().focus() }),
  );
  if (needContexts.length) addContext();
  const read = () => [...contextList.querySelectorAll('textarea')].map((t) => t.value).filter((t) => t.trim());
  return { fieldset, read };
}
