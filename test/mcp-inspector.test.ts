// A client the project has not tuned to: the MCP Inspector CLI, spawned exactly as the docs show it
// (`npx @modelcontextprotocol/inspector --cli URL --transport http --header "Authorization: Bearer KEY"`).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startTestServer, type TestServer } from './helpers/server.ts';

const inspector = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'node_modules', '.bin', 'mcp-inspector');

function runInspector(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(inspector, ['--cli', ...args], { timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

let server: TestServer;
let key: string;

before(async () => {
  server = await startTestServer();
  key = (await server.demoUser()).api_key;
});
after(async () => {
  await server?.close();
});

test('the Inspector CLI lists the tools and calls one, with the key in --header', async () => {
  const url = `${server.url}/mcp`;
  const header = `Authorization: Bearer ${key}`;
  const [list, call] = await Promise.all([
    runInspector([url, '--transport', 'http', '--method', 'tools/list', '--header', header]),
    runInspector([url, '--transport', 'http', '--method', 'tools/call', '--tool-name', 'get_evaluator', '--tool-arg', 'evaluator_name=Faithfulness', '--header', header]),
  ]);

  assert.equal(list.code, 0, list.stderr);
  const tools = JSON.parse(list.stdout).tools as Array<{ name: string; inputSchema: unknown; outputSchema: unknown }>;
  assert.equal(tools.length, 14);
  assert.ok(tools.some((t) => t.name === 'run_judge' && t.outputSchema));

  assert.equal(call.code, 0, call.stderr);
  const result = JSON.parse(call.stdout);
  assert.equal(result.isError, undefined);
  assert.equal(result.structuredContent.name, 'Faithfulness');
  assert.equal(result.structuredContent.requires_contexts, true);
  assert.deepEqual(JSON.parse(result.content[0].text), result.structuredContent);
});

// issue 26 item 1: the README's command works on Node 20 from any directory because it is pinned to
// the version npm ci installs; `npm run inspector` runs that same copy.
test('the README pins the Inspector to the installed version, and `npm run inspector` works from another directory', async () => {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const { readFile, mkdtemp } = await import('node:fs/promises');
  const os = await import('node:os');
  const installed = JSON.parse(await readFile(path.join(root, 'node_modules', '@modelcontextprotocol', 'inspector', 'package.json'), 'utf8')).version as string;
  const pkg = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8'));
  assert.equal(pkg.devDependencies['@modelcontextprotocol/inspector'], installed, 'the dev dependency is pinned exactly');
  assert.equal(pkg.scripts.inspector, 'mcp-inspector');
  for (const doc of ['README.md', 'docs/MCP.md']) {
    const text = await readFile(path.join(root, doc), 'utf8');
    const commands = [...text.matchAll(/npx[^\n`]*@modelcontextprotocol\/inspector[^\s`]*/g)].map((m) => m[0]);
    assert.ok(commands.length > 0, doc);
    for (const command of commands) assert.ok(command.endsWith(`@modelcontextprotocol/inspector@${installed}`), `${doc}: ${command} is pinned to ${installed}`);
  }
  // From another directory: npm --prefix points at the checkout, the working directory is elsewhere.
  const elsewhere = await mkdtemp(path.join(os.tmpdir(), 'inspector-cwd-'));
  const result = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      'npm',
      [
        '--prefix',
        root,
        'run',
        '--silent',
        'inspector',
        '--',
        '--cli',
        `${server.url}/mcp`,
        '--transport',
        'http',
        '--method',
        'tools/list',
        '--header',
        `Authorization: Bearer ${key}`,
      ],
      { cwd: elsewhere, timeout: 60_000 },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
  assert.equal(result.code, 0, result.stderr);
  assert.equal((JSON.parse(result.stdout).tools as unknown[]).length, 14);
});
