// Conversations through every door: REST execute, MCP run_judge/run_evaluator (the SDK client),
// with the refusals (both kinds of input, empty turns, a trailing non-assistant turn, unknown roles,
// oversized conversations), requires_turns and requires_request with turns, the degenerate rule on
// the judged turn, and the conversation presets run against the fake. Runs on both stores
// (TRIBUNAL_TEST_STORE=postgres).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadPresets } from '../src/domain/presets.ts';
import { toolAnswer } from './helpers/fake-anthropic.ts';
import { evaluatorBody, startScoringRig, type ScoringRig } from './helpers/execute.ts';
import { connectMcp, type McpTestClient } from './helpers/mcp-client.ts';

let rig: ScoringRig;
let mcp: McpTestClient;
before(async () => {
  rig = await startScoringRig({ TRIBUNAL_MAX_TURNS: '20', TRIBUNAL_MAX_CONVERSATION: '2000' });
  mcp = await connectMcp(rig.server.url, rig.key);
});
after(async () => {
  await mcp.close();
  await rig.close();
});

const CHAT = [
  { role: 'user', content: 'Can I bring my dog to the Harbour Hotel?' },
  { role: 'assistant', content: 'Yes, dogs under 15 kg are welcome for a 20 EUR fee per night.' },
  { role: 'user', content: 'Mine is 12 kg. Book it then.' },
  { role: 'assistant', content: 'Done: one room with your dog, 20 EUR per night added.' },
];

const CONVERSATION_PRESETS = loadPresets().filter((p) => p.requires_turns);

describe('REST', () => {
  test('turns score the last assistant turn; the log keeps turns, system prompt and session', async () => {
    const evaluator = await rig.createEvaluator(evaluatorBody());
    rig.fake.resetStats();
    rig.fake.enqueue(toolAnswer({ justification: 'Answers "Book it then." by booking.', score: 0.9 }));
    const res = await rig.post(`/v1/evaluators/${evaluator.id}/execute/`, { turns: CHAT, system_prompt: 'You book hotels.', session_id: 's-1', user_id: 'u-1' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.score, 0.9);
    const prompt: string = rig.fake.requests[0].body.messages[0].content;
    assert.match(prompt, /<response_[0-9a-f]{24} number="4" role="assistant">\nDone: one room with your dog/);
    assert.match(prompt, /<turn_[0-9a-f]{24} number="3" role="user">\nMine is 12 kg\. Book it then\./);
    const log = (await rig.get(`/v1/execution-logs/${res.body.execution_log_id}/`)).body;
    assert.deepEqual(log.turns, CHAT);
    assert.equal(log.system_prompt, 'You book hotels.');
    assert.equal(log.session_id, 's-1');
    assert.equal(log.response, CHAT[3].content);
  });

  test('both turns and request/response is a 400 naming both', async () => {
    const evaluator = await rig.createEvaluator(evaluatorBody());
    rig.fake.resetStats();
    const res = await rig.post(`/v1/evaluators/${evaluator.id}/execute/`, { turns: CHAT, request: 'q', response: 'a' });
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'validation_error');
    assert.match(res.body.detail, /either `turns` or `request`\/`response`, not both/);
    assert.deepEqual(res.body.errors.map((e: { field: string }) => e.field).sort(), ['request', 'response', 'turns']);
    assert.equal(rig.fake.requests.length, 0);
  });

  const refusals: Array<[string, unknown, RegExp, string]> = [
    ['neither response nor turns', { request: 'q' }, /Nothing to evaluate/, 'response'],
    ['empty turns', { turns: [] }, /turns is empty/, 'turns'],
    ['no assistant turn', { turns: [{ role: 'user', content: 'hi' }] }, /no assistant turn/, 'turns'],
    ["a last turn that is not the assistant's", { turns: [...CHAT, { role: 'user', content: 'thanks' }] }, /the last turn \(turn 5\) is a user turn/, 'turns.4.role'],
    ['an unknown role', { turns: [{ role: 'robot', content: 'x' }, CHAT[1]] }, /role must be one of user, assistant, tool, system/, 'turns.0.role'],
    [
      'tool calls on a user turn',
      { turns: [{ role: 'user', content: 'x', tool_calls: [{ name: 't', arguments: {} }] }, CHAT[1]] },
      /only assistant turns call tools/,
      'turns.0.tool_calls',
    ],
    ['too many turns', { turns: Array.from({ length: 21 }, (_, i) => (i % 2 ? CHAT[1] : CHAT[0])) }, /21 turns; the limit is 20 \(TRIBUNAL_MAX_TURNS\)/, 'turns'],
    [
      'a conversation over the character limit, though every turn is small',
      { turns: [...Array.from({ length: 5 }, () => ({ role: 'user', content: 'x'.repeat(390) })), CHAT[1]], system_prompt: 'y'.repeat(100) },
      /the limit is 2000 \(TRIBUNAL_MAX_CONVERSATION\)/,
      'turns',
    ],
  ];
  for (const [what, body, detail, field] of refusals) {
    test(`refuses ${what} with a clear 400, before any model call`, async () => {
      const evaluator = await rig.createEvaluator(evaluatorBody());
      rig.fake.resetStats();
      const res = await rig.post(`/v1/evaluators/${evaluator.id}/execute/`, body);
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.equal(res.body.code, 'validation_error');
      assert.match(res.body.detail, detail);
      assert.ok(
        res.body.errors.some((e: { field: string }) => e.field === field),
        JSON.stringify(res.body.errors),
      );
      assert.equal(rig.fake.requests.length, 0);
    });
  }

  test('requires_turns: a request/response run is a named missing_field; an evaluator that judges the whole conversation accepts a trailing turn', async () => {
    const whole = await rig.createEvaluator(evaluatorBody({ name: 'Whole conversation', requires_turns: true }));
    const missing = await rig.post(`/v1/evaluators/${whole.id}/execute/`, { request: 'q', response: 'a' });
    assert.equal(missing.status, 400);
    assert.equal(missing.body.code, 'missing_field');
    assert.match(missing.body.detail, /evaluator Whole conversation needs `turns`/);
    assert.deepEqual(
      missing.body.errors.map((e: { field: string }) => e.field),
      ['turns'],
    );

    rig.fake.resetStats();
    const trailing = await rig.post(`/v1/evaluators/${whole.id}/execute/`, { turns: [...CHAT, { role: 'user', content: 'Thanks!' }] });
    assert.equal(trailing.status, 200, JSON.stringify(trailing.body));
    const prompt: string = rig.fake.requests[0].body.messages[0].content;
    assert.match(prompt, /The turns after the response:\n<later_turns_[0-9a-f]{24}>\n<turn_[0-9a-f]{24} number="5" role="user">\nThanks!/);

    // In a judge with an evaluator that judges only the last turn, the trailing turn is refused and the evaluator named.
    const strict = await rig.createEvaluator(evaluatorBody({ name: 'Last turn only' }));
    const judge = await rig.createJudge({ name: 'Mixed', intent: 'x', evaluator_ids: [whole.id, strict.id] });
    const refused = await rig.post(`/v1/judges/${judge.id}/execute/`, { turns: [...CHAT, { role: 'user', content: 'Thanks!' }] });
    assert.equal(refused.status, 400);
    assert.match(refused.body.detail, /Last turn only does not/);
  });

  test('with turns, the conversation before the judged turn satisfies requires_request', async () => {
    const needsRequest = await rig.createEvaluator(evaluatorBody({ requires_request: true }));
    const ok = await rig.post(`/v1/evaluators/${needsRequest.id}/execute/`, { turns: CHAT });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    const alone = await rig.post(`/v1/evaluators/${needsRequest.id}/execute/`, { turns: [CHAT[1]] });
    assert.equal(alone.status, 400);
    assert.equal(alone.body.code, 'missing_field');
  });

  test('a degenerate last assistant turn scores 0 without a model call; one that calls tools is judged', async () => {
    const evaluator = await rig.createEvaluator(evaluatorBody());
    rig.fake.resetStats();
    const res = await rig.post(`/v1/evaluators/${evaluator.id}/execute/`, { turns: [CHAT[0], { role: 'assistant', content: 'Answer:' }] });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.score, 0);
    assert.equal(res.body.evaluator_results[0].degenerate, true);
    assert.equal(rig.fake.requests.length, 0);
    const calling = await rig.post(`/v1/evaluators/${evaluator.id}/execute/`, {
      turns: [CHAT[0], { role: 'assistant', content: '', tool_calls: [{ name: 'check_pet_policy', arguments: '{"hotel": "Harbour"}' }] }],
    });
    assert.equal(calling.status, 200);
    assert.equal(calling.body.evaluator_results[0].degenerate, false);
    assert.equal(rig.fake.requests.length, 1);
  });

  test('the conversation presets run against the fake, as a judge and one by one', async () => {
    const judge = await rig.createJudge({ name: 'Conversation presets', intent: 'x', evaluator_ids: CONVERSATION_PRESETS.map((p) => p.id) });
    rig.fake.resetStats();
    const res = await rig.post(`/v1/judges/${judge.id}/execute/`, {
      turns: [
        { role: 'user', content: 'Is the Harbour Hotel dog friendly?' },
        { role: 'assistant', content: '', tool_calls: [{ id: 'c1', name: 'get_hotel_policy', arguments: { hotel: 'Harbour Hotel' } }] },
        { role: 'tool', tool_call_id: 'c1', name: 'get_hotel_policy', content: 'Dogs under 15 kg, 20 EUR per night.' },
        { role: 'assistant', content: 'Yes: dogs under 15 kg, for 20 EUR per night.' },
      ],
      system_prompt: 'You are the Harbour Hotel booking assistant.',
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(
      res.body.evaluator_results.map((r: { evaluator_id: string }) => r.evaluator_id),
      CONVERSATION_PRESETS.map((p) => p.id),
    );
    assert.equal(rig.fake.requests.length, CONVERSATION_PRESETS.length);
    for (const p of CONVERSATION_PRESETS) {
      const sent = rig.fake.requests.find((r) => r.system.includes(`Name: ${p.name}\n`));
      assert.ok(sent, `${p.name} was not sent`);
      // Each preset's demonstrations reach the model as fenced conversations, in the static system prompt.
      assert.equal((sent.system.match(/<example_[0-9a-f]{24} number="\d">\n/g) ?? []).length, p.demonstrations.length);
      assert.ok(sent.body.messages[0].content.includes('get_hotel_policy'));
    }
    // A run without turns names every conversation preset as missing turns.
    const missing = await rig.post(`/v1/judges/${judge.id}/execute/`, { request: 'q', response: 'a' });
    assert.equal(missing.status, 400);
    assert.equal(missing.body.errors.length, CONVERSATION_PRESETS.length);
  });
});

describe('MCP (SDK client)', () => {
  test('run_evaluator and run_judge take turns and system_prompt', async () => {
    rig.fake.enqueue(toolAnswer({ justification: 'Keeps the "12 kg" in mind.', score: 0.8 }));
    const one = await mcp.call('run_evaluator', { evaluator_name: 'Knowledge Retention', turns: CHAT, session_id: 'mcp-session' });
    assert.equal(one.isError, undefined, one.text);
    assert.equal(one.json.score, 0.8);
    const log = await mcp.call('get_execution_log', { log_id: one.json.execution_log_id });
    assert.deepEqual(log.json.turns, CHAT);
    assert.equal(log.json.session_id, 'mcp-session');

    const judge = await rig.createJudge({ name: 'MCP conversation', intent: 'x', evaluator_ids: ['preset_turn_relevance', 'preset_role_adherence'] });
    const run = await mcp.call('run_judge', { judge_id: judge.id, turns: CHAT, system_prompt: 'You book hotels.' });
    assert.equal(run.isError, undefined, run.text);
    assert.equal(run.json.evaluator_results.length, 2);
  });

  test('refusals are tool errors that say what to fix', async () => {
    const both = await mcp.call('run_evaluator', { evaluator_name: 'Turn Relevance', turns: CHAT, response: 'a' });
    assert.equal(both.isError, true);
    assert.match(both.text, /either `turns` or `request`\/`response`, not both/);
    const missing = await mcp.call('run_evaluator', { evaluator_name: 'Turn Relevance', request: 'q', response: 'a' });
    assert.equal(missing.isError, true);
    assert.match(missing.text, /needs `turns`/);
  });
});

describe('sessions and users in the logs', () => {
  test('session_id filters the logs; session-ids and user-ids list the known values by prefix, a page at a time', async () => {
    // A fresh organization, so only this test's runs are listed.
    const demo = await rig.server.demoUser();
    const as = (method: string, path: string, body?: unknown) => rig.server.request(method, path, { key: demo.api_key, body });
    const runs: Array<[string, string]> = [
      ['chat-b', 'user 1'],
      ['chat-a', 'user 2'],
      ['chat-b', 'user 1'],
      ['other_%', 'admin'],
      ['chat-c', 'user 3'],
    ];
    const ids: string[] = [];
    for (const [session_id, user_id] of runs) {
      const res = await as('POST', '/v1/evaluators/preset_turn_relevance/execute/', { turns: CHAT, session_id, user_id });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      ids.push(res.body.execution_log_id);
    }
    const session = await as('GET', '/v1/execution-logs/?session_id=chat-b');
    assert.deepEqual(
      session.body.results.map((l: { id: string }) => l.id),
      [ids[2], ids[0]],
      'newest first, only that session',
    );
    const user = await as('GET', '/v1/execution-logs/?user_id=user%202');
    assert.deepEqual(
      user.body.results.map((l: { id: string }) => l.id),
      [ids[1]],
    );

    const all = await as('GET', '/v1/execution-logs/session-ids/');
    assert.equal(all.status, 200, JSON.stringify(all.body));
    assert.deepEqual(all.body, { results: ['chat-a', 'chat-b', 'chat-c', 'other_%'], next_cursor: null });
    // LIKE's own wildcards in the prefix match only themselves.
    assert.deepEqual((await as('GET', '/v1/execution-logs/session-ids/?starts_with=other_')).body.results, ['other_%']);
    assert.deepEqual((await as('GET', '/v1/execution-logs/session-ids/?starts_with=%25')).body.results, []);
    const first = await as('GET', '/v1/execution-logs/session-ids/?starts_with=chat-&limit=2');
    assert.deepEqual(first.body.results, ['chat-a', 'chat-b']);
    assert.ok(first.body.next_cursor);
    const second = await as('GET', `/v1/execution-logs/session-ids/?starts_with=chat-&limit=2&cursor=${first.body.next_cursor}`);
    assert.deepEqual(second.body, { results: ['chat-c'], next_cursor: null });
    assert.deepEqual((await as('GET', '/v1/execution-logs/user-ids/?starts_with=user')).body.results, ['user 1', 'user 2', 'user 3']);

    const bad = await as('GET', '/v1/execution-logs/session-ids/?cursor=bm9wZQ');
    assert.equal(bad.status, 400);
    assert.equal(bad.body.code, 'validation_error');
    // Another organization sees none of them.
    assert.deepEqual((await rig.get('/v1/execution-logs/session-ids/?starts_with=other_')).body.results, []);
    // The log id route still serves ids.
    assert.equal((await as('GET', `/v1/execution-logs/${ids[0]}/`)).body.session_id, 'chat-b');
  });

  test('an over-long session_id or user_id is refused before any model call', async () => {
    rig.fake.resetStats();
    for (const field of ['session_id', 'user_id']) {
      const res = await rig.post('/v1/evaluators/preset_turn_relevance/execute/', { turns: CHAT, [field]: 'x'.repeat(201) });
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.match(res.body.detail, new RegExp(`${field} is at most 200 characters`));
    }
    assert.equal(rig.fake.requests.length, 0);
  });
});
