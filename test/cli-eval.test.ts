// tribunal eval end to end: the real CLI in a child process, a real server, the fake judge model.
// Datasets with bad rows, CSV, the summary and the --fail-under gate, 429 retries, an interrupted
// and resumed run that scores no row twice, and a server that stops mid-run.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { toolAnswer, type FakeRequest } from './helpers/fake-anthropic.ts';
import { ROOT, runCli, spawnCli, startCliRig, type CliResult, type CliRig } from './helpers/cli.ts';
import { tempDir } from './helpers/server.ts';
import { until } from './helpers/wait.ts';

const readLines = (file: string) =>
  fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));

/** Accuracy scores 0.9; Tone scores 0.2 on responses that contain "rude", else 0.8. */
function scorer(req: FakeRequest) {
  const text = `${req.system}\n${req.prompt}`;
  if (text.includes('ACCURACY-MARKER')) return toolAnswer({ justification: 'accurate', score: 0.9 });
  return toolAnswer({ justification: 'tone checked', score: /rude/.test(req.prompt) ? 0.2 : 0.8 });
}

async function makeJudge(rig: CliRig, name: string): Promise<string> {
  const ids: string[] = [];
  for (const [evaluator, marker] of [
    [`${name} accuracy`, 'ACCURACY-MARKER'],
    [`${name} tone`, 'TONE-MARKER'],
  ]) {
    const res = await rig.server.request('POST', '/v1/evaluators/', {
      key: rig.key,
      body: { name: evaluator, intent: `Scores ${marker}.`, rubric: `${marker}: HIGH (1) when right, LOW (0) when wrong.` },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    ids.push(res.body.id);
  }
  const judge = await rig.server.request('POST', '/v1/judges/', { key: rig.key, body: { name, intent: 'Batch test judge.', evaluator_ids: ids } });
  assert.equal(judge.status, 201, JSON.stringify(judge.body));
  return judge.body.id;
}

function dataset(n: number, opts: { rudeEvery?: number } = {}): string[] {
  return Array.from({ length: n }, (_, i) =>
    JSON.stringify({
      id: `r${i + 1}`,
      request: `Question ${i + 1}?`,
      response: `Answer ${i + 1}${opts.rudeEvery && (i + 1) % opts.rudeEvery === 0 ? ', you rude person' : '.'}`,
      tags: ['batch'],
    }),
  );
}

const waitFor = (check: () => boolean, ms = 30_000) => until('the condition', check, ms, 20);

async function closedPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

const countLines = (file: string) => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).length : 0);

describe('tribunal eval', () => {
  let rig: CliRig;
  let dir: string;
  let judgeId: string;
  before(async () => {
    rig = await startCliRig();
    rig.fake.respondWith(scorer);
    dir = tempDir('tribunal-eval-');
    judgeId = await makeJudge(rig, 'Batch judge');
  });
  after(async () => {
    await rig.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('JSONL with bad rows: each bad row reported by line and skipped, one result line per row in order, a summary, exit 8', async () => {
    const rows = dataset(36, { rudeEvery: 4 });
    rows.splice(4, 0, '{"response": "unterminated');
    rows.splice(10, 0, JSON.stringify({ request: 'no response here' }));
    rows.splice(20, 0, '');
    rows.splice(25, 0, JSON.stringify({ response: 'x', contexts: 'not a list' }));
    const input = path.join(dir, 'bad.jsonl');
    fs.writeFileSync(input, `${rows.join('\n')}\n`);
    const out = path.join(dir, 'bad-results.jsonl');
    rig.fake.resetStats();

    const r = await rig.cli(['eval', '--judge', 'Batch judge', '--input', input, '--out', out, '--concurrency', '6']);
    assert.equal(r.code, 8, r.stderr);
    assert.match(r.stderr, /^line 5: invalid JSON/m);
    assert.match(r.stderr, /^line 11: missing "response"; skipped$/m);
    assert.match(r.stderr, /^line 26: "contexts" must be an array of strings; skipped$/m);
    assert.match(r.stderr, /^progress: \d+\/39 rows/m, 'plain progress lines without a terminal');
    assert.match(r.stderr, /3 row\(s\) were not scored/);

    const lines = readLines(out);
    assert.equal(lines.length, 39, 'one line per row (the blank line is not a row)');
    assert.deepEqual(
      lines.map((l) => l.row),
      Array.from({ length: 39 }, (_, i) => i + 1),
      'input order',
    );
    const skipped = lines.filter((l) => l.status === 'skipped');
    assert.deepEqual(
      skipped.map((l) => l.line),
      [5, 11, 26],
    );
    const ok = lines.filter((l) => l.status === 'ok');
    assert.equal(ok.length, 36);
    assert.deepEqual(
      ok.map((l) => l.id),
      Array.from({ length: 36 }, (_, i) => `r${i + 1}`),
    );
    assert.ok(ok.every((l) => /^log_[0-9a-f]{32}$/.test(l.execution_log_id) && l.judge_id === judgeId && l.evaluator_results.length === 2));
    assert.equal(new Set(ok.map((l) => l.execution_log_id)).size, 36);
    assert.equal(rig.fake.requests.length, 72, 'each good row scored once per evaluator, bad rows never');
    const log = await rig.server.request('GET', `/v1/execution-logs/${ok[3].execution_log_id}/`, { key: rig.key });
    assert.equal(log.body.response, 'Answer 4, you rude person');
    assert.deepEqual(log.body.tags, ['batch']);

    // The summary: mean, min and pass rate (score >= 0.5 without --fail-under) per evaluator.
    assert.match(r.stdout, /Batch judge accuracy\s+36\s+0\.90\s+0\.90\s+100\.0%/);
    assert.match(r.stdout, /Batch judge tone\s+36\s+0\.65\s+0\.20\s+75\.0%/);
    assert.match(r.stdout, /36 row\(s\) scored, 3 bad row\(s\) skipped/);
  });

  test('--fail-under gates: exit 1 when an evaluator mean is below, 0 when all pass; --json summary', async () => {
    const input = path.join(dir, 'gate.jsonl');
    fs.writeFileSync(input, `${dataset(10, { rudeEvery: 2 }).join('\n')}\n`);
    const failing = await rig.cli(['eval', '--judge', judgeId, '--input', input, '--out', path.join(dir, 'gate-1.jsonl'), '--fail-under', '0.7', '--json']);
    assert.equal(failing.code, 1, failing.stderr);
    const summary = JSON.parse(failing.stdout);
    assert.deepEqual(summary.gate, { threshold: 0.7, passed: false, below: ['Batch judge tone'] });
    const tone = summary.evaluators.find((e: any) => e.evaluator_name === 'Batch judge tone');
    assert.equal(tone.mean, 0.5);
    assert.equal(tone.min, 0.2);
    assert.equal(tone.pass_rate, 0.5, 'pass = score >= the --fail-under threshold');
    assert.equal(summary.scored, 10);
    assert.equal(summary.exit_code, 1);

    const human = await rig.cli(['eval', '--judge', judgeId, '--input', input, '--out', path.join(dir, 'gate-2.jsonl'), '--fail-under', '0.7']);
    assert.equal(human.code, 1);
    assert.match(human.stdout, /Gate FAILED: Batch judge tone mean 0\.50 below 0\.7/);

    const passing = await rig.cli(['eval', '--judge', judgeId, '--input', input, '--out', path.join(dir, 'gate-3.jsonl'), '--fail-under', '0.45']);
    assert.equal(passing.code, 0, passing.stderr);
    assert.match(passing.stdout, /Gate passed/);
  });

  test('CSV: quoted fields with commas, quotes and line breaks; contexts and tags as JSON arrays or |-separated', async () => {
    const input = path.join(dir, 'data.csv');
    fs.writeFileSync(
      input,
      [
        'id,request,response,contexts,expected_output,tags',
        'c1,"Hello, who are you?","I am ""Tribunal"", a judge.","[""doc, one"",""doc two""]",,a|b',
        'c2,Multi-line?,"Line one',
        'line two",ctx one|ctx two,expected,["x"]',
        'c3,No response,,,,',
        'c4,"Too, many",fields,,,,extra',
        'c5,Plain,Plain answer.,,,',
      ].join('\r\n') + '\r\n',
    );
    const out = path.join(dir, 'csv-results.jsonl');
    const r = await rig.cli(['eval', '--judge', judgeId, '--input', input, '--out', out]);
    assert.equal(r.code, 8, r.stderr);
    assert.match(r.stderr, /^line 5: missing "response"; skipped$/m, 'line numbers count the line break inside c2');
    assert.match(r.stderr, /^line 6: has 7 fields; the header has 6; skipped$/m);
    const lines = readLines(out);
    assert.deepEqual(
      lines.map((l) => [l.id, l.status]),
      [
        ['c1', 'ok'],
        ['c2', 'ok'],
        ['c3', 'skipped'],
        ['c4', 'skipped'],
        ['c5', 'ok'],
      ],
    );
    const get = async (id: string) => (await rig.server.request('GET', `/v1/execution-logs/${id}/`, { key: rig.key })).body;
    const c1 = await get(lines[0].execution_log_id);
    assert.equal(c1.request, 'Hello, who are you?');
    assert.equal(c1.response, 'I am "Tribunal", a judge.');
    assert.deepEqual(c1.contexts, ['doc, one', 'doc two']);
    assert.equal(c1.expected_output, null, 'an empty cell is an absent field');
    assert.deepEqual(c1.tags, ['a', 'b']);
    const c2 = await get(lines[1].execution_log_id);
    assert.equal(c2.response, 'Line one\r\nline two');
    assert.deepEqual(c2.contexts, ['ctx one', 'ctx two']);
    assert.equal(c2.expected_output, 'expected');
    assert.deepEqual(c2.tags, ['x']);
  });

  test('interrupted (Ctrl-C) then --resume: finished rows are kept, no row is scored twice; a killed run loses only rows in flight', async () => {
    const input = path.join(dir, 'resume.jsonl');
    fs.writeFileSync(input, `${dataset(30).join('\n')}\n`);
    const out = path.join(dir, 'resume-results.jsonl');
    rig.fake.resetStats();
    rig.fake.setLatency(120);
    try {
      // Ctrl-C: the rows in flight finish and are written, then exit 130.
      const first = spawnCli(['eval', '--judge', judgeId, '--input', input, '--out', out, '--concurrency', '3'], { env: rig.env });
      await waitFor(() => countLines(out) >= 6);
      first.child.kill('SIGINT');
      const stopped = await first.done;
      assert.equal(stopped.code, 130, stopped.stderr);
      assert.match(stopped.stderr, /error: interrupted \(SIGINT\).*--resume/);
      const kept = readLines(out);
      assert.ok(kept.length >= 6 && kept.length < 30, `kept ${kept.length}`);
      assert.ok(kept.every((l) => l.status === 'ok'));
      assert.deepEqual(
        kept.map((l) => l.row),
        [...kept.map((l) => l.row)].sort((a, b) => a - b),
        'rewritten in input order on exit',
      );
      assert.equal(rig.fake.requests.length, kept.length * 2, 'every row the server scored is in the file');

      // No --resume and no --force: refused, the file is untouched.
      const refused = await rig.cli(['eval', '--judge', judgeId, '--input', input, '--out', out]);
      assert.equal(refused.code, 2);
      assert.match(refused.stderr, /already exists: pass --resume/);

      const resumed = await rig.cli(['eval', '--judge', judgeId, '--input', input, '--out', out, '--resume', '--json']);
      assert.equal(resumed.code, 0, resumed.stderr);
      const summary = JSON.parse(resumed.stdout);
      assert.equal(summary.resumed, kept.length);
      assert.equal(summary.scored_now, 30 - kept.length);
      assert.equal(summary.scored, 30);
      const all = readLines(out);
      assert.deepEqual(
        all.map((l) => l.row),
        Array.from({ length: 30 }, (_, i) => i + 1),
      );
      for (const k of kept) assert.equal(all[k.row - 1].execution_log_id, k.execution_log_id, 'finished rows kept as they were');
      assert.equal(rig.fake.requests.length, 60, 'no row scored twice: 30 rows x 2 evaluators');
      const logs = await rig.server.request('GET', `/v1/execution-logs/?judge_id=${judgeId}&tags=batch&limit=200`, { key: rig.key });
      assert.equal(new Set(all.map((l) => l.execution_log_id)).size, 30);
      assert.ok(all.every((l) => logs.body.results.some((g: any) => g.id === l.execution_log_id)));

      // SIGKILL: no chance to finish; only the rows in flight are lost, and --resume re-scores just those.
      const out2 = path.join(dir, 'killed-results.jsonl');
      rig.fake.resetStats();
      const second = spawnCli(['eval', '--judge', judgeId, '--input', input, '--out', out2, '--concurrency', '3'], { env: rig.env });
      await waitFor(() => countLines(out2) >= 6);
      second.child.kill('SIGKILL');
      await second.done;
      const survived = readLines(out2); // appended as each row finished, in completion order
      const before = rig.fake.requests.length;
      await waitFor(() => rig.fake.inFlight === 0);
      const again = await rig.cli(['eval', '--judge', judgeId, '--input', input, '--out', out2, '--resume', '--json']);
      assert.equal(again.code, 0, again.stderr);
      assert.equal(JSON.parse(again.stdout).resumed, survived.length);
      assert.equal(rig.fake.requests.length - before, (30 - survived.length) * 2, 'rows already in the file are not scored again');
      assert.ok(before <= (survived.length + 3) * 2, 'at most the 3 rows in flight were lost');
    } finally {
      rig.fake.setLatency(0);
    }
  });

  test('on a terminal (a pseudo-terminal through script(1)): a redrawn progress bar with rate and time', {
    skip: !fs.existsSync('/usr/bin/script') && 'script(1) is not installed',
  }, async () => {
    const input = path.join(dir, 'tty.jsonl');
    fs.writeFileSync(input, `${dataset(6).join('\n')}\n`);
    const { spawn } = await import('node:child_process');
    const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
    const command = [process.execPath, path.join(ROOT, 'bin/tribunal.js'), 'eval', '--judge', judgeId, '--input', input, '--out', path.join(dir, 'tty-out.jsonl')]
      .map(quote)
      .join(' ');
    const child = spawn('script', ['-qfec', command, '/dev/null'], { env: { ...process.env, ...rig.env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let screen = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (screen += d));
    const code = await new Promise<number | null>((r) => child.on('close', (c) => r(c)));
    assert.equal(code, 0, screen);
    assert.match(screen, /\r\x1b\[2K█+ 6\/6 100%\s+\d+\.\d rows\/s\s+0:0\d/, 'the bar is redrawn in place and ends full');
    assert.doesNotMatch(screen, /^progress: /m, 'no plain progress lines on a terminal');
  });

  test('usage and connection errors: missing flags, unreadable input, unknown judge, wrong URL', async () => {
    const input = path.join(dir, 'small.jsonl');
    const port = await closedPort();
    fs.writeFileSync(input, `${dataset(2).join('\n')}\n`);
    const [noJudge, noFile, badFormat, unknown, wrongUrl] = await Promise.all([
      rig.cli(['eval', '--input', input, '--out', path.join(dir, 'x.jsonl')]),
      rig.cli(['eval', '--judge', judgeId, '--input', path.join(dir, 'nope.jsonl'), '--out', path.join(dir, 'x.jsonl')]),
      rig.cli(['eval', '--judge', judgeId, '--input', path.join(dir, 'data.txt'), '--out', path.join(dir, 'x.jsonl')]),
      rig.cli(['eval', '--judge', 'Nobody', '--input', input, '--out', path.join(dir, 'x.jsonl')]),
      runCli(['eval', '--judge', judgeId, '--input', input, '--out', path.join(dir, 'x.jsonl'), '--url', `http://127.0.0.1:${port}`, '--api-key', rig.key]),
    ]);
    const oneLine = (r: CliResult, code: number, re: RegExp) => {
      assert.equal(r.code, code, r.stderr);
      assert.match(r.stderr, re);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    };
    oneLine(noJudge, 2, /--judge <id or name> is required/);
    oneLine(noFile, 2, /cannot read --input .*nope\.jsonl \(ENOENT\)/);
    oneLine(badFormat, 2, /cannot tell the format/);
    oneLine(unknown, 5, /no judge with the id or exact name "Nobody"/);
    oneLine(wrongUrl, 3, new RegExp(`cannot connect to Tribunal at http://127\\.0\\.0\\.1:${port} \\(connection refused\\)`));
    assert.ok(!fs.existsSync(path.join(dir, 'x.jsonl')), 'nothing written when the run cannot start');
  });
});

describe('tribunal eval against a strict or failing server', () => {
  test('429 from the server: rows wait as Retry-After says and are retried; every row is scored once', async () => {
    const rig = await startCliRig({ TRIBUNAL_RATE_LIMIT: '8', TRIBUNAL_RATE_WINDOW: '1s' });
    const dir = tempDir('tribunal-eval-429-');
    try {
      rig.fake.respondWith(scorer);
      const judgeId = await makeJudge(rig, 'Limited judge');
      const input = path.join(dir, 'd.jsonl');
      fs.writeFileSync(input, `${dataset(14).join('\n')}\n`);
      rig.fake.resetStats();
      const r = await rig.cli(['eval', '--judge', judgeId, '--input', input, '--out', path.join(dir, 'o.jsonl'), '--concurrency', '8', '--json']);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /rate limited by the server: waiting 1 s as it asks \(Retry-After\)/);
      const summary = JSON.parse(r.stdout);
      assert.equal(summary.scored, 14);
      assert.ok(summary.retries > 0);
      assert.equal(rig.fake.requests.length, 28, 'a 429 is refused before any model call, so nothing is scored twice');
    } finally {
      await rig.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('the server stops mid-run: one line, exit 6, the finished rows are kept for --resume', async () => {
    const rig = await startCliRig();
    const dir = tempDir('tribunal-eval-stop-');
    try {
      rig.fake.respondWith(scorer);
      rig.fake.setLatency(80);
      const judgeId = await makeJudge(rig, 'Stopping judge');
      const input = path.join(dir, 'd.jsonl');
      fs.writeFileSync(input, `${dataset(40).join('\n')}\n`);
      const out = path.join(dir, 'o.jsonl');
      const run = spawnCli(['eval', '--judge', judgeId, '--input', input, '--out', out, '--concurrency', '2'], { env: rig.env });
      await waitFor(() => countLines(out) >= 4);
      await rig.server.close();
      const r = await run.done;
      assert.equal(r.code, 6, r.stderr);
      const errors = r.stderr.split('\n').filter((l) => l.startsWith('error: '));
      assert.equal(errors.length, 1, r.stderr);
      assert.match(errors[0], /lost the server during the run: .*\d+ of 40 rows are done in .*--resume/);
      assert.doesNotMatch(r.stderr, /\n\s+at .+:\d+:\d+/);
      const kept = readLines(out);
      assert.ok(kept.length >= 4 && kept.length < 40);
      assert.ok(kept.every((l) => l.status === 'ok'));
    } finally {
      await rig.fake.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
