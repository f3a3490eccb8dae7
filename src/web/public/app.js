// The one-page app: session, header, and a small router over real /app/... addresses.
import { api, onSessionLost, setCsrfToken } from './lib/api.js';
import { clear, h } from './lib/dom.js';
import { badge, button, errorBox, notice } from './lib/ui.js';
import signIn from './pages/sign-in.js';
import keys from './pages/keys.js';
import models from './pages/models.js';
import judges from './pages/judges.js';
import judge from './pages/judge.js';
import judgeForm from './pages/judge-form.js';
import generate from './pages/generate.js';
import evaluators from './pages/evaluators.js';
import evaluator from './pages/evaluator.js';
import evaluatorForm from './pages/evaluator-form.js';
import logs from './pages/logs.js';
import log from './pages/log.js';
import session from './pages/session.js';
import datasets from './pages/datasets.js';
import dataset from './pages/dataset.js';
import calibrations from './pages/calibrations.js';
import calibration from './pages/calibration.js';
import batches from './pages/batches.js';
import batch from './pages/batch.js';
import batchCompare from './pages/batch-compare.js';
import review from './pages/review.js'; // h-review
import reviews from './pages/reviews.js'; // h-review
import traces from './pages/traces.js'; // issue 28: online evaluation
import trace from './pages/trace.js';
import rules from './pages/rules.js';
import rule from './pages/rule.js';
import ruleForm from './pages/rule-form.js';

/** @import { App, Page, PageElement, Session } from './lib/types.js' */
/** @type {Array<[pattern: string, page: Page, opts?: { public?: boolean }]>} */
const ROUTE_TABLE = [
  ['/app/sign-in', signIn, { public: true }],
  ['/app/keys', keys],
  ['/app/models', models],
  ['/app/judges', judges],
  ['/app/judges/new', judgeForm],
  ['/app/judges/generate', generate],
  ['/app/judges/:id', judge],
  ['/app/judges/:id/edit', judgeForm],
  ['/app/evaluators', evaluators],
  ['/app/evaluators/new', evaluatorForm],
  ['/app/evaluators/:id', evaluator],
  ['/app/evaluators/:id/edit', evaluatorForm],
  ['/app/logs', logs],
  ['/app/logs/:id', log],
  ['/app/sessions/:id', session],
  ['/app/datasets', datasets],
  ['/app/datasets/:id', dataset],
  ['/app/calibrations', calibrations],
  ['/app/calibrations/:id', calibration],
  ['/app/batches', batches],
  ['/app/batches/:id', batch],
  ['/app/experiments', batchCompare],
  ['/app/review', reviews], // h-review: the review queues
  ['/app/review/:id', review], // h-review: one review queue, one item at a time
  ['/app/traces', traces],
  ['/app/traces/:id', trace],
  ['/app/rules', rules],
  ['/app/rules/new', ruleForm],
  ['/app/rules/:id', rule],
  ['/app/rules/:id/edit', ruleForm],
];
const routes = ROUTE_TABLE.map(([pattern, page, opts = {}]) => ({
  page,
  ...opts,
  names: [...pattern.matchAll(/:(\w+)/g)].map((m) => m[1]),
  regex: new RegExp(`^${pattern.replace(/:\w+/g, '([^/]+)')}/?$`),
}));

const NAV = [
  ['/app/judges', 'Judges'],
  ['/app/evaluators', 'Evaluators'],
  ['/app/logs', 'Execution logs'],
  ['/app/traces', 'Traces'], // issue 28: received traces and the rules that judge them online
  ['/app/rules', 'Rules'],
  ['/app/datasets', 'Datasets'],
  // In the order of the work: keep inputs, run a judge over them, measure it against people.
  ['/app/batches', 'Batch runs'],
  ['/app/calibrations', 'Calibrations'],
  ['/app/review', 'Review'], // h-review
  ['/app/models', 'Judge models'],
  ['/app/keys', 'API keys'],
];

/** @type {{ session: Session | null, projectIds: Set<string> | null, flash: Node[], renderId: number, rendered: boolean, renderedAddress: string | null }} */
const state = { session: null, projectIds: null, flash: [], renderId: 0, rendered: false, renderedAddress: null };

/** @type {App} */
export const app = {
  get session() {
    return state.session;
  },
  /** Ids of the caller's own projects: what is in them the caller may edit. */
  async ownProjectIds() {
    if (!state.projectIds) {
      const page = await api('GET', '/v1/projects/', { query: { limit: 200 } });
      state.projectIds = new Set(page.results.map((/** @type {import('./lib/types.js').Project} */ p) => p.id));
    }
    return state.projectIds;
  },
  async isOwn(resource) {
    return Boolean(resource.project_id) && (await app.ownProjectIds()).has(/** @type {string} */ (resource.project_id)); // not empty: checked first
  },
  /** A notice (or any node) shown once at the top of the next page. */
  flash(node) {
    state.flash.push(typeof node === 'string' ? notice(node, 'success') : node);
  },
  navigate(path, { replace = false } = {}) {
    if (replace) history.replaceState(null, '', path);
    else history.pushState(null, '', path);
    void render();
  },
  setSession(session) {
    state.session = session?.signed_in ? session : null;
    state.projectIds = null;
    setCsrfToken(state.session?.csrf_token ?? null);
    renderHeader();
  },
  async signOut() {
    try {
      await api('POST', '/app/session/sign-out', { session: false });
    } finally {
      app.setSession(null);
      app.flash(notice('You are signed out.', 'info'));
      app.navigate('/app/sign-in');
    }
  },
};

onSessionLost((detail) => {
  if (!state.session) return;
  app.setSession(null);
  app.flash(notice(`You were signed out: ${detail}`, 'warn'));
  app.navigate(`/app/sign-in?next=${encodeURIComponent(location.pathname + location.search)}`, { replace: true });
});

function renderHeader() {
  // The page shell (index.html) always has both.
  const nav = /** @type {HTMLElement} */ (document.getElementById('nav'));
  const account = /** @type {HTMLElement} */ (document.getElementById('account'));
  clear(nav);
  clear(account);
  if (!state.session) return;
  const here = location.pathname;
  nav.append(
    h(
      'ul',
      {},
      NAV.map(([href, text]) => h('li', {}, h('a', { href, 'aria-current': here === href || here.startsWith(`${href}/`) ? 'page' : undefined }, text))),
    ),
  );
  const { organization, key } = state.session;
  account.append(
    h('span', { class: 'who', title: `Signed in with key ${key.name} (${key.prefix})` }, organization.name, organization.is_demo ? badge('demo', 'demo') : null),
    button('Sign out', { class: 'secondary small', id: 'sign-out', onclick: () => void app.signOut() }),
  );
}

async function render() {
  const id = ++state.renderId;
  state.renderedAddress = location.pathname + location.search;
  const main = /** @type {HTMLElement} */ (document.getElementById('main')); // the page shell (index.html) always has it
  const path = location.pathname.replace(/\/+$/, '') || '/';
  if (path === '/app' || path === '/') {
    return app.navigate(state.session ? '/app/judges' : '/app/sign-in', { replace: true });
  }
  const route = routes.find((r) => r.regex.test(path));
  if (route && !route.public && !state.session) {
    return app.navigate(`/app/sign-in?next=${encodeURIComponent(location.pathname + location.search)}`, { replace: true });
  }
  renderHeader();
  const page = /** @type {PageElement & HTMLElement} */ (h('div', { class: 'page' }));
  // Pages append optional parts as `cond ? node : null`; skip the nulls instead of printing "null".
  page.append = (/** @type {import('./lib/dom.js').Child[]} */ ...nodes) =>
    Element.prototype.append.apply(page, /** @type {(Node | string)[]} */ (nodes.flat(Infinity).filter((n) => n !== null && n !== undefined && n !== false)));
  const flashes = state.flash.splice(0);
  if (!route) {
    page.append(h('h1', { tabindex: '-1' }, 'Page not found'), h('p', {}, `There is no page at ${location.pathname}. `, h('a', { href: '/app/judges' }, 'Go to judges')));
  } else {
    const params = Object.fromEntries(route.names.map((n, i) => [n, decodeURIComponent(/** @type {RegExpMatchArray} */ (path.match(route.regex))[i + 1])]));
    const ctx = { params, query: new URLSearchParams(location.search), app, isCurrent: () => id === state.renderId };
    try {
      await route.page(page, ctx);
    } catch (err) {
      // The page could not load (an unknown id, a server problem): say so, with the problem's detail.
      page.replaceChildren(h('h1', { tabindex: '-1' }, /** @type {{ status?: number }} */ (err).status === 404 ? 'Not found' : 'This page could not be loaded'), errorBox(err));
    }
  }
  if (id !== state.renderId) return;
  if (flashes.length) page.prepend(h('div', { class: 'flash' }, flashes));
  clear(main).append(page);
  const title = page.querySelector('h1')?.textContent;
  document.title = title ? `${title} · Tribunal` : 'Tribunal';
  // After a navigation, move focus to the new page's heading so keyboard and screen-reader users start there.
  if (state.rendered) (page.querySelector('h1') ?? main).focus();
  state.rendered = true;
}

document.addEventListener('click', (event) => {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  const a = /** @type {HTMLAnchorElement | null} */ (/** @type {Element} */ (event.target).closest?.('a[href]'));
  if (!a || a.target || a.hasAttribute('download')) return;
  const url = new URL(/** @type {string} */ (a.getAttribute('href')), location.href); // the selector asked for a[href] // getAttribute: SVG links have no string .href
  if (url.origin !== location.origin || !url.pathname.startsWith('/app') || url.pathname.startsWith('/app/static/')) return;
  if (url.pathname === location.pathname && url.search === location.search && url.hash) return;
  event.preventDefault();
  app.navigate(url.pathname + url.search);
});
// Back and forward re-render; a change of the #fragment alone (the skip link) must not.
window.addEventListener('popstate', () => {
  if (location.pathname + location.search !== state.renderedAddress) void render();
});

async function start() {
  try {
    const session = await api('GET', '/app/session', { session: false });
    app.setSession(session);
    if (!session.signed_in && session.reason) app.flash(notice(session.reason, 'warn'));
  } catch (err) {
    app.flash(errorBox(err));
  }
  await render();
}
void start();
