// The one version string (package.json's), shown by `tribunal --version`, the MCP server info and
// the OpenAPI document. Read at start-up because the project runs from source (no build step).
import { readFileSync } from 'node:fs';

export const VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
