// `tribunal datasets ...` end to end: the real command in a child process against a real server.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { startCliRig, type CliResult, type CliRig } from './helpers/cli.ts';
import { tempDir } from './helpers/server.ts';

let rig: CliRig;
before(async () => {
  rig = await startCliRig();
});
after(() => rig.close());

const ok = (r: CliResult) => {
  assert.equal(r.code, 0, `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r;
};

test('datasets create, import (JSONL in parts, CSV), list, export and delete', async () => {
  const dir = tempDir('tribunal-cli-datasets-');
  const created = JSON.parse(ok(await rig.cli(['datasets', 'create', 'regressions', '--description', 'known bad answers', '--json'])).stdout);
  assert.match(created.id, /^dst_/);

  const jsonl = path.join(dir, 'items.jsonl');
  const lines = Array.from({ length: 7 }, (_, i) => JSON.stringify({ response: `answer ${i}`, request: `q ${i}` }));
  lines.splice(4, 0, '{broken');
  fs.writeFileSync(jsonl, `${lines.join('\n')}\n`);
  // Three lines per request: the bad line's number must still be the file's (5), not the part's.
  const imported = await rig.cli(['datasets', 'import', 'regressions', jsonl, '--lines-per-request', '3', '--json']);
  assert.equal(imported.code, 8, imported.stderr);
  const answer = JSON.parse(imported.stdout);
  assert.equal(answer.created, 7);
  assert.deepEqual(
    answer.skipped.map((s: { line: number }) => s.line),
    [5],
  );

  const csv = path.join(dir, 'more.csv');
  fs.writeFileSync(csv, 'request,response,tags\nq,"a, b",x|y\n');
  assert.match(ok(await rig.cli(['datasets', 'import', created.id, csv])).stdout, /Imported 1 items/);

  const listed = ok(await rig.cli(['datasets', 'list']));
  assert.match(listed.stdout, /regressions/);
  assert.match(listed.stdout, /\b8\b/);

  const out = path.join(dir, 'export.jsonl');
  ok(await rig.cli(['datasets', 'export', 'regressions', '--out', out]));
  const exported = fs
    .readFileSync(out, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.deepEqual(
    exported.map((i) => i.response),
    [...Array.from({ length: 7 }, (_, i) => `answer ${i}`), 'a, b'],
  );
  assert.deepEqual(exported[7].tags, ['x', 'y']);
  const toStdout = ok(await rig.cli(['datasets', 'export', created.id]));
  assert.equal(toStdout.stdout.trim().split('\n').length, 8);

  assert.match(ok(await rig.cli(['datasets', 'delete', 'regressions'])).stdout, new RegExp(created.id));
  const gone = await rig.cli(['datasets', 'export', 'regressions']);
  assert.equal(gone.code, 5, gone.stderr);
  assert.match(gone.stderr, /^error: .*not found/m);
  const missingFile = await rig.cli(['datasets', 'import', created.id, path.join(dir, 'nope.jsonl')]);
  assert.equal(missingFile.code, 2);
});
