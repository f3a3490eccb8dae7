// bin/cli-bundle.mjs (issue 33): the CLI runs from an esbuild bundle of src/cli.ts that must stay
// exactly as current as the sources: rebuilt after any edit, reused while nothing changed, and
// `import.meta.url` in a bundled file still the source file's own URL.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
// @ts-expect-error: a plain .mjs module without types
import { bundledCli } from '../bin/cli-bundle.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

function tree(): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'tribunal-cli-bundle-'));
  fs.mkdirSync(path.join(root, 'src'));
  fs.writeFileSync(path.join(root, 'package.json'), '{"type":"module"}');
  fs.writeFileSync(path.join(root, 'tsconfig.json'), '{}');
  fs.writeFileSync(path.join(root, 'src', 'cli.ts'), "import { where } from './where.ts';\nexport const main = async (): Promise<string> => 'one ' + where;\n");
  fs.writeFileSync(path.join(root, 'src', 'where.ts'), 'export const where: string = import.meta.url;\n');
  return root;
}

test('the bundle is reused while the sources are unchanged, rebuilt after an edit, and keeps each file its own URL', async (t) => {
  const root = tree();
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  const first: string = await bundledCli(root);
  assert.ok(first.startsWith(path.join(root, '.cache', 'cli')));
  const load = async (entry: string) => (await import(`${pathToFileURL(entry).href}?${Math.random()}`)).main();
  assert.equal(await load(first), `one ${pathToFileURL(path.join(root, 'src', 'where.ts')).href}`);
  assert.equal(await bundledCli(root), first, 'nothing changed: the same bundle');

  // An edit to an imported file (same size, so the mtime or inode tells) means a new bundle.
  const cli = path.join(root, 'src', 'cli.ts');
  fs.writeFileSync(cli, fs.readFileSync(cli, 'utf8').replace('one', 'two'));
  fs.utimesSync(cli, new Date(), new Date(Date.now() + 5000));
  const second: string = await bundledCli(root);
  assert.notEqual(second, first);
  assert.match(await load(second), /^two /);

  // A deleted input: rebuilt (here the build fails, as the sources would).
  fs.rmSync(path.join(root, 'src', 'where.ts'));
  await assert.rejects(bundledCli(root));
});

test('bin/tribunal.js answers the same from the bundle and through tsx', () => {
  const run = (env: Record<string, string>) =>
    spawnSync(process.execPath, ['bin/tribunal.js', 'eval', '--judge', 'x'], { cwd: ROOT, env: { ...process.env, ...env }, encoding: 'utf8' });
  const bundled = run({});
  const direct = run({ TRIBUNAL_CLI_BUNDLE: 'false' });
  assert.equal(bundled.status, 2);
  assert.equal(direct.status, bundled.status);
  assert.equal(bundled.stderr, direct.stderr);
  assert.match(bundled.stderr, /--input <data.jsonl\|data.csv> is required/);
  assert.ok(fs.existsSync(path.join(ROOT, '.cache', 'cli', 'manifest.json')));
});

test("the bundle carries zod's English messages only (its other locales are half of zod's code)", async () => {
  const entry: string = await bundledCli(ROOT);
  const dir = path.dirname(entry);
  const code = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.mjs'))
    .map((f) => fs.readFileSync(path.join(dir, f), 'utf8'))
    .join('\n');
  assert.match(code, /zod\/v4\/locales\/en\.js/);
  assert.doesNotMatch(code, /zod\/v4\/locales\/(de|fr|ja)\.js/);
});
