// The layers of docs/ARCHITECTURE.md, checked: a module imports only from its own layer or the
// layers below it (base <- store <- core <- definitions <- doors <- entry points). Every file of
// src/ and tools/ must belong to a layer, so a new folder has to be placed on purpose.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const LAYERS: Array<[name: string, members: RegExp[]]> = [
  ['base', [/^src\/(schemas|errors|config|ids|version|unknown-fields|prices|limits|secret-box)\.ts$/, /^src\/schemas\//]],
  ['store', [/^src\/store\//]],
  ['core', [/^src\/(domain|engine|generation|conversation|batch|calibration)\//, /^src\/datasets\/(?!stream-routes)/, /^src\/(context|auth)\.ts$/]],
  ['definitions', [/^src\/tool\.ts$/, /^src\/operations\//, /^tools\//]],
  ['doors', [/^src\/(http|web|observability)\//, /^src\/datasets\/stream-routes\.ts$/, /^src\/(rest|mcp|openapi|server|rate-limit)\.ts$/, /^src\/openapi-ops\.ts$/]], // openapi-ops: issue 26
  ['entry points', [/^src\/(main|app|cli|admin-socket|key-commands)\.ts$/, /^src\/cli\//, /^src\/secret-file\.ts$/]], // secret-file: issue 26 (start-up)
];

const layerOf = (file: string) => LAYERS.findIndex(([, members]) => members.some((re) => re.test(file)));

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(rel);
    return rel.endsWith('.ts') ? [rel] : [];
  });
}

/** Relative imports of a file (static, dynamic and type-only alike), as paths from the root. */
function importsOf(file: string): string[] {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
  return [...text.matchAll(/(?:\bfrom|\bimport)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].map((m) => path.posix.normalize(path.posix.join(path.posix.dirname(file), m[1])));
}

describe('layers (docs/ARCHITECTURE.md)', () => {
  const files = [...sourceFiles('src'), ...sourceFiles('tools')];

  test('every module of src/ and tools/ belongs to a layer', () => {
    assert.ok(files.length > 50, `found only ${files.length} files`);
    assert.deepEqual(files.filter((f) => layerOf(f) < 0), []);
  });

  test('no module imports from a layer above its own', () => {
    const upward: string[] = [];
    for (const file of files) {
      const own = layerOf(file);
      for (const target of importsOf(file)) {
        const theirs = layerOf(target);
        if (theirs > own) upward.push(`${file} (${LAYERS[own][0]}) imports ${target} (${LAYERS[theirs][0]})`);
      }
    }
    assert.deepEqual(upward, []);
  });

  test('the checker sees an upward import (it can fail)', () => {
    // store -> doors would be upward; the regexes must place both ends.
    assert.ok(layerOf('src/store/json-store.ts') < layerOf('src/http/problem.ts'));
    assert.ok(importsOf('tools/run_judge.ts').length > 0, 'imports are found');
  });
});
