// The SDK's own MCP client over streamable HTTP, for tests of /mcp, plus raw HTTP helpers for the
// cases a well-behaved client never produces (wrong Host, no key, bad JSON).
import http from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

export interface McpTestClient {
  client: Client;
  /** tools/call; returns the result with `text` (first text block) and `json` (structuredContent). */
  call(name: string, args?: Record<string, unknown>): Promise<CallToolResult & { text: string; json: any }>;
  close(): Promise<void>;
}

/** Connects the SDK client to `${baseUrl}/mcp` with `Authorization: <scheme> <key>` and lists the tools (so it validates outputs). */
export async function connectMcp(baseUrl: string, key: string, opts: { scheme?: 'Bearer' | 'Api-Key'; listTools?: boolean } = {}): Promise<McpTestClient> {
  const client = new Client({ name: 'tribunal-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), {
    requestInit: { headers: { Authorization: `${opts.scheme ?? 'Bearer'} ${key}` } },
  });
  await client.connect(transport);
  // Listing the tools makes the SDK client validate every structuredContent against its output schema.
  if (opts.listTools !== false) await client.listTools();
  return {
    client,
    async call(name, args = {}) {
      const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
      const first = result.content.find((c) => c.type === 'text');
      return { ...result, text: first && first.type === 'text' ? first.text : '', json: result.structuredContent };
    },
    close: () => client.close(),
  };
}

/** A raw HTTP request with full control of the headers (fetch will not send a custom Host). */
export function rawRequest(
  url: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string; json: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: opts.method ?? 'POST', headers: opts.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown = null;
        try {
          json = text ? JSON.parse(text) : null;
        } catch {
          /* not JSON */
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** A JSON-RPC initialize request body, as a client's first POST. */
export const initializeBody = (id = 1) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw-test', version: '1.0.0' } },
  });

export const MCP_POST_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
