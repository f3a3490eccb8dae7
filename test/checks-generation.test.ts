// Generation turns the hard rules of an intent into checks (issue 29 item 3): "must answer in JSON"
// and "never more than 3 sentences" become critical check/code evaluators beside what the model
// designed, and they decide without a model call.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { hardRulesOf } from '../src/checks/hard-rules.ts';
import { contextAnswer, designAnswer, newEvaluator, stagesAnswer, startGenerationRig, type GenerationRig } from './helpers/generation.ts';

describe('hard rules of an intent', () => {
  test('are read from the text, and only stated rules are', () => {
    const names = (t: string) => hardRulesOf(t).map((r) => r.name);
    assert.deepEqual(names('The bot must answer in JSON and never more than 3 sentences.'), ['Answers in valid JSON', 'At most 3 sentences']);
    assert.deepEqual(names('Replies are under 200 words.'), ['At most 199 words']);
    assert.deepEqual(names('Keep tweets to at most 280 characters.'), ['At most 280 characters']);
    assert.deepEqual(names('Keep it to at most two sentences'), ['At most 2 sentences']);
    assert.deepEqual(names('A tutor that explains JSON parsing to students, in plain words.'), []);
    assert.deepEqual(names('A support assistant for a bank that answers politely.'), []);
  });
});

describe('generation with hard rules', () => {
  let rig: GenerationRig;
  before(async () => {
    rig = await startGenerationRig();
  });
  after(() => rig.close());

  test('adds critical checks for them, which score without the model', async () => {
    const intent = 'An order-status bot for a shop. It must answer in JSON with a status field, and never more than 3 sentences in its message.';
    rig.fake.enqueueFor('identify_stages', stagesAnswer('reply writing'));
    rig.fake.enqueueFor('assess_context', contextAnswer([]));
    rig.fake.enqueueFor('design_judge', designAnswer({ presets: ['preset_helpfulness'], evaluators: [newEvaluator('Order Accuracy')] }));
    const res = await rig.post('/v1/judges/generate/', { intent, reasoning_effort: 'off' });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const names = res.body.evaluator_details.map((d: { name: string }) => d.name);
    assert.deepEqual(names, ['Helpfulness', 'Order Accuracy', 'Answers in valid JSON', 'At most 3 sentences']);
    const judge = (await rig.get(`/v1/judges/${res.body.judge_id}/`)).body;
    const [, , json, sentences] = judge.evaluators;
    assert.deepEqual([json.kind, json.critical, sentences.kind, sentences.critical], ['check', true, 'code', true]);
    // Scored alone, each decides without a model call.
    const calls = rig.fake.requests.length;
    const ran = await rig.post(`/v1/evaluators/${json.id}/execute/`, { response: 'Your order shipped.' });
    assert.equal(ran.body.evaluator_results[0].score, 0);
    const short = await rig.post(`/v1/evaluators/${sentences.id}/execute/`, { response: 'One. Two! Three? Four.' });
    assert.equal(short.body.evaluator_results[0].score, 0);
    assert.match(short.body.evaluator_results[0].justification, /4 sentences, more than 3/);
    assert.equal(rig.fake.requests.length, calls);
  });
});
