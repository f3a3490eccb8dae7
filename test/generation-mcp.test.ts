// Judge generation over MCP: the generate_judge tool through the official SDK client on /mcp, on the
// fake judge model. The outcomes come back as structuredContent; failures as isError results.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { calledTools, contextAnswer, designAnswer, newEvaluator, stagesAnswer, startGenerationRig, type GenerationRig } from './helpers/generation.ts';

const BOT_INTENT =
  'Our travel agency runs an assistant that plans trips: it first works out what the traveller wants, then searches flights and hotels ' +
  'with tools, then writes an itinerary. We want to judge what it produces.';

describe('generate_judge over MCP', () => {
  let rig: GenerationRig;
  let client: Client;
  let other: Client;

  const connect = async (key: string) => {
    const c = new Client({ name: 'generation-test', version: '1.0.0' });
    await c.connect(new StreamableHTTPClientTransport(new URL(`${rig.server.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }));
    return c;
  };
  const generate = (args: Record<string, unknown>, c = client) => c.callTool({ name: 'generate_judge', arguments: args });
  const errorText = (result: any) => (result.content as Array<{ text: string }>).map((c) => c.text).join('\n');

  before(async () => {
    rig = await startGenerationRig();
    client = await connect(rig.org.key);
    other = await connect(rig.other.key);
  });
  after(async () => {
    await client.close();
    await other.close();
    await rig.close();
  });
  afterEach(() => {
    assert.equal(rig.fake.pending, 0, 'unused scripted answers');
    rig.fake.resetStats();
  });

  test('the tool is listed with its schemas', async () => {
    const { tools } = await client.listTools();
    const tool = tools.find((t) => t.name === 'generate_judge');
    assert.ok(tool);
    assert.deepEqual((tool.inputSchema as any).required, ['intent']);
    assert.deepEqual((tool.inputSchema as any).properties.reasoning_effort.enum, ['off', 'low', 'medium', 'high']);
    assert.ok(tool.outputSchema);
  });

  test('multiple stages -> pick one -> missing context -> follow-up completes the same judge -> run_judge', async () => {
    rig.fake.enqueueFor('identify_stages', stagesAnswer('preference capture', 'tool use', 'itinerary writing'));
    const stages: any = await generate({ intent: BOT_INTENT });
    assert.equal(stages.isError, undefined, errorText(stages));
    assert.deepEqual(stages.structuredContent, { error_code: 'multiple_stages', stages: ['preference capture', 'tool use', 'itinerary writing'] });
    assert.equal((await rig.get('/v1/judges/')).body.results.length, 0);

    rig.fake.enqueueFor('assess_context', contextAnswer([['budget_policy', 'Which budgets do your travellers have?']], ['preset_tool_selection'], 'Trip tool-use judge'));
    const asked: any = await generate({ intent: BOT_INTENT, stage: 'tool use' });
    assert.equal(asked.structuredContent.error_code, 'missing_context_from_system_goal');
    const judgeId = asked.structuredContent.judge_id;
    assert.deepEqual(asked.structuredContent.missing_context_from_system_goal, [
      { form_field_name: 'budget_policy', form_field_description: 'Which budgets do your travellers have?' },
    ]);
    // get_judge shows the draft state; run_judge refuses the draft and says how to complete it.
    const draft: any = await client.callTool({ name: 'get_judge', arguments: { judge_id: judgeId } });
    assert.equal(draft.isError, undefined, errorText(draft));
    assert.equal(draft.structuredContent.intent, BOT_INTENT);
    assert.deepEqual(draft.structuredContent.generation, {
      status: 'draft',
      context_aware: false,
      answers: {},
      open_questions: asked.structuredContent.missing_context_from_system_goal,
    });
    const early: any = await client.callTool({ name: 'run_judge', arguments: { judge_id: judgeId, response: 'Called search_hotels().' } });
    assert.equal(early.isError, true);
    assert.match(errorText(early), /draft made by generate_judge, waiting for answers to one question \(budget_policy\).*generate_judge/);

    rig.fake.enqueueFor(
      'design_judge',
      designAnswer({ name: 'Trip tool-use judge', presets: ['preset_tool_selection', 'preset_planning_efficiency'], evaluators: [newEvaluator('Budget Adherence')] }),
    );
    rig.fake.resetStats();
    const done: any = await generate({ intent: BOT_INTENT, judge_id: judgeId, extra_contexts: { budget_policy: 'Mid-range: under 200 EUR a night.' } });
    assert.equal(done.isError, undefined, errorText(done));
    assert.equal(done.structuredContent.judge_id, judgeId);
    assert.deepEqual(
      done.structuredContent.evaluator_details.map((d: any) => [d.name, d.is_preset]),
      [
        ['Tool Selection', true],
        ['Planning Efficiency', true],
        ['Budget Adherence', false],
      ],
    );
    assert.deepEqual(calledTools(rig.fake), ['design_judge'], 'not asked again');
    assert.match(rig.fake.requests[0].prompt, /budget_policy: Mid-range: under 200 EUR a night\./);

    const judge: any = await client.callTool({ name: 'get_judge', arguments: { judge_id: judgeId } });
    assert.equal(judge.structuredContent.stage, 'tool use');
    assert.equal(judge.structuredContent.version, 2);
    assert.equal(judge.structuredContent.visibility, 'private');
    assert.deepEqual(judge.structuredContent.generation, {
      status: 'complete',
      context_aware: false,
      answers: { budget_policy: 'Mid-range: under 200 EUR a night.' },
      open_questions: [],
    });

    rig.fake.resetStats();
    const run: any = await client.callTool({
      name: 'run_judge',
      arguments: { judge_id: judgeId, request: 'Plan 3 days in Lisbon', response: 'Called search_hotels(city="Lisbon", max_price=180).' },
    });
    assert.equal(run.isError, undefined, errorText(run));
    assert.equal(run.structuredContent.evaluator_results.length, 3);
    assert.deepEqual(calledTools(rig.fake), ['submit_evaluation', 'submit_evaluation', 'submit_evaluation']);
    await rig.server.store.deleteJudge(judgeId);
  });

  test('context-aware success in one call, public when asked', async () => {
    rig.fake.enqueueFor('identify_stages', stagesAnswer('answer generation'));
    rig.fake.enqueueFor('assess_context', contextAnswer([]));
    rig.fake.enqueueFor('design_judge', designAnswer({ name: 'Policy Q&A judge', presets: ['preset_answer_relevance', 'preset_hallucination_detection'], evaluators: [] }));
    const res: any = await generate({
      intent: 'An HR assistant answers employee questions from the retrieved sections of the company handbook. Evaluate its answers.',
      enable_context_aware_evaluators: true,
      visibility: 'public',
      reasoning_effort: 'low',
    });
    assert.equal(res.isError, undefined, errorText(res));
    assert.deepEqual(
      res.structuredContent.evaluator_details.map((d: any) => d.id),
      ['preset_answer_relevance', 'preset_hallucination_detection'],
    );
    assert.deepEqual(
      rig.fake.requests.map((r) => r.body.thinking?.budget_tokens),
      [1024, 1024, 1024],
    );
    // Public: another organization reads it over MCP.
    const seen: any = await other.callTool({ name: 'get_judge', arguments: { judge_id: res.structuredContent.judge_id } });
    assert.equal(seen.isError, undefined);
    assert.equal(seen.structuredContent.visibility, 'public');
    assert.equal(seen.structuredContent.generation.context_aware, true);
    await rig.server.store.deleteJudge(res.structuredContent.judge_id);
  });

  test('failures are isError results that say what to fix', async () => {
    const effort: any = await generate({ intent: BOT_INTENT, reasoning_effort: 'extreme' });
    assert.equal(effort.isError, true);
    assert.match(errorText(effort), /reasoning_effort/);
    assert.match(errorText(effort), /"off"\|"low"\|"medium"\|"high"/);

    const empty: any = await generate({ intent: '' });
    assert.equal(empty.isError, true);
    assert.match(errorText(empty), /intent/);

    const foreign: any = await generate({ intent: BOT_INTENT, judge_id: 'jdg_0000notmine' });
    assert.equal(foreign.isError, true);
    assert.match(errorText(foreign), /not_found/);

    rig.fake.enqueueFor('identify_stages', stagesAnswer('itinerary writing'));
    rig.fake.enqueueFor('assess_context', contextAnswer([]));
    const bad = designAnswer({ presets: ['preset_does_not_exist'] });
    rig.fake.enqueueFor('design_judge', bad, bad, bad);
    const unusable: any = await generate({ intent: BOT_INTENT, reasoning_effort: 'off' });
    assert.equal(unusable.isError, true);
    assert.match(errorText(unusable), /model_unavailable/);
    assert.match(errorText(unusable), /preset_does_not_exist/);
    assert.equal((await rig.get('/v1/judges/')).body.results.length, 0);
  });
});
