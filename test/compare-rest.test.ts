// Pairwise comparison over REST (SPEC section 9), end to end on the fake judge model: both orders,
// position bias shown as an inconsistent tie, the comparison log, the rules that need no model, and
// every refusal. TRIBUNAL_TEST_STORE=postgres runs it on PostgreSQL (the comparison lives in the
// log's extra column there).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { serverError, toolAnswer, type FakeRequest } from './helpers/fake-anthropic.ts';
import { evaluatorBody, startScoringRig, type ScoringRig } from './helpers/execute.ts';
import { connectMcp } from './helpers/mcp-client.ts';

/** The response shown first ("A") in a comparison prompt. */
const shownFirst = (req: FakeRequest) => /<response_A_[0-9a-f]{24}[^>]*>\n([\s\S]*?)\n<\/response_A_/.exec(req.prompt)![1];

const GOOD = 'Click "Forgot password" on the sign-in page and follow the e-mailed link.';
const BAD = 'Passwords are important. Have a nice day!';

describe('compare over REST', () => {
  let rig: ScoringRig;
  let fair: any;
  let biased: any;
  let judge: any;
  before(async () => {
    rig = await startScoringRig();
    fair = await rig.createEvaluator(evaluatorBody({ name: 'Fair reset helper' }));
    biased = await rig.createEvaluator(evaluatorBody({ name: 'Always first' }));
    judge = await rig.createJudge({ name: 'Reset replies', intent: 'Judges password reset replies.', evaluator_ids: [fair.id, biased.id] });
  });
  after(() => rig.close());

  // "Fair" prefers whichever position holds the good answer; "Always first" always says "A".
  const responder = (req: FakeRequest) => {
    if (req.system.includes('Name: Always first\n'))
      return toolAnswer({ justification: 'The first one reads better.', preference: 'A' }, { usage: { input_tokens: 1000, output_tokens: 200 } });
    const position = shownFirst(req) === GOOD ? 'A' : 'B';
    return toolAnswer({ justification: `The response in ${position} explains the steps.`, preference: position }, { usage: { input_tokens: 1000, output_tokens: 200 } });
  };

  test('a judge compares in both orders at once: a consistent winner and a position-biased tie', async () => {
    rig.fake.resetStats();
    rig.fake.respondWith(responder);
    rig.fake.setLatency(300);
    try {
      const res = await rig.post(`/v1/judges/${judge.id}/compare/`, { request: 'How do I reset my password?', response_a: BAD, response_b: GOOD, tags: ['ab'] });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const [f, b] = res.body.evaluator_results;
      assert.deepEqual([f.evaluator_id, f.evaluator_name, f.preference, f.consistent], [fair.id, 'Fair reset helper', 'b', true]);
      assert.equal(f.justification, 'The response in A explains the steps.'.replace('A', 'B'));
      assert.deepEqual(
        f.orders.map((o: any) => [o.shown_first, o.preference]),
        [
          ['a', 'b'],
          ['b', 'b'],
        ],
      );
      assert.deepEqual([b.evaluator_id, b.preference, b.consistent], [biased.id, 'tie', false]);
      assert.match(b.justification, /disagreed/);
      assert.deepEqual(
        b.orders.map((o: any) => [o.shown_first, o.preference]),
        [
          ['a', 'a'],
          ['b', 'b'],
        ],
      );
      assert.deepEqual([res.body.preference, res.body.wins_a, res.body.wins_b, res.body.ties], ['b', 0, 1, 1]);
      // Two orders of 1000 in / 200 out at $3/$15 per million: 0.006 each.
      for (const r of res.body.evaluator_results) assert.deepEqual([r.input_tokens, r.output_tokens, r.cost_usd, r.model], [2000, 400, 0.012, 'claude-sonnet-4-5']);
      assert.equal(res.body.cost_usd, 0.024);
      // Four calls, all in flight at once: none waited for another's answer (300 ms each). Counted
      // by the fake rather than timed, so a loaded machine cannot fail it.
      assert.equal(rig.fake.requests.length, 4);
      assert.equal(rig.fake.peakInFlight, 4);
      for (const req of rig.fake.requests) {
        assert.deepEqual(req.body.tool_choice, { type: 'tool', name: 'submit_comparison', disable_parallel_tool_use: true });
        assert.deepEqual(Object.keys(req.body.tools[0].input_schema.properties), ['justification', 'preference']);
      }
      // Each evaluator saw each response first once.
      for (const name of ['Fair reset helper', 'Always first']) {
        const firsts = rig.fake.requests
          .filter((r) => r.system.includes(`Name: ${name}\n`))
          .map(shownFirst)
          .sort();
        assert.deepEqual(firsts, [BAD, GOOD].sort());
      }

      const log = await rig.get(`/v1/execution-logs/${res.body.execution_log_id}/`);
      assert.equal(log.status, 200, JSON.stringify(log.body));
      assert.equal(log.body.type, 'comparison');
      assert.deepEqual([log.body.judge_id, log.body.request, log.body.response, log.body.score, log.body.cost_usd], [judge.id, 'How do I reset my password?', BAD, null, 0.024]);
      assert.deepEqual(log.body.tags, ['ab']);
      assert.equal(log.body.comparison.response_b, GOOD);
      assert.deepEqual([log.body.comparison.preference, log.body.comparison.wins_a, log.body.comparison.wins_b, log.body.comparison.ties], ['b', 0, 1, 1]);
      assert.deepEqual(
        log.body.comparison.evaluators.map((e: any) => [e.evaluator_id, e.preference, e.consistent, e.orders.length]),
        [
          [fair.id, 'b', true, 2],
          [biased.id, 'tie', false, 2],
        ],
      );
      assert.deepEqual(
        log.body.evaluator_results.map((r: any) => [r.evaluator_id, r.score, r.input_tokens]),
        [
          [fair.id, null, 2000],
          [biased.id, null, 2000],
        ],
      );
      // The log filters find it: by judge, by evaluator, by tag.
      for (const q of [`judge_id=${judge.id}`, `evaluator_id=${biased.id}`, 'tags=ab']) {
        const list = await rig.get(`/v1/execution-logs/?${q}`);
        assert.equal(list.status, 200);
        assert.deepEqual(
          list.body.results.map((l: any) => l.id),
          [res.body.execution_log_id],
          q,
        );
      }
    } finally {
      rig.fake.respondWith(null);
      rig.fake.setLatency(0);
    }
  });

  test('one evaluator, by exact name; a malformed answer is asked again; lower-case labels are read', async () => {
    rig.fake.resetStats();
    rig.fake.enqueue(toolAnswer({ justification: 'x', preference: 'first' }));
    rig.fake.respondWith((req) => toolAnswer({ justification: 'Compared.', preference: shownFirst(req) === GOOD ? 'a' : 'b' }));
    try {
      const res = await rig.post(`/v1/evaluators/${encodeURIComponent('Fair reset helper')}/compare/`, { response_a: GOOD, response_b: BAD });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual([res.body.preference, res.body.wins_a, res.body.evaluator_results[0].consistent], ['a', 1, true]);
      assert.equal(rig.fake.requests.length, 3);
      const log = await rig.get(`/v1/execution-logs/${res.body.execution_log_id}/`);
      assert.deepEqual([log.body.type, log.body.evaluator_id, log.body.judge_id, log.body.request], ['comparison', fair.id, null, null]);
    } finally {
      rig.fake.respondWith(null);
    }
  });

  test('rules without a model: a degenerate response loses, two degenerate or identical responses tie', async () => {
    rig.fake.resetStats();
    const cases: Array<[string, string, string, boolean]> = [
      [GOOD, '...', 'a', true],
      ['Thought process:', GOOD, 'b', true],
      ['???', '!!!', 'tie', true],
      [GOOD, GOOD, 'tie', false],
    ];
    for (const [a, b, preference, degenerate] of cases) {
      const res = await rig.post(`/v1/judges/${judge.id}/compare/`, { request: 'Q?', response_a: a, response_b: b });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.preference, preference, `${a} vs ${b}`);
      for (const r of res.body.evaluator_results) {
        assert.deepEqual([r.preference, r.consistent, r.degenerate === true, r.orders.length, r.cost_usd], [preference, true, degenerate, 0, 0]);
        assert.ok(r.justification.length > 10);
      }
    }
    assert.equal(rig.fake.requests.length, 0);
  });

  test('bad input is a clear 4xx before any model call', async () => {
    rig.fake.resetStats();
    const relevance = await rig.post('/v1/evaluators/preset_instruction_following/compare/', { response_a: GOOD, response_b: BAD });
    assert.equal(relevance.status, 400);
    assert.equal(relevance.body.code, 'missing_field');
    assert.match(relevance.body.detail, /request/);
    const empty = await rig.post(`/v1/judges/${judge.id}/compare/`, { request: 'Q?', response_a: '', response_b: BAD });
    assert.equal(empty.status, 400);
    assert.equal(empty.body.code, 'validation_error');
    assert.match(JSON.stringify(empty.body), /response_a is empty/);
    const missing = await rig.post(`/v1/judges/${judge.id}/compare/`, { request: 'Q?', response_a: GOOD });
    assert.equal(missing.status, 400);
    assert.equal(missing.body.code, 'validation_error');
    const mixed = await rig.post(`/v1/judges/${judge.id}/compare/`, {
      response_a: GOOD,
      turns_a: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'a' },
      ],
      turns_b: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'b' },
      ],
    });
    assert.equal(mixed.status, 400);
    assert.equal(mixed.body.code, 'validation_error');
    assert.match(mixed.body.detail, /not a mix: response_a given together with turns_a\/turns_b/);
    const lone = await rig.post(`/v1/judges/${judge.id}/compare/`, {
      turns_a: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'a' },
      ],
    });
    assert.equal(lone.status, 400);
    assert.deepEqual(
      lone.body.errors.map((e: any) => e.field),
      ['turns_b'],
    );
    const differ = await rig.post(`/v1/judges/${judge.id}/compare/`, {
      turns_a: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'a' },
      ],
      turns_b: [
        { role: 'user', content: 'hello' },
        { role: 'assistant', content: 'b' },
      ],
    });
    assert.equal(differ.status, 400);
    assert.match(differ.body.detail, /they differ at turn 1/);
    const trailing = await rig.post(`/v1/judges/${judge.id}/compare/`, {
      turns_a: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'a' },
        { role: 'user', content: 'thanks' },
      ],
      turns_b: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'b' },
      ],
    });
    assert.equal(trailing.status, 400);
    assert.match(trailing.body.detail, /^turns_a: /);
    const noTurnsForTurnEvaluator = await rig.post('/v1/evaluators/preset_turn_relevance/compare/', { request: 'Q?', response_a: GOOD, response_b: BAD });
    assert.equal(noTurnsForTurnEvaluator.status, 400);
    assert.equal(noTurnsForTurnEvaluator.body.code, 'missing_field');
    const unknown = await rig.post('/v1/judges/judge_doesnotexist0000/compare/', { response_a: GOOD, response_b: BAD });
    assert.equal(unknown.status, 404);
    const extra = await rig.post(`/v1/judges/${judge.id}/compare/`, { response_a: GOOD, response_b: BAD, response: 'x' });
    assert.equal(extra.status, 400);
    assert.equal(rig.fake.requests.length, 0);
  });

  test('two conversations sharing their earlier turns: the compared turns are judged, the log keeps both', async () => {
    rig.fake.resetStats();
    rig.fake.respondWith(responder);
    try {
      const before = [{ role: 'user', content: 'How do I reset my password?' }];
      const res = await rig.post(`/v1/judges/${judge.id}/compare/`, {
        system_prompt: 'You are the help desk.',
        turns_a: [...before, { role: 'assistant', content: BAD }],
        turns_b: [...before, { role: 'assistant', content: GOOD }],
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual([res.body.preference, res.body.wins_b, res.body.ties], ['b', 1, 1]);
      assert.equal(rig.fake.requests.length, 4);
      for (const req of rig.fake.requests) {
        assert.match(req.prompt, /<conversation_[0-9a-f]{24}>\n<turn_[0-9a-f]{24} number="1" role="user">\nHow do I reset my password\?/);
        assert.match(req.prompt, /<response_A_[0-9a-f]{24} number="2" role="assistant">\n/);
        assert.match(req.prompt, /<response_B_[0-9a-f]{24} number="2" role="assistant">\n/);
        assert.match(req.prompt, /<system_prompt_[0-9a-f]{24}>\nYou are the help desk\./);
        assert.match(req.system, /alternative versions of the same assistant turn/);
      }
      const log = await rig.get(`/v1/execution-logs/${res.body.execution_log_id}/`);
      assert.deepEqual([log.body.response, log.body.comparison.response_b, log.body.system_prompt], [BAD, GOOD, 'You are the help desk.']);
      assert.equal(log.body.turns.length, 2);
      assert.equal(log.body.comparison.turns_b[1].content, GOOD);
      // MCP reads comparison logs too: the SDK client checks them against get_execution_log's output schema.
      const mcp = await connectMcp(rig.server.url, rig.key);
      try {
        const got = await mcp.call('get_execution_log', { log_id: res.body.execution_log_id });
        assert.ok(!got.isError, got.text);
        assert.deepEqual([got.json.type, got.json.comparison.preference, got.json.comparison.turns_b.length], ['comparison', 'b', 2]);
        const listed = await mcp.call('list_execution_logs', { judge_id: judge.id, limit: 50 });
        assert.ok(!listed.isError, listed.text);
        assert.ok(listed.json.results.some((l: any) => l.type === 'comparison'));
      } finally {
        await mcp.close();
      }
    } finally {
      rig.fake.respondWith(null);
    }
  });

  test('every evaluator failing is a 502 that names the comparison log', async () => {
    rig.fake.resetStats();
    rig.fake.respondWith(() => serverError(400));
    try {
      const res = await rig.post(`/v1/judges/${judge.id}/compare/`, { request: 'Q?', response_a: GOOD, response_b: BAD });
      assert.equal(res.status, 502, JSON.stringify(res.body));
      assert.equal(res.body.code, 'model_unavailable');
      const log = await rig.get(`/v1/execution-logs/${res.body.execution_log_id}/`);
      assert.equal(log.body.type, 'comparison');
      assert.deepEqual(
        log.body.comparison.evaluators.map((e: any) => e.preference),
        [null, null],
      );
      assert.deepEqual([log.body.comparison.wins_a, log.body.comparison.wins_b, log.body.comparison.ties], [0, 0, 0]);
    } finally {
      rig.fake.respondWith(null);
    }
  });
});
