// issue 26 item 11: what a new user met at the command line. The real `tribunal` command in a child
// process against a real server judging with the fake model: `batch results | head -1` ends cleanly,
// `--limit`, a missing input named by its flag, a file's final newline, re-annotating, and `judges get`
// within 120 columns.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { ROOT, startCliRig, type CliResult, type CliRig } from './helpers/cli.ts';
import { toolAnswer } from './helpers/fake-anthropic.ts';
import { cleanEnv, tempDir } from './helpers/server.ts';

let rig: CliRig;
const ok = (r: CliResult) => {
  assert.equal(r.code, 0, `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r;
};

before(async () => {
  rig = await startCliRig({ TRIBUNAL_RATE_LIMIT: '100000' });
  rig.fake.respondWith(() => toolAnswer({ justification: 'fine', score: 0.7 }));
});
after(() => rig?.close());

async function finishedBatch(n: number): Promise<string> {
  const judge = await rig.server.request('POST', '/v1/judges/', { key: rig.key, body: { name: `pipe judge ${n}`, intent: 'Support answers.', evaluator_ids: ['Clarity'] } });
  assert.equal(judge.status, 201, JSON.stringify(judge.body));
  const items = Array.from({ length: n }, (_, i) => ({ request: `question ${i}`, response: `answer ${i} ${'x'.repeat(200)}` }));
  const started = await rig.server.request('POST', `/v1/judges/${judge.body.id}/batch-execute/`, { key: rig.key, body: { items } });
  assert.equal(started.status, 202, JSON.stringify(started.body));
  const id = started.body.batch_execution_id;
  for (;;) {
    const b = await rig.server.request('GET', `/v1/judges/batch-executions/${id}/`, { key: rig.key });
    if (b.body.status === 'completed') return id;
    assert.ok(b.body.status === 'running' || b.body.status === 'queued', JSON.stringify(b.body));
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** `tribunal ARGS | head -1` in bash with pipefail: the pipeline's status is tribunal's. */
function pipeToHead(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const quoted = args.map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const child = spawn('bash', ['-o', 'pipefail', '-c', `"${process.execPath}" bin/tribunal.js ${quoted} | head -1`], { cwd: ROOT, env: cleanEnv(rig.env) });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

test('batch results | head -1 ends with exit 0 and no "error: EPIPE"; --limit N writes N rows', async () => {
  const id = await finishedBatch(450);
  const piped = await pipeToHead(['batch', 'results', id]);
  assert.equal(piped.code, 0, piped.stderr);
  assert.doesNotMatch(piped.stderr, /EPIPE|error/);
  assert.equal(JSON.parse(piped.stdout.trim()).position, 0);
  // A human listing through a pipe as well (console output, not a direct write).
  const listed = await pipeToHead(['logs', 'list', '--batch', id, '--all']);
  assert.equal(listed.code, 0, listed.stderr);
  assert.doesNotMatch(listed.stderr, /EPIPE|error/);

  const three = ok(await rig.cli(['batch', 'results', id, '--limit', '3']));
  const lines = three.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.deepEqual(
    lines.map((l) => l.position),
    [0, 1, 2],
  );
  const out = path.join(tempDir('cli-first-hour-'), 'rows.jsonl');
  const written = ok(await rig.cli(['batch', 'results', id, '--limit', '250', '--out', out]));
  assert.match(written.stderr, /Wrote 250 row\(s\)/);
  assert.equal(fs.readFileSync(out, 'utf8').trim().split('\n').length, 250);
  // issue 26 item 6: batch list names the judge (the ids are in --json).
  const listed2 = ok(await rig.cli(['batch', 'list']));
  assert.match(listed2.stdout, new RegExp(`${id}.*pipe judge 450.*\\(items\\)`));
  const bad = await rig.cli(['batch', 'results', id, '--limit', '0']);
  assert.equal(bad.code, 2, bad.stderr);
  assert.match(bad.stderr, /limit/);
});

test('judges run without contexts names the --context flag, not the REST field', async () => {
  const judge = await rig.server.request('POST', '/v1/judges/', {
    key: rig.key,
    body: { name: 'grounded cli judge', intent: 'Grounded answers.', evaluator_ids: ['Faithfulness'] },
  });
  assert.equal(judge.status, 201, JSON.stringify(judge.body));
  for (const group of ['judges', 'evaluators']) {
    const r = await rig.cli([group, 'run', group === 'judges' ? 'grounded cli judge' : 'Faithfulness', '--request', 'q', '--response', 'a']);
    assert.equal(r.code, 7, r.stderr);
    assert.match(r.stderr, /--context <text>/);
    assert.doesNotMatch(r.stderr, /`contexts`/);
  }
  // --json keeps the server's own problem (its field names) for programs.
  const json = await rig.cli(['judges', 'run', 'grounded cli judge', '--request', 'q', '--response', 'a', '--json']);
  assert.equal(json.code, 7);
});

test('compare-responses --a file.txt sends the text without the final newline', async () => {
  const dir = tempDir('cli-first-hour-');
  fs.writeFileSync(path.join(dir, 'a.txt'), 'First answer, from a file.\n');
  fs.writeFileSync(path.join(dir, 'b.txt'), 'Second answer\n\n');
  rig.fake.respondWith(() => toolAnswer({ justification: 'A reads better.', preference: 'A' }));
  const r = ok(await rig.cli(['compare-responses', '--evaluator', 'Clarity', '--request', 'q', '--a', path.join(dir, 'a.txt'), '--b', path.join(dir, 'b.txt'), '--json']));
  const log = await rig.server.request('GET', `/v1/execution-logs/${JSON.parse(r.stdout).execution_log_id}/`, { key: rig.key });
  assert.equal(log.status, 200, JSON.stringify(log.body));
  const sent = JSON.stringify(log.body);
  assert.ok(sent.includes('"First answer, from a file."'), sent.slice(0, 800));
  // Only the one final newline goes: a blank line the file ends with is the author's.
  assert.ok(sent.includes('"Second answer\\n"'), sent.slice(0, 800));
  rig.fake.respondWith(() => toolAnswer({ justification: 'fine', score: 0.7 }));
});

test('annotate again with a new score clears the earlier note and names the evaluator', async () => {
  const run = await rig.server.request('POST', '/v1/evaluators/Clarity/execute/', { key: rig.key, body: { request: 'q', response: 'a' } });
  assert.equal(run.status, 200, JSON.stringify(run.body));
  const logId = run.body.execution_log_id;
  const first = ok(await rig.cli(['annotate', logId, '--evaluator', 'Clarity', '--score', '0.2', '--note', 'too vague']));
  assert.match(first.stdout, /^Recorded annotation \S+: Clarity should score 0\.2 \(too vague\)\./);
  const second = ok(await rig.cli(['annotate', logId, '--evaluator', 'Clarity', '--score', '0.8']));
  assert.match(second.stdout, /^Updated annotation \S+: Clarity should score 0\.8\.$/m);
  const stored = await rig.server.request('GET', `/v1/annotations/?execution_log_id=${logId}`, { key: rig.key });
  assert.equal(stored.body.results.length, 1);
  assert.equal(stored.body.results[0].score, 0.8);
  assert.equal(stored.body.results[0].note, null);
});

test('judges get fits a 120-column terminal', async () => {
  const long = 'Checks that every support answer is grounded in the retrieved policy documents and cites them, '.repeat(3);
  const judge = await rig.server.request('POST', '/v1/judges/', {
    key: rig.key,
    body: { name: 'wide judge', intent: long, evaluator_ids: ['Faithfulness', 'Answer Relevance', 'Clarity', 'Conciseness'] },
  });
  assert.equal(judge.status, 201, JSON.stringify(judge.body));
  for (const columns of ['120', '80']) {
    const r = ok(await rig.cli(['judges', 'get', 'wide judge'], { env: { COLUMNS: columns } }));
    const wide = r.stdout.split('\n').filter((l) => l.length > Number(columns));
    assert.deepEqual(wide, [], `lines over ${columns} columns:\n${r.stdout}`);
    assert.match(r.stdout, /Answer Relevance/);
    assert.match(r.stdout, /intent:\s+Checks that every support answer/);
  }
});

test("judges list: the caller's own by default; --public adds others' public ones with OWNER", async () => {
  // Another organization (a demo user) with a public judge named like one of ours.
  const other = await rig.server.demoUser();
  const theirs = await rig.server.request('POST', '/v1/judges/', { key: other.api_key, body: { name: 'Support answers', intent: 'Theirs.', evaluator_ids: ['Clarity'] } });
  assert.equal(theirs.status, 201, JSON.stringify(theirs.body));
  const ours = await rig.server.request('POST', '/v1/judges/', { key: rig.key, body: { name: 'Support answers', intent: 'Ours.', evaluator_ids: ['Clarity'] } });
  assert.equal(ours.status, 201, JSON.stringify(ours.body));
  const own = ok(await rig.cli(['judges', 'list', '--all']));
  assert.match(own.stdout, new RegExp(ours.body.id));
  assert.doesNotMatch(own.stdout, new RegExp(theirs.body.id));
  const all = ok(await rig.cli(['judges', 'list', '--public', '--all']));
  assert.match(all.stdout, /OWNER/);
  assert.match(all.stdout, new RegExp(`${ours.body.id}.*Support answers.*\\byou\\b`));
  assert.match(all.stdout, new RegExp(`${theirs.body.id}.*Support answers.*another org`));
  const evaluators = ok(await rig.cli(['evaluators', 'list', '--search', 'Clarity']));
  assert.match(evaluators.stdout, /preset_clarity/);
});

test('a full non-blocking pipe (EAGAIN) or a partial write never loses output: writeAllSync waits and goes on', async () => {
  const { writeAllSync } = await import('../src/cli/output.ts');
  const fs = (await import('node:fs')).default;
  const real = fs.writeSync;
  const written: Buffer[] = [];
  let calls = 0;
  (fs as { writeSync: unknown }).writeSync = (_fd: number, data: Buffer) => {
    calls++;
    if (calls <= 2) throw Object.assign(new Error('EAGAIN: resource temporarily unavailable, write'), { code: 'EAGAIN' });
    const n = calls === 3 ? 4 : data.length; // then a partial write of 4 bytes
    written.push(Buffer.from(data.subarray(0, n)));
    return n;
  };
  try {
    writeAllSync(99, '{"row":1}\n');
  } finally {
    (fs as { writeSync: unknown }).writeSync = real;
  }
  assert.equal(Buffer.concat(written).toString(), '{"row":1}\n');
  assert.equal(calls, 4);
});
