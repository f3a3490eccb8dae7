// One snapshot per MCP tool (test/__toolsnaps__/<tool>.snap): its name, title, description,
// annotations and input/output JSON Schemas exactly as an MCP client receives them from tools/list.
// A schema that changes by accident fails here. After an intended change, regenerate with
//
//   UPDATE_TOOLSNAPS=1 node --import tsx --test test/toolsnaps.test.ts
//
// and review the diff of test/__toolsnaps__/ like code. Also checked: every input field (at any
// depth) has a description, since that is all an agent knows about it.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { connectMcp, type McpTestClient } from './helpers/mcp-client.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

const SNAP_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '__toolsnaps__');
const UPDATE = process.env.UPDATE_TOOLSNAPS === '1';

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

const snapshotOf = (tool: Tool) =>
  `${JSON.stringify(
    { name: tool.name, title: tool.title, description: tool.description, annotations: tool.annotations, inputSchema: tool.inputSchema, outputSchema: tool.outputSchema },
    null,
    2,
  )}\n`;

test('each tool matches its snapshot', () => {
  if (UPDATE) fs.mkdirSync(SNAP_DIR, { recursive: true });
  const mismatched: string[] = [];
  for (const tool of tools) {
    const file = path.join(SNAP_DIR, `${tool.name}.snap`);
    const actual = snapshotOf(tool);
    if (UPDATE) {
      fs.writeFileSync(file, actual);
      continue;
    }
    assert.ok(fs.existsSync(file), `no snapshot for ${tool.name}: run UPDATE_TOOLSNAPS=1 node --import tsx --test test/toolsnaps.test.ts`);
    if (fs.readFileSync(file, 'utf8') !== actual) mismatched.push(tool.name);
  }
  if (mismatched.length) {
    // Show the first difference in full; the rest by name.
    const first = mismatched[0];
    assert.deepEqual(
      JSON.parse(snapshotOf(tools.find((t) => t.name === first)!)),
      JSON.parse(fs.readFileSync(path.join(SNAP_DIR, `${first}.snap`), 'utf8')),
      `tool schemas changed: ${mismatched.join(', ')}. If intended, run UPDATE_TOOLSNAPS=1 node --import tsx --test test/toolsnaps.test.ts and review the diff.`,
    );
  }
});

test('no stale snapshots: every .snap file belongs to a tool', () => {
  const snaps = fs.readdirSync(SNAP_DIR).filter((f) => f.endsWith('.snap'));
  if (UPDATE) {
    for (const f of snaps) if (!tools.some((t) => `${t.name}.snap` === f)) fs.rmSync(path.join(SNAP_DIR, f));
    return;
  }
  assert.deepEqual(snaps.sort(), tools.map((t) => `${t.name}.snap`).sort());
});

/** Paths of properties without a description, at any depth (nested objects, array items, unions). */
function undescribed(schema: any, at: string, out: string[] = []): string[] {
  if (!schema || typeof schema !== 'object') return out;
  for (const [key, sub] of Object.entries<any>(schema.properties ?? {})) {
    const where = at ? `${at}.${key}` : key;
    if (typeof sub?.description !== 'string' || sub.description.trim().length < 3) out.push(where);
    undescribed(sub, where, out);
  }
  if (schema.items) undescribed(schema.items, `${at}[]`, out);
  if (schema.additionalProperties && typeof schema.additionalProperties === 'object') undescribed(schema.additionalProperties, `${at}{}`, out);
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) for (const branch of schema[key] ?? []) undescribed(branch, at, out);
  return out;
}

test('every input field of every tool has a description', () => {
  const missing = tools.flatMap((t) => undescribed(t.inputSchema, '').map((p) => `${t.name}: ${p}`));
  assert.deepEqual(missing, []);
  // The check itself sees nested fields: create_evaluator's demonstrations are objects in an array.
  const demo = (tools.find((t) => t.name === 'create_evaluator')!.inputSchema.properties as any).demonstrations;
  assert.ok(demo.items.properties.score.description);
});

test('every output field of every tool has a description', () => {
  const missing = tools.flatMap((t) => undescribed(t.outputSchema, '').map((p) => `${t.name}: ${p}`));
  assert.deepEqual(missing, []);
});
