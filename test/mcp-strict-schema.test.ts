// issue 26 item 14: which tools a strict-schema client (OpenAI strict mode, e.g. the Agents SDK's
// convertSchemasToStrict) must take non-strict, and why: every free-form object in every tool's input
// schema, read from tools/list, must be the ones docs/MCP.md names (and no tool besides the five).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, test } from 'node:test';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { connectMcp, type McpTestClient } from './helpers/mcp-client.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

let server: TestServer;
let mcp: McpTestClient;
let tools: Tool[];

before(async () => {
  server = await startTestServer();
  mcp = await connectMcp(server.url, (await server.demoUser()).api_key, { listTools: false });
  tools = (await mcp.client.listTools()).tools;
});
after(async () => {
  await mcp?.close();
  await server?.close();
});

/** Paths (property names only, `[]` for array items) of objects strict mode refuses: no property list, or additionalProperties not false. */
function freeForm(schema: unknown, path = ''): string[] {
  if (Array.isArray(schema)) return schema.flatMap((s) => freeForm(s, path));
  if (!schema || typeof schema !== 'object') return [];
  const s = schema as Record<string, unknown>;
  const out: string[] = [];
  const isObject = s.type === 'object' || 'properties' in s;
  if (isObject && (!('properties' in s) || (s.additionalProperties !== undefined && s.additionalProperties !== false))) out.push(path);
  for (const [k, v] of Object.entries(s)) {
    if (k === 'properties') for (const [name, p] of Object.entries(v as Record<string, unknown>)) out.push(...freeForm(p, path ? `${path}.${name}` : name));
    else if (k === 'items') out.push(...freeForm(v, `${path}[]`));
    else if (k === 'anyOf' || k === 'oneOf' || k === 'allOf') out.push(...freeForm(v, path));
  }
  return out;
}

test('the free-form inputs of every MCP tool are exactly those docs/MCP.md explains', () => {
  const found = Object.fromEntries(
    tools
      .map((t) => [t.name, [...new Set(freeForm(t.inputSchema))].sort()] as const)
      .filter(([, paths]) => paths.length)
      .sort(([a], [b]) => a.localeCompare(b)),
  );
  const args = 'turns[].tool_calls[].arguments';
  const authoring = [`demonstrations[].${args}`, 'checks[].arguments_schema', 'checks[].schema'].sort();
  assert.deepEqual(found, {
    create_evaluator: authoring,
    generate_judge: ['extra_contexts'],
    run_evaluator: [args],
    run_judge: [args],
    update_evaluator: authoring,
  });
  assert.equal(tools.length - Object.keys(found).length, 9, 'the other nine tools are strict-compatible');

  const doc = fs.readFileSync(new URL('../docs/MCP.md', import.meta.url), 'utf8');
  const section = doc.slice(doc.indexOf('### Strict-schema clients'), doc.indexOf('## HTTP behaviour'));
  for (const name of Object.keys(found)) assert.ok(section.includes(`\`${name}\``), `docs/MCP.md explains ${name}`);
  for (const field of ['tool_calls[].arguments', 'arguments_schema', '`schema`', 'extra_contexts']) assert.ok(section.includes(field), `docs/MCP.md names ${field}`);
});
