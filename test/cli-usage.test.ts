// How the `tribunal` command meets a new user (issue 13 items 2 and 7): the hints it prints name the
// command the way it was installed (the real `npm install -g .` link, and npx inside the checkout),
// global flags before the subcommand, justifications in full when stdout is not a terminal, --json
// numbers without floating-point noise, and a one-line answer to an unknown command.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { closest, hoistGlobalFlags } from '../src/cli.ts';
import { commandName, withCommandName } from '../src/invocation.ts';
import { ROOT, runCli, startCliRig, type CliRig } from './helpers/cli.ts';
import { toolAnswer, type FakeRequest } from './helpers/fake-anthropic.ts';
import { calledTools, contextAnswer, stagesAnswer } from './helpers/generation.ts';
import { cleanEnv } from './helpers/server.ts';

const LONG_JUSTIFICATION =
  'The response names the exact menu path (Settings, then Security, then Reset password), says when the email arrives, and leaves nothing for the customer to guess; END-OF-JUSTIFICATION';

/** Runs a command with its own PATH and cwd; resolves with its exit code and output. */
function run(cmd: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv }): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('the command name in hints', () => {
  test('npx, the installed link, bin/tribunal.js run by node, and the server started from the checkout', () => {
    const no = () => false;
    const yes = () => true;
    assert.equal(commandName({ env: { npm_command: 'exec' }, script: '/repo/node_modules/.bin/tribunal', installed: yes }), 'npx tribunal');
    assert.equal(commandName({ env: {}, script: '/usr/local/bin/tribunal', installed: no }), 'tribunal');
    assert.equal(commandName({ env: {}, script: '/repo/bin/tribunal.js', installed: no }), 'tribunal');
    assert.equal(commandName({ env: { npm_command: 'start' }, script: '/repo/src/main.ts', installed: no }), 'npx tribunal');
    assert.equal(commandName({ env: { npm_command: 'start' }, script: '/repo/src/main.ts', installed: yes }), 'tribunal');
    assert.equal(
      withCommandName('error: x. See tribunal --help; or "tribunal demo-key" (tribunal keys list)', 'npx tribunal'),
      'error: x. See npx tribunal --help; or "npx tribunal demo-key" (npx tribunal keys list)',
    );
    assert.equal(withCommandName('Tribunal listening; the tribunal.lock file', 'npx tribunal'), 'Tribunal listening; the tribunal.lock file');
  });

  test('installed with npm install -g . the command works outside the checkout and its hints say "tribunal"', async (t) => {
    const prefix = fs.mkdtempSync(path.join(os.tmpdir(), 'tribunal-global-'));
    t.after(() => fs.rmSync(prefix, { recursive: true, force: true }));
    const install = spawnSync('npm', ['install', '-g', '.', '--prefix', prefix, '--no-audit', '--no-fund', '--offline'], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(install.status, 0, install.stderr);
    const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'tribunal-elsewhere-'));
    t.after(() => fs.rmSync(elsewhere, { recursive: true, force: true }));
    const env = cleanEnv({ PATH: `${path.join(prefix, 'bin')}${path.delimiter}${process.env.PATH}` });
    const unknown = await run('tribunal', ['frobnicate'], { cwd: elsewhere, env });
    assert.equal(unknown.code, 2, unknown.stderr);
    assert.equal(unknown.stderr, 'error: unknown command "frobnicate". See tribunal --help.\n');
    const help = await run('tribunal', ['keys', '--help'], { cwd: elsewhere, env });
    assert.match(help.stdout, /^Usage: tribunal keys /);
    assert.doesNotMatch(help.stdout, /npx/);
  });

  test('through npx inside the checkout, the hints say "npx tribunal"', async () => {
    const r = await run('npx', ['--offline', 'tribunal', 'judgs'], { cwd: ROOT, env: cleanEnv({ PATH: process.env.PATH }) });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /^error: unknown command "judgs" \(did you mean "judges"\?\)\. See npx tribunal --help\.$/m);
  });
});

describe('command-line details', () => {
  let rig: CliRig;
  before(async () => {
    rig = await startCliRig();
    // One evaluator scores 0.1 on responses that say ALPHA-ROW, 0.2 otherwise: a mean of 0.1 and 0.2
    // is 0.15000000000000002 in floating point.
    rig.fake.respondWith((req: FakeRequest) => toolAnswer({ justification: LONG_JUSTIFICATION, score: /ALPHA-ROW/.test(req.prompt) ? 0.1 : 0.2 }));
  });
  after(() => rig.close());

  test('global flags before the subcommand', () => {
    assert.deepEqual(hoistGlobalFlags(['--url', 'http://x', '--json', 'judges', 'list', '--all']), { command: 'judges', rest: ['list', '--all', '--url', 'http://x', '--json'] });
    assert.deepEqual(hoistGlobalFlags(['--api-key=k', 'judges', 'run', 'j', '--', '--literal']), { command: 'judges', rest: ['run', 'j', '--api-key=k', '--', '--literal'] });
  });

  test('--url and --api-key before the subcommand reach the server', async () => {
    const r = await runCli(['--url', rig.server.url, '--api-key', rig.key, '--json', 'projects', 'list']);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(JSON.parse(r.stdout).results.some((p: { id: string }) => p.id === rig.projectId));
  });

  test('an unknown command is one line, with a guess when one is close', async () => {
    const [typo, far, option] = await Promise.all([runCli(['evaluator']), runCli(['frobnicate']), runCli(['--colour', 'judges', 'list'])]);
    assert.equal(typo.code, 2);
    assert.equal(typo.stderr, 'error: unknown command "evaluator" (did you mean "evaluators"?). See tribunal --help.\n');
    assert.equal(far.stderr, 'error: unknown command "frobnicate". See tribunal --help.\n');
    assert.equal(option.stderr, 'error: unknown option --colour. See tribunal --help.\n');
    assert.equal(closest('lgos', ['logs', 'judges']), 'logs');
    assert.equal(closest('x', ['logs', 'judges']), undefined);
  });

  test('justifications are printed whole when stdout is not a terminal', async () => {
    const judge = await rig.server.request('POST', '/v1/judges/', {
      key: rig.key,
      body: { name: 'details judge', intent: 'Help-desk answers.', evaluator_ids: ['Answer Relevance'] },
    });
    assert.equal(judge.status, 201, JSON.stringify(judge.body));
    const r = await rig.cli(['judges', 'run', 'details judge', '--request', 'How do I change my password?', '--response', 'Open Settings.']);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(r.stdout.includes(LONG_JUSTIFICATION), r.stdout);
  });

  test('--json numbers carry no floating-point noise', async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tribunal-json-'));
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const input = path.join(dir, 'data.jsonl');
    fs.writeFileSync(
      input,
      `${JSON.stringify({ request: 'first question', response: 'ALPHA-ROW answer' })}\n${JSON.stringify({ request: 'second question', response: 'second answer' })}\n`,
    );
    const r = await rig.cli(['eval', '--judge', 'details judge', '--input', input, '--out', path.join(dir, 'out.jsonl'), '--json', '--quiet']);
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stdout, /\d\.\d*0000000000\d/);
    const summary = JSON.parse(r.stdout);
    assert.equal(summary.evaluators[0].mean, 0.15);
    assert.equal(summary.overall.mean, 0.15);
  });

  test("judges generate without --judge-id continues the caller's draft of the same description instead of storing another", async () => {
    const intent = 'Our recipe assistant answers cooking questions for home cooks; evaluate its answers for safety and clarity.';
    rig.fake.resetStats();
    rig.fake.enqueueFor('identify_stages', stagesAnswer('answering'));
    rig.fake.enqueueFor('assess_context', contextAnswer([['diet', 'Which diets must answers respect?']]));
    const first = await rig.cli(['judges', 'generate', intent]);
    assert.equal(first.code, 9, first.stderr);
    const draftId = /--judge-id (jdg_[0-9a-f]{32})/.exec(first.stderr)?.[1];
    assert.ok(draftId, first.stderr);

    // Demo resources are public, but another user's default list leaves this draft out; its owner still sees it.
    const stranger = await rig.server.demoUser();
    const theirs = await rig.server.request('GET', '/v1/judges/?limit=200', { key: stranger.api_key });
    assert.equal(theirs.status, 200);
    assert.ok(!theirs.body.results.some((j: { id: string }) => j.id === draftId), 'a stranger does not see the draft');
    const mine = await rig.server.request('GET', '/v1/judges/?limit=200', { key: rig.key });
    assert.ok(
      mine.body.results.some((j: { id: string }) => j.id === draftId),
      'the owner sees the draft',
    );

    // The same description again (a CI job re-run): the same draft, and its questions without asking the model again.
    rig.fake.resetStats();
    rig.fake.enqueueFor('identify_stages', stagesAnswer('answering'));
    const again = await rig.cli(['judges', 'generate', intent]);
    assert.equal(again.code, 9, again.stderr);
    assert.match(again.stderr, new RegExp(`Continuing your draft .* \\(${draftId}\\)`));
    assert.equal(/--judge-id (jdg_[0-9a-f]{32})/.exec(again.stderr)?.[1], draftId);
    assert.ok(!calledTools(rig.fake).includes('assess_context'), 'the open questions come from the draft');

    // --new-draft opts out: another draft.
    rig.fake.resetStats();
    rig.fake.enqueueFor('identify_stages', stagesAnswer('answering'));
    rig.fake.enqueueFor('assess_context', contextAnswer([['diet', 'Which diets must answers respect?']]));
    const fresh = await rig.cli(['judges', 'generate', intent, '--new-draft']);
    assert.equal(fresh.code, 9, fresh.stderr);
    const freshId = /--judge-id (jdg_[0-9a-f]{32})/.exec(fresh.stderr)?.[1];
    assert.ok(freshId && freshId !== draftId, fresh.stderr);
    const own = await rig.server.request('GET', '/v1/judges/?include_public=false&limit=200', { key: rig.key });
    assert.equal(own.body.results.filter((j: { intent: string }) => j.intent === intent).length, 2);
  });
});
