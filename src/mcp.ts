// /mcp: placeholder until the MCP endpoint lands (its own issue). Disabled -> 404 on every method.
import express from 'express';
import type { Authenticator } from './auth.ts';
import { TribunalError } from './errors.ts';
import { sendProblem } from './server.ts';
import type { Services } from './tool.ts';

export function mcpRouter(services: Services, _authenticator: Authenticator, _opts: { rateLimit: express.RequestHandler }): express.Router {
  const router = express.Router();
  router.all('/', (_req, res) => {
    if (!services.config.mcp.enabled) return sendProblem(res, new TribunalError('not_found', 404, 'The MCP endpoint is disabled on this server (MCP_ENABLED=false).'));
    sendProblem(res, new TribunalError('not_available', 501, 'The MCP endpoint is not available yet.'));
  });
  return router;
}
