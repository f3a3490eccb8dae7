// The layers of docs/ARCHITECTURE.md, checked: a module imports only from its own layer or the
// layers below it (base <- store <- core <- definitions <- doors <- entry points), and inside the
// core and the entry points only from its own room or a room below it in CORE_ORDER / ENTRY_ORDER.
// Every file of src/ and tools/ must belong to a layer, and every core or entry-point file to a
// room of its order, so a new folder has to be placed on purpose.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

type Rooms = Array<[name: string, members: RegExp[]]>;

// The core's rooms, lowest first: a room may import the rooms above it in this list, never one
// below (issue 25: no imports running back up). A new core room gets its row here, placed above
// everything it imports.
const CORE_ORDER: Rooms = [
  ['context', [/^src\/(context|auth|secret-file)\.ts$/, /^src\/quotas\//]],
  // the judge-model providers: the JudgeModel interface, its errors, retries and limits, the
  // transports, the Anthropic and OpenAI-compatible clients and their batch APIs, prices
  ['providers', [/^src\/engine\/providers\//]],
  ['conversation', [/^src\/conversation\//]],
  ['checks', [/^src\/checks\//]],
  ['domain', [/^src\/domain\//]],
  ['files', [/^src\/files\/(?!routes\.ts$)/]],
  ['datasets', [/^src\/datasets\//]],
  // a review queue's records and its sources (a run's log fed into queues), below the engine that feeds them
  ['review records', [/^src\/review\/(store|json-review|json-review-state|pg-review|types|ids|sources)\.ts$/]],
  // the pure scoring engine and its scoring kinds: no store, no domain, no log written
  ['engine', [/^src\/engine\/(?!providers\/)/]],
  // the runs (issue 25): execute, compare, prepare a batch; they load, resolve models, ask the engine and write the log
  ['runs', [/^src\/runs\//]],
  ['generation', [/^src\/generation\//]],
  ['refine', [/^src\/refine\//]],
  ['budgets', [/^src\/budgets\//]],
  ['batch', [/^src\/batch\//]],
  ['calibration', [/^src\/calibration\//]],
  ['review', [/^src\/review\/(?!ops\.ts$)/]],
  ['surface', [/^src\/surface\/(?!routes\.ts$)/]],
  ['traces', [/^src\/traces\/(normalize|normalize-logs|proto|hooks|store|extract\/(formats|index)|rules\/(match|intake|assemble|store|domain|writeback))\.ts$/]],
];

// The entry points, lowest first: the server (main.ts) must not import the CLI that starts it.
const ENTRY_ORDER: Rooms = [
  ['invocation', [/^src\/invocation\.ts$/]],
  ['server', [/^src\/(main|app|admin-socket|key-commands|demo-purge)\.ts$/]],
  ['cli', [/^src\/cli\.ts$/, /^src\/cli\//]],
];

const membersOf = (rooms: Rooms) => rooms.flatMap(([, members]) => members);

const LAYERS: Rooms = [
  [
    'base',
    [
      /^src\/(schemas|errors|config|ids|version|unknown-fields|prices|limits|secret-box|log|sha256|iso-time)\.ts$/,
      /^src\/schemas\//,
      /^src\/traces\/(types|rules\/types|extract\/(rules|messages))\.ts$/,
    ],
  ],
  ['store', [/^src\/store\//]],
  ['core', membersOf(CORE_ORDER)],
  ['definitions', [/^src\/tool\.ts$/, /^src\/operations\//, /^tools\//, /^src\/traces\/(operations|routes|rules\/(operations|run|worker))\.ts$/]],
  ['doors', [/^src\/proxy\//, /^src\/(http|web|observability)\//, /^src\/(rest|mcp|openapi|server|rate-limit)\.ts$/, /^src\/traces\/(receiver|metrics)\.ts$/]],
  ['entry points', membersOf(ENTRY_ORDER)],
];
// room surface: its HTTP door (routes.ts) with the doors (the rest is in CORE_ORDER)
LAYERS[4][1].push(/^src\/surface\/routes\.ts$/);
// room review: its operations (ops.ts) with the definitions
LAYERS[3][1].push(/^src\/review\/ops\.ts$/);
// h-attach: the multipart upload door belongs to the doors.
LAYERS[4][1].push(/^src\/files\/routes\.ts$/);
// the operational paths of the OpenAPI document with the doors
LAYERS[4][1].push(/^src\/openapi-ops\.ts$/);
// h-otellogs: the logs receiver with the doors (beside receiver.ts); its records -> span events are in the traces room
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

/**
 * Relative imports a file needs when it runs: every import and re-export but the type-only ones
 * (`import type { ... }`, or braces whose every name is marked `type`), which vanish when compiled.
 */
function runtimeImportsOf(file: string, text = fs.readFileSync(path.join(ROOT, file), 'utf8')): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(/\b(import|export)\s+(type\s+)?([^'";]*?)\s*\bfrom\s*'(\.{1,2}\/[^']+)'|\bimport\s*\(\s*'(\.{1,2}\/[^']+)'\s*\)|\bimport\s+'(\.{1,2}\/[^']+)'/g)) {
    const spec = m[4] ?? m[5] ?? m[6];
    if (m[4] !== undefined) {
      if (m[2]) continue;
      const braces = /^\{([^}]*)\}$/.exec(m[3].trim());
      const names = braces
        ? braces[1]
            .split(',')
            .map((n) => n.trim())
            .filter(Boolean)
        : null;
      if (names?.length && names.every((n) => n.startsWith('type '))) continue;
    }
    found.push(path.posix.normalize(path.posix.join(path.posix.dirname(file), spec)));
  }
  return found;
}

/** Runtime imports of the engine (not its providers) into the store, domain/ or review/: the engine is pure scoring (issue 25). */
const impureEngineImports = (files: string[], read?: (file: string) => string) =>
  files
    .filter((f) => /^src\/engine\/(?!providers\/)/.test(f))
    .flatMap((f) => runtimeImportsOf(f, read?.(f)).map((target) => [f, target]))
    .filter(([, target]) => /^src\/(domain|store|review)\//.test(target));

const roomOf = (rooms: Rooms, file: string) => rooms.findIndex(([, members]) => members.some((re) => re.test(file)));

/** The ordered layers a file is ranked in: the outer layers, and its layer's rooms when that layer has an order. */
const ORDERS: Array<[layer: string, rooms: Rooms]> = [
  ['core', CORE_ORDER],
  ['entry points', ENTRY_ORDER],
];

/**
 * Imports running back up: to a higher layer, or within an ordered layer to a higher room. Imports
 * inside one room are free.
 */
function upwardImports(edges: Array<[from: string, to: string]>): string[] {
  const upward: string[] = [];
  for (const [file, target] of edges) {
    const own = layerOf(file);
    const theirs = layerOf(target);
    if (theirs > own) {
      upward.push(`${file} (${LAYERS[own][0]}) imports ${target} (${LAYERS[theirs][0]})`);
      continue;
    }
    if (theirs < own) continue;
    const order = ORDERS.find(([layer]) => layer === LAYERS[own][0]);
    if (!order) continue;
    const [a, b] = [roomOf(order[1], file), roomOf(order[1], target)];
    if (b > a) upward.push(`${file} (${order[0]}: ${order[1][a][0]}) imports ${target} (${order[0]}: ${order[1][b][0]})`);
  }
  return upward;
}

describe('layers (docs/ARCHITECTURE.md)', () => {
  const files = [...sourceFiles('src'), ...sourceFiles('tools')];
  const edges = files.flatMap((file) => importsOf(file).map((target): [string, string] => [file, target]));

  test('every module of src/ and tools/ belongs to a layer', () => {
    assert.ok(files.length > 50, `found only ${files.length} files`);
    assert.deepEqual(
      files.filter((f) => layerOf(f) < 0),
      [],
    );
  });

  test('every room of CORE_ORDER and ENTRY_ORDER holds a module (no stale rows)', () => {
    const empty = [...CORE_ORDER, ...ENTRY_ORDER].filter(([, members]) => !files.some((f) => members.some((re) => re.test(f)))).map(([name]) => name);
    assert.deepEqual(empty, []);
  });

  test('every imported module exists (the checker reads real paths)', () => {
    assert.ok(edges.length > 500, `found only ${edges.length} imports`);
    const missing = edges.filter(([, target]) => /\.ts$/.test(target) && !fs.existsSync(path.join(ROOT, target)));
    assert.deepEqual(missing, []);
  });

  test('no module imports from a layer above its own, nor from a room above its own (core, entry points)', () => {
    assert.deepEqual(upwardImports(edges), []);
  });

  test('the checker sees an upward import, between layers and between rooms (it can fail)', () => {
    // store -> doors would be upward; the regexes must place both ends.
    assert.ok(layerOf('src/store/json-store.ts') < layerOf('src/http/problem.ts'));
    assert.ok(importsOf('tools/run_judge.ts').length > 0, 'imports are found');
    assert.equal(upwardImports([['src/store/json-store.ts', 'src/http/problem.ts']]).length, 1);
    // The rooms of issue 25: providers below the rest of the engine, domain below the engine,
    // conversation below the engine, the server below the CLI, the engine below the runs.
    for (const [from, to] of [
      ['src/engine/providers/index.ts', 'src/engine/scoring.ts'],
      ['src/domain/models.ts', 'src/engine/structured-call.ts'],
      ['src/conversation/render.ts', 'src/engine/prompt.ts'],
      ['src/main.ts', 'src/cli/serve.ts'],
      // the pure engine below the runs that use it; the runs below the batch and the budgets that call them
      ['src/engine/engine.ts', 'src/runs/frame.ts'],
      ['src/runs/execute.ts', 'src/batch/work.ts'],
      ['src/runs/index.ts', 'src/budgets/engine.ts'],
    ]) {
      assert.equal(upwardImports([[from, to]]).length, 1, `${from} -> ${to} must be refused`);
      assert.deepEqual(upwardImports([[to, from]]), [], `${to} -> ${from} is allowed`);
    }
    // Inside one room anything goes.
    assert.deepEqual(upwardImports([['src/engine/scoring.ts', 'src/engine/pairwise.ts']]), []);
  });

  test('engine/ imports nothing at runtime from domain/, store/ or review/ (type-only imports of record shapes are fine)', () => {
    assert.deepEqual(impureEngineImports(files), []);
  });

  test('the purity check sees a runtime import and lets type-only ones pass (it can fail)', () => {
    const file = 'src/engine/scoring.ts';
    const real = fs.readFileSync(path.join(ROOT, file), 'utf8');
    const withImport = (line: string) => () => `${line}\n${real}`;
    const put = (line: string) => impureEngineImports([file], withImport(line));
    for (const line of [
      "import { loadJudgeEvaluators } from '../domain/judges.ts';",
      "import { feedReviewQueues, type X } from '../review/sources.ts';",
      "import '../store/json-store.ts';",
      "export { JsonStore } from '../store/json-store.ts';",
      "const m = await import('../domain/models.ts');",
    ]) {
      assert.equal(put(line).length, 1, `${line} must be refused`);
    }
    for (const line of ["import type { Store } from '../store/types.ts';", "import { type EvaluatorRecord, type JudgeRecord } from '../store/types.ts';"]) {
      assert.deepEqual(put(line), [], `${line} is type-only`);
    }
  });

  test('only the doors speak HTTP: every module importing express is in the doors layer', () => {
    // An HTTP door kept inside a core room (as the streamed dataset routes were) would be refused here.
    const doors = LAYERS.findIndex(([name]) => name === 'doors');
    const speaking = files.filter((f) => /from 'express'/.test(fs.readFileSync(path.join(ROOT, f), 'utf8')));
    assert.ok(speaking.includes('src/http/dataset-stream.ts') && speaking.includes('src/rest.ts'), 'express imports are found');
    assert.notEqual(layerOf('src/datasets/stream-routes.ts'), doors, 'a route file in the datasets room would be caught');
    assert.deepEqual(
      speaking.filter((f) => layerOf(f) !== doors),
      [],
    );
  });

  test('providers/ never imports the rest of engine/ (the imports run one way)', () => {
    const back = edges.filter(([file, target]) => file.startsWith('src/engine/providers/') && target.startsWith('src/engine/') && !target.startsWith('src/engine/providers/'));
    assert.deepEqual(back, []);
  });
});
