// The `tribunal` CLI end to end: the real command (node bin/tribunal.js) in a child process against
// a real server whose judge model is the fake Anthropic server. Every command group, --json output,
// the error exit codes, and judge generation answered by flags, by piped answers and on a terminal.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ROOT, runCli, startCliRig, type CliResult, type CliRig } from './helpers/cli.ts';
import { contextAnswer, designAnswer, newEvaluator, stagesAnswer } from './helpers/generation.ts';
import { tempDir } from './helpers/server.ts';

const json = (r: CliResult) => {
  assert.equal(r.code, 0, `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return JSON.parse(r.stdout);
};

/** A failure is one line on stderr (after any progress), never a stack trace. */
function assertOneLineError(r: CliResult, code: number, pattern: RegExp) {
  assert.equal(r.code, code, `expected exit ${code}, got ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  const errors = r.stderr.split('\n').filter((l) => l.startsWith('error: '));
  assert.equal(errors.length, 1, r.stderr);
  assert.match(errors[0], pattern);
  assert.doesNotMatch(r.stderr, /\n\s+at .+:\d+:\d+/, 'no stack trace');
}

async function closedPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

const PIPELINE_INTENT =
  'Our legal research assistant first classifies the user question, then retrieves passages from a corpus of contracts, then writes an answer that cites the passages.';

describe('tribunal CLI', () => {
  let rig: CliRig;
  before(async () => {
    rig = await startCliRig();
  });
  after(() => rig.close());

  test('help, unknown commands and flags, version', async () => {
    const [top, judges, evalHelp, unknown, badFlag, missing, version] = await Promise.all([
      runCli(['--help']),
      runCli(['judges', '--help']),
      runCli(['eval', '--help']),
      runCli(['frobnicate']),
      runCli(['judges', 'list', '--colour']),
      runCli(['judges', 'get']),
      runCli(['--version']),
    ]);
    assert.equal(top.code, 0);
    for (const cmd of ['demo-key', 'judges', 'evaluators', 'projects', 'logs', 'eval', 'serve', 'keys']) assert.match(top.stdout, new RegExp(`\\b${cmd}\\b`));
    assert.equal(judges.code, 0);
    for (const sub of ['list', 'get', 'create', 'update', 'delete', 'run', 'generate']) assert.match(judges.stdout, new RegExp(`^  ${sub}\\b`, 'm'));
    assert.equal(evalHelp.code, 0);
    assert.match(evalHelp.stdout, /--fail-under/);
    assert.match(evalHelp.stdout, /--resume/);
    assert.match(evalHelp.stdout, /--json/, 'global options are listed');
    assertOneLineError(unknown, 2, /unknown command "frobnicate"/);
    assertOneLineError(badFlag, 2, /Unknown option '--colour'/);
    assertOneLineError(missing, 2, /missing argument/);
    assert.equal(version.code, 0);
    assert.match(version.stdout, /^\d+\.\d+\.\d+/);
  });

  test('demo-key prints the export lines, and the key works', async () => {
    const shell = await runCli(['demo-key'], { env: { TRIBUNAL_URL: rig.server.url } });
    assert.equal(shell.code, 0, shell.stderr);
    const lines = shell.stdout.trim().split('\n');
    assert.equal(lines.length, 2, 'stdout holds only the lines to export');
    assert.equal(lines[0], `export TRIBUNAL_URL=${rig.server.url}`);
    const key = /^export TRIBUNAL_API_KEY=(\S+)$/.exec(lines[1])?.[1];
    assert.ok(key, lines[1]);
    assert.match(shell.stderr, /expires/);
    const asJson = await runCli(['demo-key', '--json', '--url', rig.server.url]);
    const made = json(asJson);
    assert.ok(made.api_key && made.organization_id && made.project_id && made.expires_at);
    const projects = json(await runCli(['projects', 'list', '--json'], { env: { TRIBUNAL_URL: rig.server.url, TRIBUNAL_API_KEY: key } }));
    assert.equal(projects.results.length, 1);
    assert.equal(projects.results[0].is_default, true);
  });

  test('evaluators: create, list, get, update and run by name, delete', async () => {
    const dir = tempDir('tribunal-cli-');
    const rubric = path.join(dir, 'rubric.txt');
    fs.writeFileSync(rubric, 'HIGH (1): names the product.\nLOW (0): does not.');
    const created = json(
      await rig.cli([
        'evaluators',
        'create',
        '--name',
        'Names the product',
        '--intent',
        'Checks that the reply names the product.',
        '--rubric-file',
        rubric,
        '--requires-contexts',
        '--json',
      ]),
    );
    assert.match(created.id, /^evl_[0-9a-f]{32}$/);
    assert.equal(created.rubric, 'HIGH (1): names the product.\nLOW (0): does not.');
    assert.equal(created.requires_contexts, true);

    const [listed, presets, shown, human] = await Promise.all([
      rig.cli(['evaluators', 'list', '--search', 'names the product', '--json']),
      rig.cli(['evaluators', 'list', '--presets', '--all', '--json']),
      rig.cli(['evaluators', 'get', 'Names the product', '--json']),
      rig.cli(['evaluators', 'get', created.id]),
    ]);
    assert.deepEqual(
      json(listed).results.map((e: any) => e.id),
      [created.id],
    );
    const allPresets = json(presets).results;
    assert.ok(allPresets.length >= 30 && allPresets.every((e: any) => e.is_preset), 'every preset, across pages');
    assert.equal(json(shown).id, created.id, 'resolved by exact name');
    assert.equal(human.code, 0);
    assert.match(human.stdout, /rubric:\s+HIGH \(1\): names the product\.\n\s+LOW \(0\): does not\./);
    assert.match(human.stdout, /needs:\s+contexts/);

    const updated = json(await rig.cli(['evaluators', 'update', 'Names the product', '--no-requires-contexts', '--intent', 'Checks the product is named.', '--json']));
    assert.equal(updated.version, 2);
    assert.equal(updated.requires_contexts, false);

    const run = json(await rig.cli(['evaluators', 'run', 'Names the product', '--request', 'What is it?', '--response', 'It is the Acme 3000.', '--tag', 'cli', '--json']));
    assert.equal(run.evaluator_results.length, 1);
    assert.equal(run.evaluator_results[0].evaluator_id, created.id);
    assert.equal(typeof run.score, 'number');
    const log = json(await rig.cli(['logs', 'get', run.execution_log_id, '--json']));
    assert.equal(log.type, 'evaluator');
    assert.equal(log.evaluator_version, 2);
    assert.deepEqual(log.tags, ['cli']);

    const refused = await rig.cli(['evaluators', 'delete', 'Names the product']);
    assertOneLineError(refused, 2, /--yes/);
    const deleted = json(await rig.cli(['evaluators', 'delete', 'Names the product', '--yes', '--json']));
    assert.deepEqual(deleted, { deleted: true, id: created.id });
    assertOneLineError(await rig.cli(['evaluators', 'get', created.id]), 5, /not found/i);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('judges and logs: create with evaluators by name, list, get, update, run, filter logs, delete', async () => {
    const judge = json(
      await rig.cli([
        'judges',
        'create',
        '--name',
        'Support replies',
        '--intent',
        'Replies of the support bot.',
        '--evaluator',
        'Clarity',
        '--evaluator',
        'preset_helpfulness',
        '--stage',
        'reply',
        '--json',
      ]),
    );
    assert.match(judge.id, /^jdg_[0-9a-f]{32}$/);
    assert.deepEqual(
      judge.evaluators.map((e: any) => e.id),
      ['preset_clarity', 'preset_helpfulness'],
    );

    const [listed, byName, human] = await Promise.all([
      rig.cli(['judges', 'list', '--json']),
      rig.cli(['judges', 'get', 'Support replies', '--json']),
      rig.cli(['judges', 'get', 'Support replies']),
    ]);
    assert.ok(json(listed).results.some((j: any) => j.id === judge.id));
    const full = json(byName);
    assert.equal(full.id, judge.id);
    assert.ok(
      full.evaluators.every((e: any) => typeof e.rubric === 'string'),
      'get shows every evaluator in full',
    );
    assert.match(human.stdout, /Evaluators \(2\):/);
    assert.match(human.stdout, /Clarity\s+preset_clarity\s+preset/);

    const renamed = json(await rig.cli(['judges', 'update', 'Support replies', '--name', 'Support replies v2', '--clear-stage', '--json']));
    assert.equal(renamed.version, 2);
    assert.equal(renamed.stage, null);

    rig.fake.resetStats();
    const text = await rig.cli(['judges', 'run', 'Support replies v2', '--request', 'Where is my order?', '--response', 'It ships today.', '--tag', 'cli-run', '--tag', 'smoke']);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /^Judge Support replies v2: score 0\.\d\d .* log log_[0-9a-f]{32}$/m);
    assert.match(text.stdout, /^\s+0\.\d\d\s+Clarity\s+fake justification/m);
    assert.equal(rig.fake.requests.length, 2, 'one model call per evaluator');
    const run = json(
      await rig.cli([
        'judges',
        'run',
        judge.id,
        '--request',
        'And the second one?',
        '--response',
        'Second reply.',
        '--context',
        'doc one',
        '--context',
        'doc two',
        '--expected-output',
        'x',
        '--user-id',
        'u1',
        '--json',
      ]),
    );
    assert.equal(run.evaluator_results.length, 2);

    // logs list: every filter reaches the server.
    const [byJudge, tagged, high, costly, dated, future] = await Promise.all([
      rig.cli(['logs', 'list', '--judge', 'Support replies v2', '--json']),
      rig.cli(['logs', 'list', '--tag', 'cli-run', '--tag', 'smoke', '--json']),
      rig.cli(['logs', 'list', '--judge', judge.id, '--min-score', '0.99', '--json']),
      rig.cli(['logs', 'list', '--evaluator', 'Clarity', '--min-cost', '0', '--max-cost', '100', '--max-score', '1', '--limit', '1', '--json']),
      rig.cli(['logs', 'list', '--from', '2000-01-01', '--to', '2999-12-31', '--project', rig.projectId, '--json']),
      rig.cli(['logs', 'list', '--from', '2999-01-01', '--json']),
    ]);
    assert.equal(json(byJudge).results.length, 2);
    const taggedLogs = json(tagged).results;
    assert.equal(taggedLogs.length, 1);
    assert.deepEqual(taggedLogs[0].tags, ['cli-run', 'smoke']);
    assert.equal(json(high).results.length, 0, 'the fake scores below 0.99');
    const page = json(costly);
    assert.equal(page.results.length, 1);
    assert.ok(page.next_cursor, 'a second page exists');
    const next = json(await rig.cli(['logs', 'list', '--evaluator', 'Clarity', '--limit', '1', '--cursor', page.next_cursor, '--json']));
    assert.notEqual(next.results[0].id, page.results[0].id);
    assert.ok(json(dated).results.length >= 2);
    assert.equal(json(future).results.length, 0);
    const log = json(await rig.cli(['logs', 'get', run.execution_log_id, '--json']));
    assert.deepEqual(log.contexts, ['doc one', 'doc two']);
    assert.equal(log.user_id, 'u1');
    const shown = await rig.cli(['logs', 'get', run.execution_log_id]);
    assert.match(shown.stdout, /contexts:\s+\[1\] doc one\n\s+\[2\] doc two/);
    assert.match(shown.stdout, /Results:\n\s+0\.\d\d\s+Clarity v1/);
    assertOneLineError(await rig.cli(['logs', 'list', '--min-score', '2']), 2, /--min-score must be a number from 0 to 1/);

    json(await rig.cli(['judges', 'delete', judge.id, '--yes', '--json']));
    assertOneLineError(await rig.cli(['judges', 'get', judge.id]), 5, /not found/i);
  });

  test('projects: create and list', async () => {
    const made = json(await rig.cli(['projects', 'create', 'Checkout bot', '--description', 'The checkout assistant', '--json']));
    assert.match(made.id, /^prj_/);
    const listed = await rig.cli(['projects', 'list']);
    assert.equal(listed.code, 0);
    assert.match(listed.stdout, /Checkout bot\s+\S+ \S+\s+The checkout assistant/);
    assert.match(listed.stdout, /Default\s+yes/);
  });

  test('errors: wrong URL, wrong key, no key, unknown judge, refused input: one line and a distinct exit code each', async () => {
    const port = await closedPort();
    const [refused, badUrl, wrongKey, noKey, unknownName, unknownId, invalid] = await Promise.all([
      runCli(['judges', 'list'], { env: { TRIBUNAL_URL: `http://127.0.0.1:${port}`, TRIBUNAL_API_KEY: rig.key } }),
      runCli(['judges', 'list', '--url', 'not a url'], { env: { TRIBUNAL_API_KEY: rig.key } }),
      rig.cli(['judges', 'list', '--api-key', 'trb_0000000000000000_wrongwrongwrongwrongwrongwrongwrongwrong']),
      runCli(['judges', 'list'], { env: { TRIBUNAL_URL: rig.server.url } }),
      rig.cli(['judges', 'run', 'No such judge', '--response', 'x']),
      rig.cli(['judges', 'get', `jdg_${'0'.repeat(32)}`]),
      rig.cli(['judges', 'create', '--name', 'x', '--intent', 'y', '--evaluator', 'Clarity', '--visibility', 'secret']),
    ]);
    assertOneLineError(refused, 3, new RegExp(`cannot connect to Tribunal at http://127\\.0\\.0\\.1:${port} \\(connection refused\\)`));
    assertOneLineError(badUrl, 2, /not a URL/);
    assertOneLineError(wrongKey, 4, /refused the API key/);
    assert.doesNotMatch(wrongKey.stderr, /wrongwrong/, 'the key is never echoed');
    assertOneLineError(noKey, 4, /no API key: set TRIBUNAL_API_KEY/);
    assertOneLineError(unknownName, 5, /no judge with the id or exact name "No such judge"/);
    assertOneLineError(unknownId, 5, /not found/i);
    assertOneLineError(invalid, 2, /--visibility must be one of private, public/);

    // A request the server refuses (an evaluator that needs contexts, run without them): exit 7.
    await rig.server.request('POST', '/v1/evaluators/', {
      key: rig.key,
      body: { name: 'Grounded', intent: 'Grounded in contexts.', rubric: 'HIGH: grounded. LOW: not.', requires_contexts: true },
    });
    assertOneLineError(await rig.cli(['evaluators', 'run', 'Grounded', '--response', 'x']), 7, /--context <text>/); // issue 26: the flag, not the REST field
  });

  describe('judges generate', () => {
    test('several stages without a terminal: exit 9 naming the stages; --json prints the outcome', async () => {
      rig.fake.enqueueFor('identify_stages', stagesAnswer('classification', 'retrieval', 'answer generation'));
      const r = await rig.cli(['judges', 'generate', PIPELINE_INTENT]);
      assertOneLineError(r, 9, /several stages \("classification", "retrieval", "answer generation"\): choose one with --stage/);
      rig.fake.enqueueFor('identify_stages', stagesAnswer('classification', 'answer generation'));
      const j = await rig.cli(['judges', 'generate', PIPELINE_INTENT, '--json']);
      assert.equal(j.code, 9);
      assert.deepEqual(JSON.parse(j.stdout), { error_code: 'multiple_stages', stages: ['classification', 'answer generation'] });
      assert.equal(rig.fake.pending, 0);
    });

    test('--stage, then missing context without a terminal: exit 9 with the --context flags; --context and --judge-id finish the same judge', async () => {
      rig.fake.resetStats();
      rig.fake.enqueueFor(
        'assess_context',
        contextAnswer([
          ['tone', 'How formal should answers be?'],
          ['jurisdiction', 'Which jurisdiction applies?'],
        ]),
      );
      const first = await rig.cli(['judges', 'generate', PIPELINE_INTENT, '--stage', 'answer generation']);
      assert.equal(first.code, 9, first.stderr);
      assert.match(first.stderr, /--context tone="\.\.\."\s+How formal should answers be\?/);
      assert.match(first.stderr, /--context jurisdiction="\.\.\."\s+Which jurisdiction applies\?/);
      const draftId = /--judge-id (jdg_[0-9a-f]{32})/.exec(first.stderr)?.[1];
      assert.ok(draftId, first.stderr);
      // The draft shows as one, with how to finish it, and refuses to run.
      const shown = await rig.cli(['judges', 'get', draftId]);
      assert.equal(shown.code, 0, shown.stderr);
      assert.match(shown.stdout, /generated: +draft: cannot run until these are answered:\n +- tone: How formal should answers be\?/);
      assert.match(
        shown.stdout,
        new RegExp(`Finish it: tribunal judges generate "<the same intent>" --judge-id ${draftId} --context tone="\\.\\.\\." --context jurisdiction="\\.\\.\\."`),
      );
      assertOneLineError(
        await rig.cli(['judges', 'run', draftId, '--response', 'x']),
        7,
        /is a draft made by generate_judge, waiting for answers to 2 questions \(tone, jurisdiction\)/,
      );

      rig.fake.enqueueFor('design_judge', designAnswer({ name: 'Legal answers judge', evaluators: [newEvaluator('Citation Format')] }));
      const done = await rig.cli([
        'judges',
        'generate',
        PIPELINE_INTENT,
        '--stage',
        'answer generation',
        '--judge-id',
        draftId,
        '--context',
        'tone=Formal',
        '--context',
        'jurisdiction=US federal law',
        '--json',
      ]);
      const body = json(done);
      assert.equal(body.judge_id, draftId, 'the same judge, completed');
      assert.deepEqual(
        body.evaluator_details.map((d: any) => d.name),
        ['Helpfulness', 'Politeness', 'Citation Format'],
      );
      assert.equal(body.judge.stage, 'answer generation');
      assert.equal(body.judge.intent, PIPELINE_INTENT);
      assert.deepEqual(body.judge.generation, { status: 'complete', context_aware: false, answers: { tone: 'Formal', jurisdiction: 'US federal law' }, open_questions: [] });
      assert.deepEqual(
        rig.fake.requests.map((r) => r.toolName),
        ['assess_context', 'design_judge'],
        'no stage question when --stage is given',
      );
      assert.equal(rig.fake.pending, 0);
    });

    test('answered on stdin (TRIBUNAL_INTERACTIVE=1): pick a stage by number, answer each question, the judge is printed', async () => {
      rig.fake.resetStats();
      rig.fake.enqueueFor('identify_stages', stagesAnswer('classification', 'retrieval', 'answer generation'));
      rig.fake.enqueueFor(
        'assess_context',
        contextAnswer([
          ['tone', 'How formal should answers be?'],
          ['jurisdiction', 'Which jurisdiction applies?'],
        ]),
      );
      rig.fake.enqueueFor('design_judge', designAnswer({ name: 'Piped judge', evaluators: [newEvaluator('Citation Style')] }));
      const r = await rig.cli(['judges', 'generate', PIPELINE_INTENT], { env: { TRIBUNAL_INTERACTIVE: '1' }, input: '3\nVery formal\nUK law\n' });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /1\. classification\n\s+2\. retrieval\n\s+3\. answer generation/);
      assert.match(r.stderr, /How formal should answers be\?/);
      assert.match(r.stdout, /^Generated judge Piped judge \(jdg_[0-9a-f]{32}\)/);
      assert.match(r.stdout, /Citation Style\s+evl_[0-9a-f]{32}\s+custom/);
      assert.match(r.stdout, /stage:\s+answer generation/);
      assert.deepEqual(
        rig.fake.requests.map((q) => q.toolName),
        ['identify_stages', 'assess_context', 'design_judge'],
      );
      // The second call re-ran generation on the draft with both answers.
      assert.match(rig.fake.requests[2].prompt, /Very formal/);
      assert.match(rig.fake.requests[2].prompt, /UK law/);

      // Input that ends before an answer: exit 9, not a hang.
      rig.fake.enqueueFor('identify_stages', stagesAnswer('classification', 'answer generation'));
      const cut = await rig.cli(['judges', 'generate', PIPELINE_INTENT], { env: { TRIBUNAL_INTERACTIVE: '1' }, input: '' });
      assertOneLineError(cut, 9, /no stage chosen/);
    });

    test('on a real terminal (a pseudo-terminal through script(1)): asks, reads the answers, succeeds', {
      skip: !fs.existsSync('/usr/bin/script') && 'script(1) is not installed',
    }, async () => {
      rig.fake.resetStats();
      rig.fake.enqueueFor('identify_stages', stagesAnswer('classification', 'answer generation'));
      rig.fake.enqueueFor('assess_context', contextAnswer([['tone', 'How formal should answers be?']]));
      rig.fake.enqueueFor('design_judge', designAnswer({ name: 'Terminal judge' }));
      const { spawn } = await import('node:child_process');
      const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
      const command = [process.execPath, path.join(ROOT, 'bin/tribunal.js'), 'judges', 'generate', PIPELINE_INTENT].map(quote).join(' ');
      const child = spawn('script', ['-qfec', command, '/dev/null'], { env: { ...process.env, ...rig.env, TRIBUNAL_INTERACTIVE: '' }, stdio: ['pipe', 'pipe', 'pipe'] });
      let screen = '';
      const answered = new Set<string>();
      const answer = (prompt: RegExp, text: string) => {
        if (!answered.has(prompt.source) && prompt.test(screen)) {
          answered.add(prompt.source);
          child.stdin.write(`${text}\r`);
        }
      };
      child.stdout.setEncoding('utf8').on('data', (d: string) => {
        screen += d;
        answer(/Which stage should the judge evaluate\?/, 'answer generation');
        answer(/How formal should answers be\?\s*\r?\n> /, 'Formal');
      });
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      const code = await new Promise<number | null>((r) => child.on('close', (c) => r(c)));
      clearTimeout(timer);
      assert.equal(code, 0, screen);
      assert.match(screen, /Generated judge Terminal judge/);
      assert.equal(answered.size, 2, 'both questions were asked on the terminal');
      assert.match(rig.fake.requests[1].prompt, /answer generation/);
      assert.match(rig.fake.requests[2].prompt, /Formal/);
    });
  });
});
