// Same-origin calls to the /v1 API, authenticated by the session cookie. State-changing calls carry the
// session's CSRF token. Failures become ApiError with the problem's detail and field errors.

/** @type {string | null} */
let csrfToken = null;
/** @type {(message: string) => void} */
let onSignedOut = () => {};

export function setCsrfToken(token) {
  csrfToken = token;
}

/** Called with the problem detail when the server says the session no longer authenticates. */
export function onSessionLost(handler) {
  onSignedOut = handler;
}

export class ApiError extends Error {
  constructor(status, problem) {
    super(problem?.detail || problem?.title || `Request failed with status ${status}`);
    this.status = status;
    this.code = problem?.code ?? null;
    this.errors = Array.isArray(problem?.errors) ? problem.errors : [];
    this.problem = problem ?? null;
  }
}

/**
 * api('GET', '/v1/judges/', {query: {search}}) -> parsed JSON.
 * opts.session === false: a call that does not rely on the session (sign-in, demo key); a 401 from
 * it is shown where it happened instead of signing the person out.
 */
export async function api(method, path, opts = {}) {
  const url = new URL(path, location.origin);
  for (const [k, v] of Object.entries(opts.query ?? {})) {
    if (v !== undefined && v !== null && v !== '') url.searchParams.set(k, String(v));
  }
  const headers = { accept: 'application/json' };
  let body;
  if (opts.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(opts.body);
  }
  // A file goes up as it is (the browser streams it from disk): dataset imports.
  if (opts.rawBody !== undefined) {
    headers['content-type'] = opts.contentType;
    body = opts.rawBody;
  }
  // A multipart form (attachments): the browser writes the content type with its boundary.
  if (opts.form !== undefined) body = opts.form;
  if (method !== 'GET' && method !== 'HEAD' && csrfToken) headers['x-csrf-token'] = csrfToken;
  let res;
  try {
    res = await fetch(url, { method, headers, body, credentials: 'same-origin', cache: 'no-store' });
  } catch (err) {
    throw new ApiError(0, { detail: `Could not reach the Tribunal server (${/** @type {Error} */ (err).message}). Check your connection and try again.` });
  }
  const text = await res.text();
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = { detail: `The server answered ${res.status} with a body that is not JSON.` };
    }
  }
  if (!res.ok) {
    const error = new ApiError(res.status, data);
    if (res.status === 401 && opts.session !== false) onSignedOut(error.message);
    throw error;
  }
  return data;
}

/** Fetches every page of a list (up to `max` items). */
export async function listAll(path, query = {}, max = 1000) {
  const results = [];
  let cursor;
  do {
    const page = await api('GET', path, { query: { ...query, limit: 200, cursor } });
    results.push(...page.results);
    cursor = page.next_cursor;
  } while (cursor && results.length < max);
  return results;
}
