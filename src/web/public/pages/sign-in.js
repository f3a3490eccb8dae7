// Sign in with an API key, or make a demo organization with one click. The key goes to the server once,
// which answers with an HttpOnly session cookie; the page keeps nothing.
import { api } from '../lib/api.js';
import { h } from '../lib/dom.js';
import { button, copyField, field, showFormError, withBusy } from '../lib/ui.js';

/**
 * @param {import('../lib/types.js').PageElement} page
 * @param {import('../lib/types.js').PageContext} ctx
 */
export default async function signIn(page, { app, query }) {
  const next = safeNext(query.get('next'));
  if (app.session) return app.navigate(next, { replace: true });

  const keyInput = h('input', { type: 'password', autocomplete: 'off', spellcheck: 'false', placeholder: 'trb_…' });
  const submit = h('button', { type: 'submit' }, 'Sign in');
  const form = h(
    'form',
    { class: 'card stack', novalidate: true, 'aria-labelledby': 'sign-in-key' },
    h('h2', { id: 'sign-in-key' }, 'Sign in with an API key'),
    field({ label: 'API key', name: 'api_key', hint: 'A key of your organization. It is exchanged for a session cookie and not kept by this page.' }, keyInput),
    h('div', { class: 'actions' }, submit),
    h('div', { class: 'form-error' }),
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    await withBusy(submit, 'Signing in…', async () => {
      try {
        app.setSession(await api('POST', '/app/session', { body: { api_key: keyInput.value }, session: false }));
        keyInput.value = '';
        app.navigate(next);
      } catch (err) {
        showFormError(form, err);
      }
    });
  });

  const demoButton = button('Get a demo key', { id: 'demo' });
  const demo = h(
    'section',
    { class: 'card stack', 'aria-labelledby': 'demo-title' },
    h('h2', { id: 'demo-title' }, 'New here?'),
    h('p', {}, 'Get a demo key: it makes a temporary demo organization and signs you in. The key expires (24 hours by default) and everything you make with it is public.'),
    h('div', { class: 'actions' }, demoButton),
    h('div', { class: 'form-error' }),
  );
  demoButton.addEventListener('click', async () => {
    await withBusy(demoButton, 'Creating a demo organization…', async () => {
      try {
        const made = await api('POST', '/create-demo-user/', { session: false });
        app.setSession(await api('POST', '/app/session', { body: { api_key: made.api_key }, session: false }));
        // Shown once so it can be used from an agent or curl; not stored anywhere by the page.
        app.flash(
          h(
            'section',
            { class: 'notice success stack', 'aria-labelledby': 'demo-key-title' },
            h('h2', { id: 'demo-key-title' }, 'You are signed in with a new demo key'),
            h(
              'p',
              {},
              `It works until ${new Date(made.expires_at).toLocaleString()}. Copy it now if you want to use it from an agent (MCP) or curl: this is the only time it is shown. You can also create more keys under API keys.`,
            ),
            copyField(made.api_key, 'Your demo API key'),
          ),
        );
        app.navigate(next);
      } catch (err) {
        /** @type {HTMLElement} */ (demo.querySelector('.form-error')).replaceChildren(
          // the demo form has its error area
          h('p', { class: 'error', role: 'alert' }, /** @type {Error} */ (err).message),
        );
      }
    });
  });

  page.append(
    h('h1', { tabindex: '-1' }, 'Sign in to Tribunal'),
    h('p', { class: 'lead' }, 'Tribunal scores LLM outputs with evaluators (one quality each, 0 to 1 with a written justification), grouped into judges, and records every run.'),
    h('div', { class: 'grid-2' }, form, demo),
  );
}

/**
 * Only a path inside the app: a crafted ?next= must not send anyone to another site.
 * @param {string | null} next
 */
function safeNext(next) {
  return next && /^\/app\/[^/\\]/.test(next) && !next.startsWith('/app/sign-in') ? next : '/app/judges';
}
