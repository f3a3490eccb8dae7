// The web app at /app/: static files (plain HTML, CSS and JavaScript modules, nothing from another
// host), sign-in and sign-out. Its data calls go to /v1 itself, authenticated by the session cookie
// (sessionAuth in session.ts), so the web app holds no logic of its own.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type Request, type Response } from 'express';
import type { Authenticator, Caller } from '../auth.ts';
import { notAuthenticated, TribunalError, validationError } from '../errors.ts';
import { jsonBody } from '../http/body.ts';
import { sendProblem } from '../http/problem.ts';
import type { Services } from '../tool.ts';
import { Sessions, sessionAuth } from './session.ts';

export const PUBLIC_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'public');

const CSP = ["default-src 'self'", "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'", "object-src 'none'"].join('; ');

function securityHeaders(_req: Request, res: Response, next: () => void) {
  res.setHeader('Content-Security-Policy', CSP);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Referrer-Policy', 'same-origin');
  res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
  res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
  next();
}

const sessionBody = (caller: Caller, csrfToken: string, expiresAt: number) => ({
  signed_in: true,
  csrf_token: csrfToken,
  session_expires_at: new Date(expiresAt).toISOString(),
  organization: { id: caller.org.id, name: caller.org.name, is_demo: caller.org.is_demo },
  key: { id: caller.key.id, name: caller.key.name, prefix: caller.key.prefix, expires_at: caller.key.expires_at },
});

/** The /v1 middleware that lets the web app's session cookie stand in for an Authorization header. */
export function webSessionAuth(services: Services, authenticator: Authenticator): express.RequestHandler {
  return sessionAuth(new Sessions(services.config), authenticator, sendProblem);
}

export function webRouter(services: Services, authenticator: Authenticator): express.Router {
  const sessions = new Sessions(services.config);
  const router = express.Router({ strict: false });
  router.use(securityHeaders);

  // Who is signed in. Answers 200 either way, so a signed-out visit logs no failed request.
  router.get('/session', async (req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    const value = sessions.cookieValue(req);
    const session = value === undefined ? null : sessions.open(value);
    if (!session) {
      if (value !== undefined) sessions.clearCookie(req, res);
      res.json({ signed_in: false, reason: value === undefined ? null : 'Your session has expired; sign in again.' });
      return;
    }
    try {
      sessions.checkSameOrigin(req);
      const caller = await authenticator.authenticate(`Api-Key ${session.apiKey}`);
      res.json(sessionBody(caller, session.csrfToken, session.expiresAt));
    } catch (err) {
      if (err instanceof TribunalError && err.code === 'not_authenticated') {
        sessions.clearCookie(req, res);
        res.json({ signed_in: false, reason: err.message });
        return;
      }
      sendProblem(res, err);
    }
  });

  // Sign in: exchange an API key for a session cookie.
  router.post('/session', ...jsonBody(services.config.limits.bodyBytes), async (req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    try {
      sessions.checkSameOrigin(req);
      const body = req.body as { api_key?: unknown } | undefined;
      const key = typeof body?.api_key === 'string' ? body.api_key.trim() : '';
      if (!key) throw validationError('Paste an API key to sign in (or get a demo key).', [{ field: 'api_key', message: 'required' }]);
      if (/\s/.test(key)) throw notAuthenticated('An API key has no spaces; paste only the key (it starts with trb_).');
      const caller = await authenticator.authenticate(`Api-Key ${key}`);
      const { value, session } = sessions.seal(key);
      sessions.setCookie(req, res, value);
      res.status(201).json(sessionBody(caller, session.csrfToken, session.expiresAt));
    } catch (err) {
      sendProblem(res, err);
    }
  });

  // Sign out: needs the CSRF token, so no other site can sign a person out.
  router.post('/session/sign-out', (req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    const value = sessions.cookieValue(req);
    const session = value === undefined ? null : sessions.open(value);
    try {
      if (session) sessions.checkForgery(req, session);
      else sessions.checkSameOrigin(req);
    } catch (err) {
      return sendProblem(res, err);
    }
    sessions.clearCookie(req, res);
    res.json({ signed_in: false });
  });

  router.use(
    '/static',
    express.static(PUBLIC_DIR, {
      index: false,
      fallthrough: true,
      dotfiles: 'ignore',
      setHeaders: (res) => res.setHeader('Cache-Control', 'no-cache'),
    }),
  );

  // Every other page address is the one-page app; it routes on the client.
  router.get('/{*page}', (req, res, next) => {
    if (req.path.startsWith('/static/') || /\.[a-z0-9]+$/i.test(req.path)) return next();
    res.setHeader('Cache-Control', 'no-cache');
    res.sendFile(path.join(PUBLIC_DIR, 'index.html'), (err) => {
      if (err) sendProblem(res, err);
    });
  });

  router.use((req, res) => {
    sendProblem(res, new TribunalError('not_found', 404, `No web app file ${req.originalUrl}.`));
  });
  return router;
}
