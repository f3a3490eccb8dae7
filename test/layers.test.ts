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
  [
    'base',
    [
      /^src\/(schemas|errors|config|ids|version|unknown-fields|prices|limits|secret-box|log)\.ts$/,
      /^src\/schemas\//,
      /^src\/traces\/(types|rules\/types|extract\/(rules|messages))\.ts$/,
    ],
  ],
  ['store', [/^src\/store\//]],
  [
    'core',
    [
      /^src\/refine\//,
      /^src\/checks\//,
      /^src\/(domain|engine|generation|conversation|batch|calibration)\//,
      /^src\/datasets\/(?!stream-routes)/,
      /^src\/(context|auth)\.ts$/,
      /^src\/traces\/(normalize|proto|hooks|store|extract\/(formats|index)|rules\/(match|intake|assemble|store|domain|writeback))\.ts$/,
    ],
  ],
  ['definitions', [/^src\/tool\.ts$/, /^src\/operations\//, /^tools\//, /^src\/traces\/(operations|routes|rules\/(operations|run|worker))\.ts$/]],
  [
    'doors',
    [
      /^src\/proxy\//,
      /^src\/(http|web|observability)\//,
      /^src\/datasets\/stream-routes\.ts$/,
      /^src\/(rest|mcp|openapi|server|rate-limit)\.ts$/,
      /^src\/traces\/(receiver|metrics)\.ts$/,
    ],
  ],
  ['entry points', [/^src\/(main|app|cli|admin-socket|key-commands)\.ts$/, /^src\/cli\//]],
];
// room surface: duplicate, claim, judges as files, synthetic data in core; its HTTP door (routes.ts) with the doors
LAYERS[2][1].push(/^src\/surface\/(?!routes\.ts$)/);
LAYERS[4][1].push(/^src\/surface\/routes\.ts$/);
// room review: queues, leases, agreement in core; its operations (ops.ts) with the definitions
LAYERS[2][1].push(/^src\/review\/(?!ops\.ts$)/);
LAYERS[3][1].push(/^src\/review\/ops\.ts$/);
// room budgets (h-cost): caps and spend, in core
LAYERS[2][1].push(/^src\/budgets\//);
// h-attach: attachments (core); the multipart upload door belongs to the doors.
LAYERS[2][1].push(/^src\/files\/(?!routes\.ts$)/);
LAYERS[4][1].push(/^src\/files\/routes\.ts$/);
// quotas per org (issue 24) in core; the server secret's file (read by main.ts) in core; the
// operational paths of the OpenAPI document with the doors
LAYERS[2][1].push(/^src\/quotas\//, /^src\/secret-file\.ts$/);
LAYERS[4][1].push(/^src\/openapi-ops\.ts$/);
// h-otellogs: OTLP log records -> span events in core; the logs receiver with the doors (beside receiver.ts)
LAYERS[2][1].push(/^src\/traces\/normalize-logs\.ts$/);
LAYERS[4][1].push(/^src\/traces\/logs-receiver\.ts$/);

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
    assert.deepEqual(
      files.filter((f) => layerOf(f) < 0),
      [],
    );
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
