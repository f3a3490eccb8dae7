// The web app over plain HTTP: static files and their headers, sign-in and sign-out, the session cookie
// (flags, encryption, expiry, several instances), cookie auth on /v1 and its forgery checks.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../src/config.ts';
import { PUBLIC_DIR } from '../src/web/router.ts';
import { Sessions } from '../src/web/session.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

const SECRET = 'a-test-session-secret-that-is-long-enough-0123456789';

interface Signed {
  cookie: string;
  csrf: string;
  setCookie: string;
}

async function signIn(server: TestServer, apiKey: string, headers: Record<string, string> = {}): Promise<Signed> {
  const res = await fetch(`${server.url}/app/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: server.url, 'sec-fetch-site': 'same-origin', ...headers },
    body: JSON.stringify({ api_key: apiKey }),
  });
  assert.equal(res.status, 201, await res.clone().text());
  const setCookie = res.headers.get('set-cookie') ?? '';
  const body = await res.json();
  return { cookie: setCookie.split(';')[0], csrf: body.csrf_token, setCookie };
}

/** A request as the web app makes it: cookie, same origin, CSRF token on changes. */
function asBrowser(server: TestServer, s: Signed, method: string, p: string, opts: { body?: unknown; headers?: Record<string, string>; csrf?: string | null } = {}) {
  const headers: Record<string, string> = { cookie: s.cookie, origin: server.url, 'sec-fetch-site': 'same-origin', ...(opts.headers ?? {}) };
  if (opts.csrf !== null && method !== 'GET') headers['x-csrf-token'] = opts.csrf ?? s.csrf;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  return server.request(method, p, { headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
}

describe('web app over HTTP', () => {
  let server: TestServer;
  let key: string;

  before(async () => {
    // The tests play the proxy that ends TLS, so they are the configured proxy.
    server = await startTestServer({ TRIBUNAL_SESSION_SECRET: SECRET, TRUST_PROXY: 'loopback' });
    key = (await server.demoUser()).api_key;
  });
  after(() => server.close());

  it('redirects / to /app/ and serves the app shell with a strict CSP', async () => {
    const root = await fetch(`${server.url}/`, { redirect: 'manual' });
    assert.equal(root.status, 302);
    assert.equal(root.headers.get('location'), '/app/');
    for (const p of ['/app/', '/app/keys', '/app/judges/jdg_x', '/app/logs?judge_id=a']) {
      const res = await fetch(server.url + p);
      assert.equal(res.status, 200, p);
      assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
      const csp = res.headers.get('content-security-policy') ?? '';
      assert.match(csp, /default-src 'self'/);
      assert.match(csp, /frame-ancestors 'none'/);
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
      assert.match(await res.text(), /<script type="module" src="\/app\/static\/app\.js"><\/script>/);
    }
  });

  it('serves static files with their content types, and 404 problems for missing ones', async () => {
    const types: Record<string, RegExp> = {
      '/app/static/app.js': /^text\/javascript/,
      '/app/static/pages/keys.js': /^text\/javascript/,
      '/app/static/style.css': /^text\/css/,
      '/app/static/favicon.svg': /^image\/svg\+xml/,
    };
    for (const [p, type] of Object.entries(types)) {
      const res = await fetch(server.url + p);
      assert.equal(res.status, 200, p);
      assert.match(res.headers.get('content-type') ?? '', type, p);
      assert.match(res.headers.get('content-security-policy') ?? '', /default-src 'self'/);
    }
    for (const p of ['/app/static/nope.js', '/app/nope.js', '/app/static/../router.ts']) {
      const res = await fetch(server.url + p);
      assert.equal(res.status, 404, p);
      assert.match(res.headers.get('content-type') ?? '', /problem\+json/);
    }
  });

  it('loads nothing from another host: no remote URL in any web app file', () => {
    const remote: string[] = [];
    const walk = (dir: string) => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const file = path.join(dir, entry.name);
        if (entry.isDirectory()) walk(file);
        else {
          const text = fs.readFileSync(file, 'utf8').replaceAll('http://www.w3.org/2000/svg', '');
          for (const m of text.matchAll(/(?:https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}/gi)) remote.push(`${path.relative(PUBLIC_DIR, file)}: ${m[0]}`);
          if (/@import|@font-face|url\(/i.test(text) && file.endsWith('.css')) remote.push(`${file}: external CSS reference`);
        }
      }
    };
    walk(PUBLIC_DIR);
    assert.deepEqual(remote, []);
  });

  it('answers who is signed in with 200 either way', async () => {
    const res = await server.request('GET', '/app/session');
    assert.equal(res.status, 200);
    assert.equal(res.body.signed_in, false);
    const s = await signIn(server, key);
    const me = await server.request('GET', '/app/session', { headers: { cookie: s.cookie } });
    assert.equal(me.body.signed_in, true);
    assert.equal(me.body.csrf_token, s.csrf);
    assert.equal(me.body.organization.is_demo, true);
    assert.match(me.body.key.prefix, /^trb_/);
    assert.equal(JSON.stringify(me.body).includes(key), false, 'the key is never sent back');
  });

  it('signs in: an HttpOnly SameSite=Strict cookie that holds the key only encrypted', async () => {
    const s = await signIn(server, key);
    assert.match(s.setCookie, /^tribunal_session=[A-Za-z0-9_-]+; Path=\/; Max-Age=43200; HttpOnly; SameSite=Strict$/);
    const value = s.cookie.split('=')[1];
    assert.equal(value.includes(key.slice(4, 20)), false);
    assert.equal(Buffer.from(value, 'base64url').toString('latin1').includes(key.slice(4, 20)), false);
    assert.match(s.csrf, /^[A-Za-z0-9_-]{43}$/);
  });

  it('refuses bad sign-ins with a problem that says what to fix', async () => {
    const cases: Array<[unknown, number, RegExp]> = [
      [{}, 400, /Paste an API key/],
      [{ api_key: 'trb_nope' }, 401, /Malformed API key/],
      [{ api_key: `${key.slice(0, -3)}abc` }, 401, /Unknown API key/],
      [{ api_key: 'trb_a b' }, 401, /no spaces/],
    ];
    for (const [body, status, detail] of cases) {
      const res = await server.request('POST', '/app/session', { body });
      assert.equal(res.status, status, JSON.stringify(body));
      assert.match(res.body.detail, detail);
      assert.equal(res.headers.get('set-cookie'), null);
    }
    const text = await server.request('POST', '/app/session', { body: 'api_key=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    assert.equal(text.status, 415);
    const crossSite = await server.request('POST', '/app/session', { body: { api_key: key }, headers: { 'sec-fetch-site': 'cross-site' } });
    assert.equal(crossSite.status, 403);
    const otherOrigin = await server.request('POST', '/app/session', { body: { api_key: key }, headers: { origin: 'https://evil.example' } });
    assert.equal(otherOrigin.status, 403);
    assert.match(otherOrigin.body.detail, /evil\.example/);
  });

  it('authenticates /v1 with the cookie; changes need the CSRF token and the same origin', async () => {
    const s = await signIn(server, key);
    assert.equal((await asBrowser(server, s, 'GET', '/v1/judges/')).status, 200);

    const noToken = await asBrowser(server, s, 'POST', '/v1/api-keys/', { body: { name: 'x' }, csrf: null });
    assert.equal(noToken.status, 403);
    assert.match(noToken.body.detail, /X-CSRF-Token/);
    const wrongToken = await asBrowser(server, s, 'POST', '/v1/api-keys/', { body: { name: 'x' }, csrf: `${s.csrf.slice(0, -2)}xx` });
    assert.equal(wrongToken.status, 403);
    const otherOrigin = await asBrowser(server, s, 'POST', '/v1/api-keys/', { body: { name: 'x' }, headers: { origin: 'https://evil.example' } });
    assert.equal(otherOrigin.status, 403);
    const crossSiteRead = await asBrowser(server, s, 'GET', '/v1/api-keys/', { headers: { 'sec-fetch-site': 'cross-site' } });
    assert.equal(crossSiteRead.status, 403);
    // Another session's token does not fit this session.
    const other = await signIn(server, key);
    const swapped = await asBrowser(server, s, 'POST', '/v1/api-keys/', { body: { name: 'x' }, csrf: other.csrf });
    assert.equal(swapped.status, 403);

    const listed = await asBrowser(server, s, 'GET', '/v1/api-keys/');
    const before = listed.body.results.length;
    const made = await asBrowser(server, s, 'POST', '/v1/api-keys/', { body: { name: 'from the web' } });
    assert.equal(made.status, 201);
    assert.equal((await asBrowser(server, s, 'GET', '/v1/api-keys/')).body.results.length, before + 1);
  });

  it('lets an Authorization header win over the cookie', async () => {
    const s = await signIn(server, key);
    const res = await server.request('GET', '/v1/judges/', { headers: { cookie: s.cookie, authorization: 'Api-Key trb_bad' } });
    assert.equal(res.status, 401);
    assert.match(res.body.detail, /Malformed API key/);
  });

  it('refuses a tampered cookie and clears it', async () => {
    const s = await signIn(server, key);
    const [name, value] = s.cookie.split('=');
    const flipped = value.slice(0, 20) + (value[20] === 'A' ? 'B' : 'A') + value.slice(21);
    const res = await server.request('GET', '/v1/judges/', { headers: { cookie: `${name}=${flipped}` } });
    assert.equal(res.status, 401);
    assert.match(res.body.detail, /session has expired or is no longer valid/);
    assert.match(res.headers.get('set-cookie') ?? '', /tribunal_session=; Path=\/; Max-Age=0/);
  });

  it('ends every session of a key when the key is revoked', async () => {
    const made = await server.request('POST', '/v1/api-keys/', { key, body: { name: 'to revoke' } });
    const s = await signIn(server, made.body.api_key);
    assert.equal((await asBrowser(server, s, 'GET', '/v1/judges/')).status, 200);
    assert.equal((await server.request('DELETE', `/v1/api-keys/${made.body.id}/`, { key })).status, 200);
    const after = await asBrowser(server, s, 'GET', '/v1/judges/');
    assert.equal(after.status, 401);
    assert.match(after.body.detail, /revoked/);
    const me = await server.request('GET', '/app/session', { headers: { cookie: s.cookie } });
    assert.equal(me.body.signed_in, false);
    assert.match(me.body.reason, /revoked/);
  });

  it('signs out only with the CSRF token, and clears the cookie', async () => {
    const s = await signIn(server, key);
    const forged = await server.request('POST', '/app/session/sign-out', { headers: { cookie: s.cookie } });
    assert.equal(forged.status, 403);
    const out = await server.request('POST', '/app/session/sign-out', { headers: { cookie: s.cookie, 'x-csrf-token': s.csrf } });
    assert.equal(out.status, 200);
    assert.match(out.headers.get('set-cookie') ?? '', /tribunal_session=; Path=\/; Max-Age=0; HttpOnly; SameSite=Strict/);
  });

  it('uses a Secure __Host- cookie over https (behind a trusted proxy)', async () => {
    const s = await signIn(server, key, { 'x-forwarded-proto': 'https', origin: server.url.replace('http:', 'https:') });
    assert.match(s.setCookie, /^__Host-tribunal_session=[A-Za-z0-9_-]+; Path=\/; Max-Age=43200; HttpOnly; SameSite=Strict; Secure$/);
    const res = await server.request('GET', '/v1/judges/', { headers: { cookie: s.cookie, 'x-forwarded-proto': 'https' } });
    assert.equal(res.status, 200);
  });

  it('shares sessions between instances with the same secret, and only those', async () => {
    const twin = await startTestServer({ TRIBUNAL_SESSION_SECRET: SECRET }, { store: server.store });
    const stranger = await startTestServer({}, { store: server.store });
    try {
      const s = await signIn(server, key);
      assert.equal((await twin.request('GET', '/v1/judges/', { headers: { cookie: s.cookie } })).status, 200);
      const made = await twin.request('POST', '/v1/api-keys/', { headers: { cookie: s.cookie, 'x-csrf-token': s.csrf }, body: { name: 'via twin' } });
      assert.equal(made.status, 201);
      assert.equal((await stranger.request('GET', '/v1/judges/', { headers: { cookie: s.cookie } })).status, 401);
    } finally {
      await twin.close();
      await stranger.close();
    }
  });
});

describe('session sealing', () => {
  const config = loadConfig({ TRIBUNAL_SESSION_SECRET: SECRET, TRIBUNAL_SESSION_TTL: '10m' });

  it('opens what it sealed until the session expires', () => {
    const sessions = new Sessions(config);
    const now = Date.now();
    const { value, session } = sessions.seal('trb_0123456789abcdef_secret', now);
    assert.equal(session.expiresAt, now + 600_000);
    const opened = sessions.open(value, now + 599_000);
    assert.equal(opened?.apiKey, 'trb_0123456789abcdef_secret');
    assert.equal(opened?.csrfToken, session.csrfToken);
    assert.equal(sessions.open(value, now + 600_001), null);
    assert.equal(sessions.open('garbage'), null);
    assert.equal(sessions.open(''), null);
  });

  it('makes a new random secret per process when none is configured, and refuses a short one', () => {
    const a = loadConfig({});
    const b = loadConfig({});
    assert.equal(a.session.secretFromEnv, false);
    assert.notEqual(a.session.secret, b.session.secret);
    const sealed = new Sessions(a).seal('k').value;
    assert.equal(new Sessions(b).open(sealed), null);
    assert.throws(() => loadConfig({ TRIBUNAL_SESSION_SECRET: 'short' }), /TRIBUNAL_SESSION_SECRET: must be at least 32 characters/);
    assert.throws(() => loadConfig({ TRIBUNAL_SESSION_TTL: 'soon' }), /TRIBUNAL_SESSION_TTL/);
  });
});
