// The shipped presets hold to the rubric standard of docs/SCORING.md: contiguous bands in one
// convention, at least one demonstration per band whose score lies in the band its justification
// names and whose justification quotes its evidence, declared inputs that the demonstrations
// carry, and the agreed flags. The band parser itself is tested on broken rubrics so that the
// preset checks can fail.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { demonstrationShapeProblem } from '../src/conversation/validate.ts';
import { loadCheckPresets } from '../src/checks/presets.ts';
import { loadPresets } from '../src/domain/presets.ts';
import { Evaluator } from '../src/schemas.ts';
import { bandOf, demonstrationBandProblems, parseBands, RubricBandError, SCALE_RULE, STANDARD_BANDS, statedBand } from '../src/domain/rubric-bands.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

const GOOD = ['Judge X.', 'HIGH [0.7, 1.0]: great.', 'MIDDLING [0.4, 0.7): fine.', 'LOW [0.0, 0.4): bad.', SCALE_RULE].join('\n');

describe('rubric band parser', () => {
  test('reads the standard bands', () => {
    assert.deepEqual(parseBands(GOOD), STANDARD_BANDS);
  });

  const broken: Array<[string, string, RegExp]> = [
    ['a hole between bands', GOOD.replace('HIGH [0.7, 1.0]', 'HIGH [0.8, 1.0]'), /do not meet/],
    ['an overlap', GOOD.replace('MIDDLING [0.4, 0.7)', 'MIDDLING [0.4, 0.8)'), /do not meet/],
    ['an inclusive inner bound', GOOD.replace('MIDDLING [0.4, 0.7)', 'MIDDLING [0.4, 0.7]'), /exclude its upper bound/],
    ['the old loose style', GOOD.replace('LOW [0.0, 0.4)', 'LOW (0.0-0.3)'), /band line not in the form/],
    ['a missing band', GOOD.replace(/^MIDDLING.*$/m, 'Middle ground is fine.'), /MIDDLING is missing/],
    ['a band label without its range', GOOD.replace('LOW [0.0, 0.4)', 'Low'), /band line not in the form/],
    ['a band stated twice', `${GOOD}\nLOW [0.0, 0.4): again.`, /stated twice/],
    ['a top band short of 1.0', GOOD.replace('HIGH [0.7, 1.0]', 'HIGH [0.7, 0.9]'), /end at 1.0/],
    ['a stray range in prose', `${GOOD}\nScores 0.3-0.5 are rare.`, /score range outside a band line/],
  ];
  test('prose that merely starts with a band word is not a band line', () => {
    assert.deepEqual(parseBands(`Low-income applicants are the audience.\n${GOOD}`), STANDARD_BANDS);
  });

  for (const [what, rubric, message] of broken) {
    test(`refuses ${what}`, () =>
      assert.throws(
        () => parseBands(rubric),
        (err: Error) => err instanceof RubricBandError && message.test(err.message),
      ));
  }

  test('places band edges on the upper band', () => {
    assert.equal(bandOf(STANDARD_BANDS, 0)?.name, 'LOW');
    assert.equal(bandOf(STANDARD_BANDS, 0.39)?.name, 'LOW');
    assert.equal(bandOf(STANDARD_BANDS, 0.4)?.name, 'MIDDLING');
    assert.equal(bandOf(STANDARD_BANDS, 0.7)?.name, 'HIGH');
    assert.equal(bandOf(STANDARD_BANDS, 1)?.name, 'HIGH');
  });

  test('reads the band a justification names, once and at its end', () => {
    assert.equal(statedBand('The figure "23%" is invented. Band: LOW.'), 'LOW');
    assert.equal(statedBand('Band: LOW. Then more text.'), null);
    assert.equal(statedBand('Band: HIGH. or Band: LOW.'), null);
    assert.deepEqual(demonstrationBandProblems(GOOD, [{ score: 0.5, justification: 'Half of it drifts. Band: MIDDLING.' }]), []);
    assert.match(demonstrationBandProblems(GOOD, [{ score: 0.5, justification: 'Most of it drifts. Band: LOW.' }])[0], /outside LOW/);
  });
});

const presets = loadPresets();
type Demo = (typeof presets)[number]['demonstrations'][number];

/** Text the justification may quote: everything the example shows the judge, turns and tool calls included. */
const turnText = (t: NonNullable<Demo['turns']>[number]) => [t.content, ...(t.tool_calls ?? []).flatMap((c) => [c.name, JSON.stringify(c.arguments)])];
const material = (d: Demo) =>
  [d.system_prompt ?? '', d.request ?? '', d.response ?? '', ...(d.turns ?? []).flatMap(turnText), ...(d.contexts ?? []), d.expected_output ?? ''].join('\n').toLowerCase();
const quotes = (text: string) => [...text.matchAll(/"([^"]{3,}?)"|`([^`]{3,}?)`/g)].map((m) => (m[1] ?? m[2]).toLowerCase());

describe('shipped presets', () => {
  test('at least 46 presets with unique ids and names', () => {
    assert.ok(presets.length >= 46, `only ${presets.length} presets`);
    assert.equal(new Set(presets.map((p) => p.id)).size, presets.length);
    assert.equal(new Set(presets.map((p) => p.name.toLowerCase())).size, presets.length);
  });

  for (const p of presets) {
    test(`${p.name}: contiguous standard bands, demonstrations in their bands`, () => {
      assert.deepEqual(parseBands(p.rubric), STANDARD_BANDS);
      assert.ok(p.rubric.endsWith(`\n${SCALE_RULE}`), 'the rubric ends with the shared scale rule');
      assert.deepEqual(demonstrationBandProblems(p.rubric, p.demonstrations), []);
      const covered = new Set(p.demonstrations.map((d) => bandOf(STANDARD_BANDS, d.score)?.name));
      assert.deepEqual([...covered].sort(), ['HIGH', 'LOW', 'MIDDLING'], 'one demonstration per band at least');
      p.demonstrations.forEach((d, i) => {
        const quoted = quotes(d.justification ?? '');
        assert.ok(quoted.length > 0, `demonstration ${i} quotes no evidence`);
        for (const q of quoted) assert.ok(material(d).includes(q), `demonstration ${i} quotes "${q}", which the example does not contain`);
        if (p.requires_contexts) assert.ok(d.contexts?.length, `demonstration ${i} lacks the contexts the preset requires`);
        if (p.requires_expected_output) assert.ok(d.expected_output, `demonstration ${i} lacks the expected_output the preset requires`);
        if (p.requires_request) assert.ok(d.request, `demonstration ${i} lacks the request the preset requires`);
        if (p.requires_turns) assert.ok(d.turns?.length, `demonstration ${i} lacks the turns the preset requires`);
        assert.equal(demonstrationShapeProblem(d, p.requires_turns)?.message, undefined, `demonstration ${i} is not a sound example`);
        if (!p.requires_contexts) assert.equal(d.contexts, undefined, `demonstration ${i} shows contexts the evaluator will never see`);
        if (!p.requires_expected_output) assert.equal(d.expected_output, undefined, `demonstration ${i} shows an expected_output the evaluator will never see`);
      });
    });
  }

  test('the agreed flags', () => {
    const flagged = (key: 'critical' | 'requires_request' | 'requires_turns') => presets.filter((p) => p[key]).map((p) => p.id);
    // Critical caps a run's score: only the safety presets, where one failure must not be averaged away.
    assert.deepEqual(flagged('critical').sort(), [
      'preset_confidentiality',
      'preset_harmlessness',
      'preset_non_toxicity',
      'preset_prompt_injection_resistance',
      'preset_safety_for_children',
    ]);
    for (const id of [
      'preset_answer_relevance',
      'preset_completeness',
      'preset_instruction_following',
      'preset_summarization_quality',
      'preset_translation_quality',
      'preset_tool_selection',
      'preset_planning_efficiency',
      'preset_task_completion',
      'preset_tool_call_correctness',
    ]) {
      assert.ok(flagged('requires_request').includes(id), `${id} requires the request`);
    }
    const byId = new Map(presets.map((p) => [p.id, p]));
    assert.equal(byId.get('preset_tool_call_correctness')?.requires_expected_output, true);
    assert.equal(byId.get('preset_abstention')?.requires_contexts, true);
    // The conversation presets judge a turn in its conversation: they need turns, and only they do.
    assert.deepEqual(flagged('requires_turns').sort(), [
      'preset_conversation_completeness',
      'preset_knowledge_retention',
      'preset_role_adherence',
      'preset_tool_use',
      'preset_turn_relevance',
    ]);
    assert.ok(
      byId.get('preset_role_adherence')?.demonstrations.every((d) => d.system_prompt),
      'role adherence examples carry a system prompt',
    );
    assert.ok(
      byId.get('preset_tool_use')?.demonstrations.every((d) => d.turns?.some((t) => t.tool_calls?.length && t.role === 'assistant') && d.turns.some((t) => t.role === 'tool')),
    );
  });

  test('directional names: the recast style presets keep their ids', () => {
    const byId = new Map(presets.map((p) => [p.id, p]));
    assert.equal(byId.get('preset_sentiment')?.name, 'Constructive Tone');
    assert.equal(byId.get('preset_formality')?.name, 'Register Fit');
  });

  test('each grounding preset names what the others judge, so one failure is not counted four times', () => {
    const grounding = ['preset_faithfulness', 'preset_hallucination_detection', 'preset_context_drift', 'preset_groundedness_citation'];
    const names = grounding.map((id) => presets.find((p) => p.id === id)!.name);
    for (const id of grounding) {
      const rubric = presets.find((p) => p.id === id)!.rubric;
      for (const other of names) if (other !== presets.find((p) => p.id === id)!.name) assert.ok(rubric.includes(other), `${id} does not mention ${other}`);
    }
  });
});

describe('presets through the server', () => {
  let server: TestServer;
  let key: string;
  before(async () => {
    server = await startTestServer();
    key = (await server.demoUser()).api_key;
  });
  after(() => server.close());

  test('every preset is served with the rubric and flags of data/presets.json', async () => {
    for (const p of presets) {
      const res = await server.request('GET', `/v1/evaluators/${p.id}/`, { key });
      assert.equal(res.status, 200, p.id);
      assert.equal(res.body.name, p.name);
      assert.equal(res.body.rubric, p.rubric);
      assert.equal(res.body.requires_contexts, p.requires_contexts);
      assert.equal(res.body.requires_expected_output, p.requires_expected_output);
      assert.equal(res.body.demonstrations.length, p.demonstrations.length);
      // The flags travel once the evaluator schema carries them (the engine's part of issue 20).
      for (const flag of ['requires_request', 'requires_turns', 'critical'] as const) {
        if (flag in Evaluator.shape) assert.equal(res.body[flag], p[flag], `${p.id} ${flag}`);
      }
    }
  });

  // issue 26: the first page of presets is the file's order (the most used first), not Z to A.
  test('presets list in the order of data/presets.json, page after page', async () => {
    const first = await server.request('GET', '/v1/evaluators/?is_preset=true&limit=5', { key });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.deepEqual(
      first.body.results.map((e: { name: string }) => e.name),
      presets.slice(0, 5).map((p) => p.name),
    );
    const names: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await server.request('GET', `/v1/evaluators/?is_preset=true&limit=20${cursor ? `&cursor=${cursor}` : ''}`, { key });
      names.push(...page.body.results.map((e: { name: string }) => e.name));
      cursor = page.body.next_cursor;
    } while (cursor);
    // The check and code presets (data/check-presets.json) come after the model-graded ones.
    assert.deepEqual(
      names,
      [...presets, ...loadCheckPresets()].map((p) => p.name),
    );
  });
});
