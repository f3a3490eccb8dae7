// Web sessions without server-side state: the cookie holds the API key, encrypted and authenticated
// with AES-256-GCM under a key derived from TRIBUNAL_SESSION_SECRET, plus an expiry. Any instance that
// shares the secret can open it; the key is re-validated on every request, so revoking or expiring the
// key ends every session made from it. The browser never sees the key after sign-in (HttpOnly).
//
// CSRF: a state-changing request authenticated by the cookie must carry X-CSRF-Token, an HMAC of the
// session's random nonce (so it is bound to this one session and useless to anyone who cannot read the
// session answer), and must not come from another site (Sec-Fetch-Site / Origin).
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Authenticator } from '../auth.ts';
import type { Config } from '../config.ts';
import { notAuthenticated, permissionDenied } from '../errors.ts';

export const CSRF_HEADER = 'x-csrf-token';
const COOKIE = 'tribunal_session';
/** Over https the cookie takes the __Host- prefix: Secure, Path=/, no Domain, so no subdomain can set it. */
const SECURE_COOKIE = '__Host-tribunal_session';
const AAD = Buffer.from('tribunal-session-v1');
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export interface OpenSession {
  apiKey: string;
  expiresAt: number;
  csrfToken: string;
}

export class Sessions {
  private readonly encKey: Buffer;
  private readonly csrfKey: Buffer;
  readonly ttlMs: number;
  private readonly publicOrigin: string | undefined;

  constructor(config: Pick<Config, 'session' | 'publicUrl'>) {
    const secret = Buffer.from(config.session.secret, 'utf8');
    this.encKey = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'tribunal session encryption', 32));
    this.csrfKey = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'tribunal session csrf', 32));
    this.ttlMs = config.session.ttlMs;
    this.publicOrigin = config.publicUrl ? new URL(config.publicUrl).origin : undefined;
  }

  /** A new sealed session for a key: base64url(iv | ciphertext | tag). */
  seal(apiKey: string, now = Date.now()): { value: string; session: OpenSession } {
    const nonce = randomBytes(16).toString('base64url');
    const expiresAt = now + this.ttlMs;
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.encKey, iv);
    cipher.setAAD(AAD);
    const body = Buffer.concat([cipher.update(JSON.stringify({ k: apiKey, e: expiresAt, n: nonce }), 'utf8'), cipher.final()]);
    const value = Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
    return { value, session: { apiKey, expiresAt, csrfToken: this.csrfFor(nonce) } };
  }

  /** Opens a cookie value; null when it was tampered with, made under another secret, or expired. */
  open(value: string, now = Date.now()): OpenSession | null {
    try {
      const raw = Buffer.from(value, 'base64url');
      if (raw.length < 12 + 16 + 2) return null;
      const decipher = createDecipheriv('aes-256-gcm', this.encKey, raw.subarray(0, 12));
      decipher.setAAD(AAD);
      decipher.setAuthTag(raw.subarray(raw.length - 16));
      const text = Buffer.concat([decipher.update(raw.subarray(12, raw.length - 16)), decipher.final()]).toString('utf8');
      const payload = JSON.parse(text) as { k?: unknown; e?: unknown; n?: unknown };
      if (typeof payload.k !== 'string' || typeof payload.e !== 'number' || typeof payload.n !== 'string') return null;
      if (payload.e <= now) return null;
      return { apiKey: payload.k, expiresAt: payload.e, csrfToken: this.csrfFor(payload.n) };
    } catch {
      return null;
    }
  }

  private csrfFor(nonce: string): string {
    return createHmac('sha256', this.csrfKey).update(nonce).digest('base64url');
  }

  /** The raw session cookie of a request, if any. */
  cookieValue(req: Request): string | undefined {
    const cookies = parseCookies(req.headers.cookie);
    return cookies[SECURE_COOKIE] ?? cookies[COOKIE];
  }

  setCookie(req: Request, res: Response, value: string): void {
    const secure = req.secure;
    const name = secure ? SECURE_COOKIE : COOKIE;
    const maxAge = Math.floor(this.ttlMs / 1000);
    res.append('Set-Cookie', `${name}=${value}; Path=/; Max-Age=${maxAge}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`);
  }

  clearCookie(req: Request, res: Response): void {
    const cookies = parseCookies(req.headers.cookie);
    if (cookies[COOKIE] !== undefined || !req.secure) res.append('Set-Cookie', `${COOKIE}=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict`);
    if (cookies[SECURE_COOKIE] !== undefined || req.secure) res.append('Set-Cookie', `${SECURE_COOKIE}=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict; Secure`);
  }

  /** Refuses requests another site started. Browsers send Sec-Fetch-Site; older ones at least Origin. */
  checkSameOrigin(req: Request): void {
    const site = req.headers['sec-fetch-site'];
    if (typeof site === 'string' && site !== 'same-origin' && site !== 'none') {
      throw permissionDenied(`This request came from another site (Sec-Fetch-Site: ${site}); the web app accepts requests only from its own pages.`);
    }
    const origin = req.headers.origin;
    if (typeof origin === 'string' && !SAFE_METHODS.has(req.method)) {
      const own = `${req.protocol}://${req.host}`;
      if (origin !== own && origin !== this.publicOrigin) {
        throw permissionDenied(`This request came from ${origin}, not from this server (${this.publicOrigin ?? own}); it was refused to protect your session.`);
      }
    }
  }

  /** Same-origin check plus, for state-changing methods, the session's CSRF token in X-CSRF-Token. */
  checkForgery(req: Request, session: OpenSession): void {
    this.checkSameOrigin(req);
    if (SAFE_METHODS.has(req.method)) return;
    const sent = req.headers[CSRF_HEADER];
    const given = Buffer.from(typeof sent === 'string' ? sent : '', 'utf8');
    const expected = Buffer.from(session.csrfToken, 'utf8');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw permissionDenied(
        'Missing or wrong X-CSRF-Token header: a change made with the session cookie must send the token from GET /app/session. Reload the page and try again.',
      );
    }
  }
}

export function parseCookies(header: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!header) return out;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    if (name && !(name in out)) out[name] = part.slice(eq + 1).trim();
  }
  return out;
}

/**
 * For /v1: a request without an Authorization header but with a session cookie is authenticated by the
 * key inside the session (re-validated now), after the forgery checks. A request with an Authorization
 * header, or with no cookie, is left to the API-key authentication that follows.
 */
export function sessionAuth(sessions: Sessions, authenticator: Authenticator, send: (res: Response, err: unknown) => void): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    if (req.headers.authorization !== undefined) return next();
    const value = sessions.cookieValue(req);
    if (value === undefined) return next();
    const session = sessions.open(value);
    if (!session) {
      sessions.clearCookie(req, res);
      return send(res, notAuthenticated('Your web session has expired or is no longer valid; sign in again at /app/.'));
    }
    try {
      sessions.checkForgery(req, session);
    } catch (err) {
      return send(res, err);
    }
    authenticator.authenticate(`Api-Key ${session.apiKey}`).then(
      (caller) => {
        res.locals.caller = caller;
        next();
      },
      (err) => {
        sessions.clearCookie(req, res);
        send(res, err);
      },
    );
  };
}
