// Who is calling, from the headers alone: no body is read before this answers (a request without a
// valid key is refused with its body unread; sendProblem then closes the connection).
import type express from 'express';
import type { Authenticator } from '../auth.ts';
import { sendProblem } from './problem.ts';

export function authenticate(authenticator: Authenticator): express.RequestHandler {
  return (req, res, next) => {
    if (res.locals.caller) return next(); // already authenticated by the web session cookie
    authenticator.authenticate(req.headers.authorization).then(
      (caller) => {
        res.locals.caller = caller;
        next();
      },
      (err) => sendProblem(res, err),
    );
  };
}
