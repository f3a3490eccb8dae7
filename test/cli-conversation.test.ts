// tribunal eval with conversations: JSONL rows with turns and a system prompt, and CSV with turns
// as a JSON column; rows that give both kinds of input, malformed turns, or turns the server
// refuses are reported and skipped, the rest scored. The real CLI in a child process, a real
// server, the fake judge model.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { startCliRig, type CliRig } from './helpers/cli.ts';
import { tempDir } from './helpers/server.ts';

let rig: CliRig;
let dir: string;
let judgeId: string;
before(async () => {
  rig = await startCliRig({ TRIBUNAL_RATE_LIMIT: '100000' });
  dir = tempDir('tribunal-cli-conv-');
  const judge = await rig.server.request('POST', '/v1/judges/', {
    key: rig.key,
    body: { name: 'Chat judge', intent: 'Conversation quality.', evaluator_ids: ['preset_turn_relevance', 'preset_knowledge_retention'] },
  });
  assert.equal(judge.status, 201, JSON.stringify(judge.body));
  judgeId = judge.body.id;
});
after(async () => {
  await rig.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const TURNS = [
  { role: 'user', content: 'Book a table for two, tonight, 8 pm, "near the window".' },
  { role: 'assistant', content: 'Booked: two people at 20:00, window table.' },
];
const readLines = (file: string) =>
  fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
const getLog = async (id: string) => (await rig.server.request('GET', `/v1/execution-logs/${id}/`, { key: rig.key })).body;

test('JSONL rows with turns, a system prompt and a session are scored and logged as conversations', async () => {
  const input = path.join(dir, 'chat.jsonl');
  fs.writeFileSync(
    input,
    [
      JSON.stringify({ id: 't1', turns: TURNS, system_prompt: 'You take restaurant bookings.', session_id: 'sess-9' }),
      JSON.stringify({ id: 't2', turns: TURNS, response: 'both' }),
      JSON.stringify({ id: 't3', turns: [{ role: 'user' }] }),
      JSON.stringify({ id: 't4', turns: [{ role: 'user', content: 'no answer yet' }] }),
    ].join('\n') + '\n',
  );
  const out = path.join(dir, 'chat-results.jsonl');
  const r = await rig.cli(['eval', '--judge', judgeId, '--input', input, '--out', out]);
  assert.match(r.stderr, /^line 2: give either "turns" or "request"\/"response", not both; skipped$/m, r.stderr);
  assert.match(r.stderr, /^line 3: "turns" item 1 must be an object with a "role" and a "content" string; skipped$/m);
  const lines = readLines(out);
  assert.deepEqual(
    lines.map((l) => l.id),
    ['t1', 't2', 't3', 't4'],
  );
  assert.equal(lines[0].status, 'ok', JSON.stringify(lines[0]));
  assert.deepEqual(
    lines.slice(1, 3).map((l) => l.status),
    ['skipped', 'skipped'],
  );
  // The server's own check (no assistant turn to judge) comes back as the row's error.
  assert.notEqual(lines[3].status, 'ok');
  assert.match(JSON.stringify(lines[3]), /no assistant turn/);
  const log = await getLog(lines[0].execution_log_id);
  assert.deepEqual(log.turns, TURNS);
  assert.equal(log.system_prompt, 'You take restaurant bookings.');
  assert.equal(log.session_id, 'sess-9');
});

test('CSV with turns as a JSON column', async () => {
  const input = path.join(dir, 'chat.csv');
  const cell = (v: unknown) => `"${JSON.stringify(v).replace(/"/g, '""')}"`;
  fs.writeFileSync(input, ['id,turns,system_prompt,tags', `c1,${cell(TURNS)},You take bookings.,chat|csv`, 'c2,[not json,,'].join('\n') + '\n');
  const out = path.join(dir, 'chat-csv-results.jsonl');
  const r = await rig.cli(['eval', '--judge', judgeId, '--input', input, '--out', out]);
  assert.match(r.stderr, /^line 3: "turns" is not valid JSON; skipped$/m, r.stderr);
  const lines = readLines(out);
  assert.deepEqual(
    lines.map((l) => [l.id, l.status]),
    [
      ['c1', 'ok'],
      ['c2', 'skipped'],
    ],
  );
  const log = await getLog(lines[0].execution_log_id);
  assert.deepEqual(log.turns, TURNS);
  assert.equal(log.system_prompt, 'You take bookings.');
  assert.deepEqual(log.tags, ['chat', 'csv']);
});

test('logs list --session, logs get shows the conversation, logs sessions --starts-with lists the known sessions', async () => {
  const listed = await rig.cli(['logs', 'list', '--session', 'sess-9', '--json']);
  assert.equal(listed.code, 0, listed.stderr);
  const page = JSON.parse(listed.stdout);
  assert.equal(page.results.length, 1);
  assert.equal(page.results[0].session_id, 'sess-9');

  const shown = await rig.cli(['logs', 'get', page.results[0].id]);
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, /session:\s+sess-9/);
  assert.match(shown.stdout, /\[1 user\] Book a table for two/);
  assert.match(shown.stdout, /\[2 assistant\] Booked: two people at 20:00, window table\./);
  assert.match(shown.stdout, /system prompt:\s+You take restaurant bookings\./);

  const sessions = await rig.cli(['logs', 'sessions', '--starts-with', 'sess-']);
  assert.equal(sessions.code, 0, sessions.stderr);
  assert.deepEqual(sessions.stdout.trim().split('\n'), ['sess-9']);
  const none = await rig.cli(['logs', 'users', '--json']);
  assert.deepEqual(JSON.parse(none.stdout), { results: [], next_cursor: null });
});
