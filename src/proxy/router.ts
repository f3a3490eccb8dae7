// The judge proxy's door (SPEC section 13): OpenAI-compatible paths under /v1/judges/, mounted
// before the /v1 REST middleware so that every answer here, errors included, speaks OpenAI's
// protocol. Authentication (Api-Key or Bearer: an OpenAI client sends its api_key as a Bearer
// token), the per-key rate limit shared with REST and MCP, and the body limit apply as on /v1.
import express, { type NextFunction, type Request, type Response } from 'express';
import type { Authenticator, Caller } from '../auth.ts';
import { bodyTooLarge } from '../http/body.ts';
import { readPlainJson, takesPlainJson } from '../http/plain-json.ts';
import type { KeyRateLimit } from '../http/rate-limits.ts';
import { validationError } from '../errors.ts';
import type { Services } from '../tool.ts';
import { proxyChatCompletions } from './chat.ts';
import { proxyRefineChat } from './refine-chat.ts';
import { proxyResponses } from './responses.ts';
import { sendOpenAIError } from './errors.ts';
import { methodNotAllowed, proxyPathErrors, unknownProxyPath } from './strays.ts';
import type { ProxyContext } from './judging.ts';

export const CHAT_PATHS = ['/v1/judges/openai/chat/completions', '/v1/judges/:judge_id/openai/chat/completions'];
export const RESPONSES_PATHS = ['/v1/judges/openai/responses', '/v1/judges/:judge_id/openai/responses'];
export const REFINE_PATH = '/v1/judges/:judge_id/refine/openai/chat/completions';

type Handler = (ctx: ProxyContext, req: Request, res: Response) => Promise<void>;

export function proxyRouter(services: Services, authenticator: Authenticator, limit: KeyRateLimit): express.Router {
  const router = express.Router({ strict: false });
  const { bodyBytes } = services.config.limits;
  const auth = (req: Request, res: Response, next: NextFunction) => {
    authenticator.authenticate(req.headers.authorization).then(
      async (caller) => {
        res.locals.caller = caller;
        if (await limit.charge(res, 1, sendOpenAIError)) next();
      },
      (err) => sendOpenAIError(res, err),
    );
  };
  const tooLarge = (req: Request, res: Response, next: NextFunction) => {
    if (Number(req.headers['content-length'] ?? 0) > bodyBytes) return sendOpenAIError(res, bodyTooLarge(bodyBytes));
    next();
  };
  // OpenAI clients send JSON; the body is parsed as JSON whatever its content type says. The plain
  // case (a known JSON type, a declared length, no encoding) is read directly, as /v1 reads it
  // (http/plain-json.ts: the same values, and faults of the same `type` for bodyErrors below),
  // without body-parser's layers for the general case (type-is, an iconv decoder, raw-body).
  const general = express.json({ limit: bodyBytes, strict: false, type: () => true });
  const parse = (req: Request, res: Response, next: NextFunction) => (takesPlainJson(req) ? readPlainJson(req, bodyBytes, next) : general(req, res, next));
  const bodyErrors = (err: unknown, _req: Request, res: Response, next: NextFunction) => {
    const type = (err as { type?: string }).type;
    if (type === 'entity.too.large') return sendOpenAIError(res, bodyTooLarge(bodyBytes));
    if (type === 'request.aborted') return;
    if (type) return sendOpenAIError(res, validationError(`The request body could not be read as JSON: ${(err as Error).message}`, [{ field: '(body)', message: 'invalid JSON' }]));
    next(err);
  };
  const handle = (h: Handler) => (req: Request, res: Response) => {
    const ctx: ProxyContext = Object.assign({ caller: res.locals.caller as Caller }, services); // not a spread then a field: see rest.ts
    h(ctx, req, res).catch((err) => sendOpenAIError(res, err));
  };
  router.post(CHAT_PATHS, auth, tooLarge, parse, bodyErrors, handle(proxyChatCompletions));
  router.post(RESPONSES_PATHS, auth, tooLarge, parse, bodyErrors, handle(proxyResponses));
  router.post(REFINE_PATH, auth, tooLarge, parse, bodyErrors, handle(proxyRefineChat));
  // What no route above took, under the proxy's prefixes, still answers in OpenAI's shape (an OpenAI
  // client pointed at the proxy raises its usual exception, not a parse error): see strays.ts.
  router.all([...CHAT_PATHS, ...RESPONSES_PATHS, REFINE_PATH], methodNotAllowed);
  router.use(unknownProxyPath);
  router.use(proxyPathErrors);
  return router;
}
