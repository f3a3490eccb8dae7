// tribunal evaluators create --kind check|code against a real server: the checks and the code come
// from files, the evaluator runs without a model, and code that does not compile is refused with its line.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { startCliRig, type CliRig } from './helpers/cli.ts';
import { tempDir } from './helpers/server.ts';

let rig: CliRig;
const dir = tempDir('tribunal-cli-checks-');
before(async () => {
  rig = await startCliRig({ TRIBUNAL_RATE_LIMIT: '100000' });
});
after(() => rig.close());

test('create a check evaluator from --checks-file and run it', async () => {
  const checks = path.join(dir, 'checks.json');
  fs.writeFileSync(checks, JSON.stringify([{ type: 'json_valid' }, { type: 'contains', value: 'paris' }]));
  const made = await rig.cli([
    'evaluators',
    'create',
    '--name',
    'CLI check',
    '--intent',
    'JSON naming Paris.',
    '--kind',
    'check',
    '--checks-file',
    checks,
    '--combine',
    'fraction',
    '--json',
  ]);
  assert.equal(made.code, 0, made.stderr);
  const e = JSON.parse(made.stdout);
  assert.deepEqual([e.kind, e.combine, e.checks.length], ['check', 'fraction', 2]);
  const ran = await rig.cli(['evaluators', 'run', 'CLI check', '--response', '{"city": "Lyon"}', '--json']);
  assert.equal(ran.code, 0, ran.stderr);
  assert.equal(JSON.parse(ran.stdout).score, 0.5);
});

test('create a code evaluator from --code-file; a compile error names the line', async () => {
  const good = path.join(dir, 'good.js');
  fs.writeFileSync(good, 'return input.response.length <= 10 ? 1 : 0;\n');
  const made = await rig.cli(['evaluators', 'create', '--name', 'CLI code', '--intent', 'Short.', '--kind', 'code', '--code-file', good]);
  assert.equal(made.code, 0, made.stderr);
  const ran = await rig.cli(['evaluators', 'run', 'CLI code', '--response', 'tiny', '--json']);
  assert.equal(JSON.parse(ran.stdout).score, 1);
  const bad = path.join(dir, 'bad.js');
  fs.writeFileSync(bad, 'const a = 1;\nconst b = 2;\nreturn a +* b;\n');
  const refused = await rig.cli(['evaluators', 'create', '--name', 'CLI bad code', '--intent', 'x', '--kind', 'code', '--code-file', bad]);
  assert.notEqual(refused.code, 0);
  assert.match(refused.stderr, /line 3/);
  const wrongKind = await rig.cli(['evaluators', 'create', '--name', 'x', '--intent', 'x', '--kind', 'regex']);
  assert.notEqual(wrongKind.code, 0);
  assert.match(wrongKind.stderr, /--kind must be one of llm, check, code/);
});
