// A tiny element builder. Text always goes in as text nodes (never innerHTML), so nothing a server
// or a user wrote can become markup.

const SVG_NS = 'http://www.w3.org/2000/svg';

/**
 * An element's attributes: `class` (a list drops its empty entries), `text`, `dataset`, `on…` event
 * handlers, and any other attribute (false, null and undefined leave it off; true sets it empty).
 * @typedef {{
 *   class?: string | (string | false | null | undefined)[],
 *   text?: string | number | null,
 *   dataset?: Record<string, string>,
 *   onclick?: (event: MouseEvent) => void,
 *   onchange?: (event: Event) => void,
 *   [attribute: string]: unknown,
 * }} Props
 */

/**
 * What an element can hold: nodes, text (numbers become text), lists of them; null, undefined and
 * false are left out so a child can be written `cond ? node : null`. A JSDoc type cannot name itself,
 * so lists nest three deep here (the pages nest two); h() itself flattens any depth.
 * @typedef {Node | string | number | boolean | null | undefined} Leaf
 * @typedef {Leaf | ReadonlyArray<Leaf | ReadonlyArray<Leaf | ReadonlyArray<Leaf>>>} Child
 */

/**
 * @param {Element & { value?: unknown, checked?: unknown }} el
 * @param {Props | null | undefined} props
 */
function apply(el, props) {
  for (const [key, value] of Object.entries(props ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') el.setAttribute('class', Array.isArray(value) ? value.filter(Boolean).join(' ') : String(value));
    else if (key === 'text') el.textContent = String(value);
    else if (key === 'dataset') Object.assign(/** @type {HTMLElement | SVGElement} */ (el).dataset, value);
    else if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2).toLowerCase(), /** @type {EventListener} */ (value));
    else if (key === 'value' && 'value' in el) el.value = String(value);
    else if (key === 'checked' && 'checked' in el) el.checked = Boolean(value);
    else if (value === true) el.setAttribute(key, '');
    else el.setAttribute(key, String(value));
  }
}

/**
 * @param {Element} el
 * @param {Child[]} children
 */
function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/**
 * h('a', {href: '/x', class: 'btn'}, 'text', otherNode)
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Props | null} [props]
 * @param {...Child} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  apply(el, props);
  append(el, children);
  return el;
}

/**
 * The same for SVG elements.
 * @template {keyof SVGElementTagNameMap} K
 * @param {K} tag
 * @param {Props | null} [props]
 * @param {...Child} children
 * @returns {SVGElementTagNameMap[K]}
 */
export function s(tag, props, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  apply(el, props);
  append(el, children);
  return el;
}

/**
 * Empties an element and hands it back, so a caller can write clear(el).append(...).
 * @template {Element} E
 * @param {E} el
 * @returns {E}
 */
export function clear(el) {
  while (el.firstChild) el.firstChild.remove();
  return el;
}

let counter = 0;
/** A unique id for label/aria wiring. */
export const uid = (prefix = 'f') => `${prefix}-${++counter}`;
