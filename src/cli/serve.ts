// tribunal serve: start the server in this process (same as npm start), configured by the environment.
import { withCommandName } from '../invocation.ts';

const SERVE_USAGE = `Usage: tribunal serve

Starts the Tribunal server (REST under /v1/, MCP at /mcp), configured by the environment: PORT, HOST,
TRIBUNAL_DATA_DIR, TRIBUNAL_STORE, DATABASE_URL, ANTHROPIC_API_KEY, TRIBUNAL_MODEL and the rest
(see the README). Stop it with Ctrl-C.`;

export async function serveCommand(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(withCommandName(SERVE_USAGE));
    return 0;
  }
  const { loadConfig } = await import('../config.ts');
  const { serve, exitOnSignals } = await import('../main.ts');
  const { modelWarnings } = await import('../engine/providers/model-check.ts');
  const config = loadConfig();
  for (const warning of modelWarnings(config.model)) console.warn(warning);
  const { close, url } = await serve(config);
  // The same graceful shutdown as npm start: SIGTERM drains requests in flight within the grace period.
  exitOnSignals(close);
  console.log(`Tribunal listening on ${url} (MCP: ${url}/mcp)`);
  return await new Promise<number>(() => {});
}
