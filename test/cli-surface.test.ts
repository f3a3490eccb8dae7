// `tribunal judges export|import|duplicate|claim` end to end: the real command in a child process
// against a real server. A judge goes to a YAML file, into another organization from a directory (a
// CI sync), a second import changes nothing, a dry run shows the diff; a demo judge is claimed.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parse } from 'yaml';
import { EXIT } from '../src/cli/errors.ts';
import { startCliRig, type CliResult, type CliRig } from './helpers/cli.ts';
import { toolAnswer } from './helpers/fake-anthropic.ts';
import { tempDir } from './helpers/server.ts';

const ok = (r: CliResult) => {
  assert.equal(r.code, 0, `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r;
};

describe('tribunal judges export|import|duplicate|claim', () => {
  let rig: CliRig;
  let realKey: string;
  const dir = tempDir('tribunal-cli-surface-');
  before(async () => {
    rig = await startCliRig();
    const { createOrganization } = await import('../src/domain/orgs.ts');
    realKey = (await createOrganization(rig.server.store, { name: 'acme', isDemo: false })).api_key;
  });
  after(async () => {
    await rig.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('export to YAML, import a directory into another organization twice, dry run a change', async () => {
    ok(await rig.cli(['evaluators', 'create', '--name', 'Warm', '--intent', 'Warm tone', '--rubric', 'HIGH: warm. LOW: cold.']));
    const created = JSON.parse(ok(await rig.cli(['judges', 'create', '--json', '--name', 'Tone check', '--intent', 'Support replies', '--evaluator', 'Warm'])).stdout);
    assert.match(created.claim_token, /^clm_/, 'a demo judge answers a claim token');
    const file = path.join(dir, 'tone-check.yaml');
    ok(await rig.cli(['judges', 'export', 'Tone check', '--out', file]));
    const doc = parse(fs.readFileSync(file, 'utf8'));
    assert.equal(doc.judge.name, 'Tone check');
    assert.equal(doc.judge.evaluators[0].rubric, 'HIGH: warm. LOW: cold.');
    // The same bytes as the server's own YAML export.
    const server = await fetch(`${rig.server.url}/v1/judges/${created.id}/export/`, { headers: { authorization: `Api-Key ${rig.key}` } });
    assert.equal(await server.text(), fs.readFileSync(file, 'utf8'));
    const json = ok(await rig.cli(['judges', 'export', created.id, '--format', 'json']));
    assert.deepEqual(JSON.parse(json.stdout), doc);

    const env = { TRIBUNAL_API_KEY: realKey };
    const first = ok(await rig.cli(['judges', 'import', dir], { env }));
    assert.match(first.stdout, /created evaluator Warm, judge Tone check/);
    const second = ok(await rig.cli(['judges', 'import', dir, '--json'], { env }));
    const answer = JSON.parse(second.stdout);
    assert.equal(answer.length, 1);
    assert.deepEqual([answer[0].created.length, answer[0].updated.length, answer[0].unchanged.length], [0, 0, 2]);

    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('HIGH: warm. LOW: cold.', 'HIGH: warm and specific. LOW: cold.'));
    const dry = ok(await rig.cli(['judges', 'import', file, '--dry-run'], { env }));
    assert.match(dry.stdout, /would update evaluator Warm \(rubric\)/);
    const still = ok(await rig.cli(['judges', 'export', 'Tone check', '--format', 'json'], { env }));
    assert.equal(JSON.parse(still.stdout).judge.evaluators[0].rubric, 'HIGH: warm. LOW: cold.');

    fs.writeFileSync(path.join(dir, 'broken.yaml'), 'kind: judge\nformat: 1\njudge:\n  name: B\n  intent: x\n  evaluators:\n    - name: E\n      intent: y\n');
    const bad = await rig.cli(['judges', 'import', dir], { env });
    assert.equal(bad.code, EXIT.rejected, `${bad.stdout}\n${bad.stderr}`);
    assert.match(bad.stderr, /broken\.yaml: .*judge\.evaluators\.0\.rubric/);
    fs.writeFileSync(path.join(dir, 'alias.yaml'), 'a: &x [1]\nb: *x\n');
    const alias = await rig.cli(['judges', 'import', path.join(dir, 'alias.yaml')], { env });
    assert.notEqual(alias.code, 0);
    assert.match(alias.stderr, /aliases/);
  });

  test('duplicate and claim', async () => {
    const made = JSON.parse(ok(await rig.cli(['judges', 'create', '--json', '--name', 'Demo judge', '--intent', 'x', '--evaluator', 'Warm'])).stdout);
    const copy = ok(await rig.cli(['judges', 'duplicate', 'Demo judge']));
    assert.match(copy.stdout, /Copied judge Demo judge to Demo judge \(copy\)/);
    const claimed = ok(await rig.cli(['judges', 'claim', made.claim_token, '--json'], { env: { TRIBUNAL_API_KEY: realKey } }));
    assert.equal(JSON.parse(claimed.stdout).previous_judge_id, made.id);
    const again = await rig.cli(['judges', 'claim', made.claim_token], { env: { TRIBUNAL_API_KEY: realKey } });
    assert.notEqual(again.code, 0);
    assert.match(again.stderr, /used already/);
  });
});

describe('tribunal judges synth', () => {
  let rig: CliRig;
  before(async () => {
    rig = await startCliRig();
    rig.fake.respondWith((req) => {
      if (req.toolName !== 'write_synthetic_data') return toolAnswer({ justification: 'fine', score: 0.9 });
      const names = [...req.prompt.matchAll(/<evaluator name="([^"]+)">/g)].map((m) => m[1]);
      const count = Number(/exactly (\d+) pairs/.exec(req.prompt)?.[1]);
      const pairs = Array.from({ length: count }, (_, i) => ({
        request: `Question ${i}?`,
        high_response: 'A good answer.',
        low_response: 'Bad.',
        fails_evaluator: names[i % names.length],
        failure: 'too short',
      }));
      return toolAnswer({ name: 'CLI set', description: 'd', pairs });
    });
  });
  after(() => rig.close());

  test('waits for the data, prints it, and saves it as a dataset', async () => {
    ok(await rig.cli(['evaluators', 'create', '--name', 'Complete', '--intent', 'Complete answers', '--rubric', 'HIGH: complete. LOW: partial.']));
    ok(await rig.cli(['judges', 'create', '--name', 'Answers', '--intent', 'Answers', '--evaluator', 'Complete']));
    const status = ok(await rig.cli(['judges', 'synth', 'Answers', '--status']));
    assert.match(status.stdout, /not_generated/);
    const r = ok(await rig.cli(['judges', 'synth', 'Answers', '--count', '2', '--dataset', 'answers-synthetic']));
    assert.match(r.stdout, /ready \(CLI set\)/);
    assert.match(r.stdout, /low .*fails Complete: too short/);
    assert.match(r.stdout, /Saved as dataset answers-synthetic .* 4 items/);
    const bad = await rig.cli(['judges', 'synth', 'Answers', '--count', '50']);
    assert.equal(bad.code, EXIT.rejected);
    assert.match(bad.stderr, /count/);
  });
});
