// `npm start` / `tribunal serve`: open the store, build the app, listen, shut down cleanly.
import http from 'node:http';
import { startAdminSocket } from './admin-socket.ts';
import { buildServices, stopServices } from './app.ts';
import { loadConfig, type Config } from './config.ts';
import { scheduleDemoPurge } from './demo-purge.ts';
import { modelWarnings } from './engine/providers/model-check.ts';
import { expressMessages } from './http/front-door.ts';
import { InFlightRequests } from './http/in-flight.ts';
import { createObservability } from './observability/index.ts';
import { rateLimitBackend } from './rate-limit.ts';
import { createServer } from './server.ts';
import { ensureServerSecret } from './secret-file.ts';
import { openStore } from './store/index.ts';
import { commandName } from './invocation.ts';
import { log, setProcessLogger } from './log.ts';

export async function serve(config: Config): Promise<{ close: () => Promise<void>; url: string }> {
  const adminSocketPath = config.store === 'json' ? startAdminSocket.pathFor(config.dataDir) : undefined;
  const store = await openStore(config, { role: 'server', adminSocket: adminSocketPath });
  // issue 26: the secret that seals model keys, from the data directory on the JSON store.
  await ensureServerSecret(config, store).catch(async (err) => {
    await store.close();
    throw err;
  });
  const observability = await createObservability(config);
  // Lines from outside a request (batch work, purges, store reconnects) go through the same logger.
  setProcessLogger(observability.logger);
  const services = await buildServices(config, store, observability.modelObserver, observability.tracing.enabled ? observability.tracing : undefined);
  const admin = config.store === 'json' ? await startAdminSocket(services, adminSocketPath!) : undefined;
  const demoPurge = scheduleDemoPurge(store, config);
  // Rate-limit counters shared through Redis when REDIS_URL is set; per instance otherwise.
  const rateLimits = rateLimitBackend(config);
  const inFlight = new InFlightRequests();
  const app = createServer(services, { rateLimitStore: rateLimits.store, inFlight, observability });
  // A client must send its headers, then its whole request, within these; a slow upload is ended
  // with 408 (checked every second, so the limits hold to about a second).
  const server = http.createServer(
    { headersTimeout: config.http.headersTimeoutMs, requestTimeout: config.http.requestTimeoutMs, connectionsCheckingInterval: 1000, ...expressMessages(app) },
    app,
  );
  server.listen(config.port, config.host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const url = config.publicUrl ?? `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  let closing: Promise<void> | undefined;
  // Shutdown: stop accepting, let the requests in flight finish within the grace period, then cut
  // the rest short with one log line each (they did not complete and their callers got no answer;
  // a run cut short wrote no execution log), and close the store.
  const close = () =>
    (closing ??= (async () => {
      observability.readiness.beginShutdown(); // /readyz answers 503 so a load balancer drains us
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const graceMs = config.http.shutdownGraceMs;
      const graceEnds = Date.now() + graceMs; // h-harden: one grace period for requests and batch rows together
      if (!(await inFlight.settle(graceMs))) {
        for (const line of inFlight.describeCutShort()) {
          log.error(`shutdown: request failed, cut short after the ${graceMs / 1000} s grace period (TRIBUNAL_SHUTDOWN_GRACE): ${line}`);
        }
      }
      server.closeAllConnections();
      await stopped;
      // Background work gets the rest of the grace period; batch rows not started resume at the next start.
      await stopServices(services, Math.max(0, graceEnds - Date.now()));
      demoPurge.stop();
      await admin?.close();
      await rateLimits.close();
      await store.close();
      await observability.shutdown();
    })());
  return { close, url };
}

/** SIGTERM / SIGINT: the graceful shutdown of serve(), then exit (`tribunal serve` needs the same). */
export function exitOnSignals(close: () => Promise<void>): void {
  const stop = (signal: string) => {
    console.log(`\n${signal}: shutting down`);
    close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
}

/** host/database of a DATABASE_URL, never its password. */
function databaseLabel(url: string | undefined): string {
  try {
    const u = new URL(url ?? '');
    return `at ${u.host}${u.pathname}`;
  } catch {
    return '';
  }
}

async function main() {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    console.error((err as Error).message);
    process.exit(2);
  }
  for (const warning of modelWarnings(config.model)) console.warn(warning);
  try {
    const { close, url } = await serve(config);
    // Handlers first: a signal that arrives while we print must still shut down cleanly.
    exitOnSignals(close);
    console.log(`Tribunal listening on ${url}`);
    console.log(`  store:    ${config.store === 'json' ? `JSON files in ${config.dataDir}` : `PostgreSQL ${databaseLabel(config.databaseUrl)}`}`);
    console.log(`  rate limits: ${config.redisUrl ? 'shared by every instance through Redis' : 'per instance (set REDIS_URL to share them between instances)'}`);
    console.log(`  REST:     ${url}/v1/   (OpenAPI: ${url}/v1/openapi.json)`);
    console.log(`  MCP:      ${url}/mcp${config.mcp.enabled ? '' : '   (disabled: MCP_ENABLED=false)'}`);
    console.log(`  web app:  ${url}/app/${config.session.secretFromEnv ? '' : '   (sessions end on restart: set TRIBUNAL_SESSION_SECRET to keep them)'}`);
    console.log(`  judge model: ${config.model.apiKey ? config.model.name : 'not configured (set ANTHROPIC_API_KEY to run evaluations)'}`);
    console.log(`  get a key: curl -X POST ${url}/create-demo-user/   or   ${commandName()} keys create --org <name>`);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'EADDRINUSE') console.error(`Port ${config.port} is in use: stop the other server or set PORT.`);
    else console.error(['DataDirLockedError', 'StoreUnavailableError', 'Error'].includes(e.name) ? e.message : e);
    process.exit(1);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) void main();
