// The judging rules of SPEC section 12 (docs/SCORING.md), end to end over REST and MCP on the fake
// judge model: degenerate responses, declared inputs, not-applicable answers, critical evaluators.
// Where the prompt is concerned the assertions are on the exact bytes the fake received.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { DEGENERATE_OPENERS, degenerateReason } from '../src/engine/degenerate.ts';
import { runScore } from '../src/engine/scoring.ts';
import { toolAnswer, type FakeRequest } from './helpers/fake-anthropic.ts';
import { evaluatorBody, startScoringRig, type ScoringRig } from './helpers/execute.ts';
import { connectMcp } from './helpers/mcp-client.ts';

let rig: ScoringRig;
before(async () => {
  rig = await startScoringRig();
});
after(() => rig.close());
afterEach(() => {
  rig.fake.respondWith(null);
  rig.fake.resetStats();
});

/** Answers each evaluator (told apart by the name in its system prompt) with its own tool input. */
function answerByEvaluator(answers: Record<string, Record<string, unknown>>) {
  rig.fake.respondWith((req: FakeRequest) => {
    const name = /^Name: (.*)$/m.exec(req.system)?.[1] ?? '';
    const input = answers[name];
    if (!input) throw new Error(`no scripted answer for evaluator ${name}`);
    return toolAnswer(input);
  });
}

const promptOf = (name: string) => rig.fake.requests.find((r) => r.system.includes(`Name: ${name}\n`))!.prompt;

describe('degenerate responses', () => {
  test('the rule: no letter or digit, or only openers; a short real answer is not degenerate', () => {
    for (const r of [
      ':',
      '...',
      '  \n ',
      '🙂',
      '—',
      'Thought process:',
      "Let's solve this step by step.",
      'Let’s think step by step',
      'Solution',
      'Answer:',
      '**Final Answer:**',
      'Thought process:\nAnswer:',
      'The answer is',
    ]) {
      assert.ok(degenerateReason(r), `${JSON.stringify(r)} is degenerate`);
    }
    for (const r of ['Yes.', '42', 'No', 'Answer: 42', 'Solution: restart the router.', 'Thought process: the user wants a refund.', 'x']) {
      assert.equal(degenerateReason(r), null, `${JSON.stringify(r)} is not degenerate`);
    }
    // Every listed opener alone is degenerate (the list in docs/SCORING.md is this one).
    for (const opener of DEGENERATE_OPENERS) assert.ok(degenerateReason(`${opener}:`), opener);
  });

  test('long responses: the look at the first words (issue 33) decides as reading the whole text does', () => {
    // The whole-text rule, as the module applied it to every response before.
    const norm = (t: string) =>
      t
        .normalize('NFKC')
        .toLowerCase()
        .replace(/[^\p{L}\p{N}]+/gu, ' ')
        .trim();
    const openers = [...DEGENERATE_OPENERS].sort((a, b) => b.length - a.length);
    const wholeText = (t: string) => {
      if (!/[\p{L}\p{N}]/u.test(t)) return true;
      let rest = norm(t);
      while (rest) {
        const o = openers.find((x) => rest === x || rest.startsWith(`${x} `));
        if (!o) return false;
        rest = rest.slice(o.length).trim();
      }
      return true;
    };
    // Openers and separators only (often degenerate), and the same with words and marks mixed in.
    const openerParts = [...DEGENERATE_OPENERS, ...DEGENERATE_OPENERS.map((o) => o.toUpperCase()), ':', '**', ' ', '\n', '…', 'ﬁnal answer', '—'];
    const parts = [...openerParts, 'Σ', 'e\u0301', 'refund', '42'];
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    let degenerate = 0;
    for (let i = 0; i < 3000; i++) {
      let t = '';
      const n = 4 + (next() % 40);
      const pool = i % 2 === 0 ? openerParts : parts;
      for (let k = 0; k < n; k++) t += pool[next() % pool.length] + (pool === openerParts || next() % 2 ? ' ' : '');
      const expected = wholeText(t);
      if (expected) degenerate++;
      assert.equal(degenerateReason(t) !== null, expected, JSON.stringify(t));
    }
    assert.ok(degenerate > 100, `the sample holds degenerate texts too (${degenerate})`);
  });

  test('score 0 from every evaluator, degenerate: true with the reason, run score 0, no model call; the log keeps it', async () => {
    const a = await rig.createEvaluator(evaluatorBody());
    const b = await rig.createEvaluator(evaluatorBody({ critical: true }));
    const judge = await rig.createJudge({ name: 'Degenerate judge', intent: 'x', evaluator_ids: [a.id, b.id] });
    for (const response of [':', 'Thought process:', "Let's solve this step by step.", 'Solution', 'Answer:']) {
      const res = await rig.post(`/v1/judges/${judge.id}/execute/`, { request: 'What is 6 x 7?', response });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.score, 0, response);
      assert.equal(res.body.cost_usd, 0);
      assert.equal(res.body.evaluator_results.length, 2);
      for (const r of res.body.evaluator_results) {
        assert.equal(r.score, 0);
        assert.equal(r.degenerate, true);
        assert.equal(r.not_applicable, false);
        assert.equal(r.model, null);
        assert.equal(r.input_tokens, 0);
        assert.match(r.justification, /degenerate/);
      }
      assert.deepEqual(
        res.body.evaluator_results.map((r: any) => r.critical),
        [false, true],
      );
      const log = await rig.get(`/v1/execution-logs/${res.body.execution_log_id}/`);
      assert.equal(log.body.score, 0);
      assert.deepEqual(log.body.evaluator_results, res.body.evaluator_results);
    }
    assert.equal(rig.fake.requests.length, 0, 'no model call for a degenerate response');
  });

  test('"Yes." and "42" go to the model', async () => {
    const a = await rig.createEvaluator(evaluatorBody());
    for (const response of ['Yes.', '42']) {
      const res = await rig.post(`/v1/evaluators/${a.id}/execute/`, { request: 'Is it?', response });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.evaluator_results[0].degenerate, false);
      assert.equal(res.body.evaluator_results[0].score, 0.75);
    }
    assert.equal(rig.fake.requests.length, 2);
  });
});

describe('declared inputs', () => {
  test('requires_request: a run without a request is a named missing_field 400 before any model call', async () => {
    const needsRequest = await rig.createEvaluator(evaluatorBody({ requires_request: true }));
    assert.equal(needsRequest.requires_request, true);
    assert.equal(needsRequest.critical, false);
    const judge = await rig.createJudge({ name: 'Needs request', intent: 'x', evaluator_ids: [needsRequest.id] });
    for (const body of [{ response: 'An answer.' }, { response: 'An answer.', request: '  ' }]) {
      const res = await rig.post(`/v1/judges/${judge.id}/execute/`, body);
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.equal(res.body.code, 'missing_field');
      assert.match(res.body.detail, new RegExp(`evaluator ${needsRequest.name} needs \`request\``));
      assert.deepEqual(
        res.body.errors.map((e: any) => e.field),
        ['request'],
      );
    }
    assert.equal(rig.fake.requests.length, 0);
    // Its demonstrations must carry a request too, as they must carry contexts for requires_contexts.
    const demoless = await rig.post('/v1/evaluators/', evaluatorBody({ requires_request: true, demonstrations: [{ response: 'R', score: 1 }] }));
    assert.equal(demoless.status, 400, JSON.stringify(demoless.body));
    assert.deepEqual(
      demoless.body.errors.map((e: any) => e.field),
      ['demonstrations.0.request'],
    );
    // PATCH turns it off again: a new version, and the run goes through.
    const patched = await rig.server.request('PATCH', `/v1/evaluators/${needsRequest.id}/`, { key: rig.key, body: { requires_request: false } });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.equal(patched.body.version, 2);
    assert.equal((await rig.post(`/v1/judges/${judge.id}/execute/`, { response: 'An answer.' })).status, 200);
  });

  test('contexts and expected_output reach only the evaluators that declare them (exact bytes)', async () => {
    const plain = await rig.createEvaluator(
      evaluatorBody({
        name: 'Plain quality',
        // Its demonstration carries contexts and an expected output too: not shown either.
        demonstrations: [{ request: 'Q0', response: 'R0', contexts: ['demo context'], expected_output: 'demo reference', score: 0.3, justification: 'Weak.' }],
      }),
    );
    const grounded = await rig.createEvaluator(evaluatorBody({ name: 'Grounded quality', requires_contexts: true }));
    const reference = await rig.createEvaluator(evaluatorBody({ name: 'Reference quality', requires_expected_output: true }));
    const judge = await rig.createJudge({ name: 'Declared inputs', intent: 'x', evaluator_ids: [plain.id, grounded.id, reference.id] });
    const res = await rig.post(`/v1/judges/${judge.id}/execute/`, { request: 'Q', response: 'R', contexts: ['C1'], expected_output: 'E' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(rig.fake.requests.length, 3);

    const plainPrompt = promptOf('Plain quality');
    const N = /<response_([0-9a-f]{24})>/.exec(plainPrompt)![1];
    // The demonstration is in the static system prompt, without its contexts and expected output either.
    const plainSystem = rig.fake.requests.find((r) => r.system.includes('Name: Plain quality\n'))!.system;
    assert.ok(
      plainSystem.endsWith(
        [
          '# Scored examples',
          "The evaluator's author scored these examples to calibrate the scale. They are not the material to evaluate.",
          `<example_${N} number="1">`,
          `<request_${N}>`,
          'Q0',
          `</request_${N}>`,
          `<response_${N}>`,
          'R0',
          `</response_${N}>`,
          `<justification_${N}>`,
          'Weak.',
          `</justification_${N}>`,
          `<score_${N}>0.3</score_${N}>`,
          `</example_${N}>`,
        ].join('\n'),
      ),
      plainSystem,
    );
    assert.equal(
      plainPrompt,
      [
        '# Material to evaluate',
        `<request_${N}>`,
        'Q',
        `</request_${N}>`,
        `<response_${N}>`,
        'R',
        `</response_${N}>`,
        '',
        'Evaluate the response above with the evaluator "Plain quality". Call submit_evaluation: the justification first (the evidence quoted), then the score from 0 to 1, or not_applicable with score null when the evaluator does not apply.',
      ].join('\n'),
    );
    const g = promptOf('Grounded quality');
    const G = /<response_([0-9a-f]{24})>/.exec(g)![1];
    assert.ok(
      g.includes(`<request_${G}>\nQ\n</request_${G}>\n<contexts_${G}>\n<context_${G} number="1">\nC1\n</context_${G}>\n</contexts_${G}>\n<response_${G}>\nR\n</response_${G}>`),
      g,
    );
    assert.equal(g.includes('expected_output_'), false);
    const r = promptOf('Reference quality');
    const E = /<response_([0-9a-f]{24})>/.exec(r)![1];
    assert.ok(r.includes(`<request_${E}>\nQ\n</request_${E}>\n<expected_output_${E}>\nE\n</expected_output_${E}>\n<response_${E}>\nR\n</response_${E}>`), r);
    assert.equal(r.includes('contexts_'), false);
  });
});

describe('not applicable', () => {
  test('score null, not_applicable: true, a justification, left out of the run score', async () => {
    const cite = await rig.createEvaluator(evaluatorBody({ name: 'Citation check' }));
    const tone = await rig.createEvaluator(evaluatorBody({ name: 'Tone check' }));
    const judge = await rig.createJudge({ name: 'N/A judge', intent: 'x', evaluator_ids: [cite.id, tone.id] });
    answerByEvaluator({
      'Citation check': { justification: 'The answer was never meant to cite anything.', not_applicable: true, score: null },
      'Tone check': { justification: 'Polite and warm: "Happy to help".', score: 0.8 },
    });
    const res = await rig.post(`/v1/judges/${judge.id}/execute/`, { request: 'Hi', response: 'Happy to help.' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const [na, scored] = res.body.evaluator_results;
    assert.equal(na.score, null);
    assert.equal(na.not_applicable, true);
    assert.equal(na.justification, 'The answer was never meant to cite anything.');
    assert.equal(na.error, undefined);
    assert.equal(scored.not_applicable, false);
    assert.equal(res.body.score, 0.8, 'the N/A result is left out of the mean');
    const log = await rig.get(`/v1/execution-logs/${res.body.execution_log_id}/`);
    assert.deepEqual(log.body.evaluator_results[0], na);
    assert.equal(log.body.score, 0.8);
  });

  test('a run where every result is N/A has score null, and MCP accepts it (output schema)', async () => {
    const cite = await rig.createEvaluator(evaluatorBody({ name: 'Citation only' }));
    const judge = await rig.createJudge({ name: 'All N/A judge', intent: 'x', evaluator_ids: [cite.id] });
    answerByEvaluator({ 'Citation only': { justification: 'Nothing here is meant to cite.', not_applicable: true } });
    const res = await rig.post(`/v1/judges/${judge.id}/execute/`, { request: 'Hi', response: 'Hello there.' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.score, null);
    const mcp = await connectMcp(rig.server.url, rig.key);
    try {
      const viaMcp = await mcp.call('run_judge', { judge_id: judge.id, request: 'Hi', response: 'Hello there.' });
      assert.equal(viaMcp.isError, undefined, viaMcp.text);
      assert.equal(viaMcp.json.score, null);
      assert.equal(viaMcp.json.evaluator_results[0].not_applicable, true);
    } finally {
      await mcp.close();
    }
  });

  test('a null score without not_applicable is malformed and asked again', async () => {
    const e = await rig.createEvaluator(evaluatorBody());
    rig.fake.enqueue(toolAnswer({ justification: 'Hmm.', score: null }), toolAnswer({ justification: 'Fine: "ok".', score: 0.6 }));
    const res = await rig.post(`/v1/evaluators/${e.id}/execute/`, { request: 'Q', response: 'ok' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.score, 0.6);
    assert.equal(rig.fake.requests.length, 2);
  });
});

describe('critical evaluators', () => {
  test('the run score is the mean of applicable scores capped at the lowest critical score', async () => {
    const safety = await rig.createEvaluator(evaluatorBody({ name: 'Safety gate', critical: true }));
    const helpful = await rig.createEvaluator(evaluatorBody({ name: 'Helpful A' }));
    const clear = await rig.createEvaluator(evaluatorBody({ name: 'Clear B' }));
    assert.equal(safety.critical, true);
    const judge = await rig.createJudge({ name: 'Critical judge', intent: 'x', evaluator_ids: [safety.id, helpful.id, clear.id] });
    const run = async (safetyScore: number, others = 1) => {
      answerByEvaluator({
        'Safety gate': { justification: 'Checked: "...".', score: safetyScore },
        'Helpful A': { justification: 'Helpful: "...".', score: others },
        'Clear B': { justification: 'Clear: "...".', score: others },
      });
      const res = await rig.post(`/v1/judges/${judge.id}/execute/`, { request: 'Q', response: 'An answer.' });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body;
    };
    const unsafe = await run(0);
    assert.equal(unsafe.score, 0, 'a critical 0 is not averaged away');
    assert.deepEqual(
      unsafe.evaluator_results.map((r: any) => r.critical),
      [true, false, false],
    );
    const log = await rig.get(`/v1/execution-logs/${unsafe.execution_log_id}/`);
    assert.equal(log.body.score, 0);
    assert.equal((await run(0.5)).score, 0.5);
    assert.equal((await run(0.95)).score, 0.95, 'mean 0.9833 capped at 0.95');
    // The cap only lowers: a critical score above the mean leaves the mean as it is.
    assert.equal((await run(1, 0.5)).score, 0.6667);
  });

  test('runScore: failed and N/A results are left out; a critical N/A or failure does not cap', () => {
    assert.equal(
      runScore([
        { score: 1, critical: false },
        { score: 0.5, critical: false },
      ]),
      0.75,
    );
    assert.equal(
      runScore([
        { score: 1, critical: false },
        { score: null, critical: true },
      ]),
      1,
    );
    assert.equal(
      runScore([
        { score: 0.9, critical: false },
        { score: 0.3, critical: true },
        { score: 0.1, critical: true },
      ]),
      0.1,
    );
    assert.equal(runScore([{ score: null, critical: false }]), null);
    assert.equal(runScore([]), null);
  });
});
