// Same-origin calls to the /v1 API, authenticated by the session cookie. State-changing calls carry the
// session's CSRF token. Failures become ApiError with the problem's detail and field errors.

/** @type {string | null} */
let csrfToken = null;
/** @type {(message: string) => void} */
let onSignedOut = () => {};

/** @param {string | null} token */
export function setCsrfToken(token) {
  csrfToken = token;
}

/**
 * Called with the problem detail when the server says the session no longer authenticates.
 * @param {(message: string) => void} handler
 */
export function onSessionLost(handler) {
  onSignedOut = handler;
}

/**
 * A problem document (RFC 9457) as the server writes it, with Tribunal's code and field errors.
 * @typedef {{ title?: string, detail?: string, code?: string | null, errors?: FieldError[], [member: string]: unknown }} Problem
 * @typedef {{ field: string, message: string }} FieldError
 */

export class ApiError extends Error {
  /**
   * @param {number} status the HTTP status; 0 when the server could not be reached
   * @param {Problem | null} problem
   */
  constructor(status, problem) {
    super(problem?.detail || problem?.title || `Request failed with status ${status}`);
    this.status = status;
    this.code = problem?.code ?? null;
    this.errors = Array.isArray(problem?.errors) ? problem.errors : [];
    this.problem = problem ?? null;
  }
}

/**
 * @typedef {object} ApiOptions
 * @property {Record<string, string | number | boolean | null | undefined>} [query] search parameters; empty ones are left out
 * @property {unknown} [body] sent as JSON
 * @property {Blob} [rawBody] sent as it is, with `contentType`
 * @property {string} [contentType]
 * @property {FormData} [form] sent as multipart
 * @property {boolean} [session] false: the call does not rely on the session
 */

/**
 * api('GET', '/v1/judges/', {query: {search}}) -> parsed JSON.
 * opts.session === false: a call that does not rely on the session (sign-in, demo key); a 401 from
 * it is shown where it happened instead of signing the person out.
 * The answer is the parsed JSON body, typed by the caller: the page that asks knows which shape of
 * lib/types.js the path answers with (a wrong guess is what the REST tests guard against).
 * @param {'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'} method
 * @param {string} path
 * @param {ApiOptions} [opts]
 * @returns {Promise<any>}
 */
export async function api(method, path, opts = {}) {
  const url = new URL(path, location.origin);
  for (const [k, v] of Object.entries(opts.query ?? {})) {
    if (v !== undefined && v !== null && v !== '') url.searchParams.set(k, String(v));
  }
  /** @type {Record<string, string>} */
  const headers = { accept: 'application/json' };
  /** @type {BodyInit | undefined} */
  let body;
  if (opts.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(opts.body);
  }
  // A file goes up as it is (the browser streams it from disk): dataset imports.
  if (opts.rawBody !== undefined) {
    headers['content-type'] = /** @type {string} */ (opts.contentType);
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

/**
 * Fetches every page of a list (up to `max` items).
 * @param {string} path
 * @param {ApiOptions['query']} [query]
 * @param {number} [max]
 * @returns {Promise<any[]>}
 */
export async function listAll(path, query = {}, max = 1000) {
  /** @type {any[]} */
  const results = [];
  let cursor;
  do {
    const page = await api('GET', path, { query: { ...query, limit: 200, cursor } });
    results.push(...page.results);
    cursor = page.next_cursor;
  } while (cursor && results.length < max);
  return results;
}
