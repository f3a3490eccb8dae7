// tribunal compare-responses against a real server on the fake judge model: text and file
// responses, the per-evaluator table with INCONSISTENT for a position-biased evaluator, --json,
// and the usage errors.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { startCliRig, type CliRig } from './helpers/cli.ts';
import { toolAnswer, type FakeRequest } from './helpers/fake-anthropic.ts';
import { tempDir } from './helpers/server.ts';

const GOOD = 'Open Settings, choose Security, then Reset password.';
const BAD = 'I cannot help with that.';
const shownFirst = (req: FakeRequest) => /<response_A_[0-9a-f]{24}>\n([\s\S]*?)\n<\/response_A_/.exec(req.prompt)![1];

let rig: CliRig;
before(async () => {
  rig = await startCliRig();
  const post = (p: string, body: unknown) => rig.server.request('POST', p, { key: rig.key, body });
  for (const name of ['Fair one', 'First lover']) {
    const res = await post('/v1/evaluators/', { name, intent: `Checks ${name}.`, rubric: 'Better: answers the question.' });
    assert.equal(res.status, 201);
  }
  const judge = await post('/v1/judges/', { name: 'cli compare judge', intent: 'Compares.', evaluator_ids: ['Fair one', 'First lover'] });
  assert.equal(judge.status, 201, JSON.stringify(judge.body));
  rig.fake.respondWith((req) =>
    req.system.includes('Name: First lover\n')
      ? toolAnswer({ justification: 'The first is better.', preference: 'A' })
      : toolAnswer({ justification: 'The settings path answers it.', preference: shownFirst(req) === GOOD ? 'A' : 'B' }),
  );
});
after(() => rig.close());

test('compare-responses with a judge: b from a file wins, the biased evaluator is INCONSISTENT', async () => {
  const dir = tempDir();
  const file = path.join(dir, 'b.txt');
  fs.writeFileSync(file, GOOD);
  const r = await rig.cli(['compare-responses', '--judge', 'cli compare judge', '--request', 'How do I reset my password?', '--a', BAD, '--b', file]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /Comparison with judge cli compare judge: preference b  \(a 0, b 1, ties 1;/);
  assert.match(r.stdout, /\n  b\s+consistent\s+Fair one\s+The settings path answers it\./);
  assert.match(r.stdout, /\n  tie\s+INCONSISTENT\s+First lover\s+The two orders disagreed/);
  const json = await rig.cli(['compare-responses', '--evaluator', 'Fair one', '--a', GOOD, '--b', BAD, '--json']);
  assert.equal(json.code, 0, json.stderr);
  const body = JSON.parse(json.stdout);
  assert.deepEqual([body.preference, body.wins_a, body.evaluator_results[0].consistent, body.evaluator_results[0].orders.length], ['a', 1, true, 2]);
  const log = await rig.cli(['logs', 'get', body.execution_log_id, '--json']);
  assert.equal(JSON.parse(log.stdout).type, 'comparison');
  const shown = await rig.cli(['logs', 'get', /log (log_[0-9a-f]+)/.exec(r.stdout)![1]]);
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, /comparison with:\s+judge cli compare judge/);
  assert.match(shown.stdout, /preference:\s+b \(a 0, b 1, ties 1\)/);
  assert.match(shown.stdout, /response b:\s+Open Settings/);
  assert.match(shown.stdout, /\n  tie \(orders disagreed\)  First lover/);
});

test('usage errors: both or neither target, a missing response', async () => {
  const both = await rig.cli(['compare-responses', '--judge', 'x', '--evaluator', 'y', '--a', 'a', '--b', 'b']);
  assert.equal(both.code, 2);
  assert.match(both.stderr, /exactly one of --judge or --evaluator/);
  const missing = await rig.cli(['compare-responses', '--judge', 'cli compare judge', '--a', 'a']);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /--a and --b are both required/);
  const unknown = await rig.cli(['compare-responses', '--judge', 'no such judge', '--a', 'a', '--b', 'b']);
  assert.equal(unknown.code, 5, unknown.stderr);
});
