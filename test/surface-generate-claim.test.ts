// A judge generated with a demo key answers a claim_token (REST generate_judge), only on success, and
// claiming it moves the judge with the evaluators generation wrote for it; the presets stay presets.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { contextAnswer, designAnswer, newEvaluator, stagesAnswer, startGenerationRig, type GenerationRig } from './helpers/generation.ts';

const INTENT = 'Our support assistant answers customer questions about orders and refunds. Judge the replies it writes: helpful, polite, and in our brand voice.';

let rig: GenerationRig;
before(async () => {
  rig = await startGenerationRig();
});
after(() => rig.close());

test('generate_judge with a demo key answers a claim_token; a draft answers none; claiming moves the written evaluator', async () => {
  // A draft (missing context) is not claimable yet.
  rig.fake.enqueueFor('identify_stages', stagesAnswer('reply writing'));
  rig.fake.enqueueFor('assess_context', contextAnswer([['refund_policy', 'What is the refund policy?']]));
  const draft = await rig.post('/v1/judges/generate/', { intent: INTENT, reasoning_effort: 'off' }, rig.demo.key);
  assert.equal(draft.body.error_code, 'missing_context_from_system_goal', JSON.stringify(draft.body));
  assert.equal(draft.body.claim_token, undefined);

  rig.fake.enqueueFor('identify_stages', stagesAnswer('reply writing'));
  rig.fake.enqueueFor('assess_context', contextAnswer([]));
  rig.fake.enqueueFor('design_judge', designAnswer({ presets: ['preset_helpfulness'], evaluators: [newEvaluator('Brand Voice')] }));
  const made = await rig.post('/v1/judges/generate/', { intent: INTENT, reasoning_effort: 'off', stage: 'reply writing' }, rig.demo.key);
  assert.equal(made.status, 201, JSON.stringify(made.body));
  assert.match(made.body.claim_token, /^clm_/);

  // A regular organization's generated judge answers none.
  rig.fake.enqueueFor('identify_stages', stagesAnswer('reply writing'));
  rig.fake.enqueueFor('assess_context', contextAnswer([]));
  rig.fake.enqueueFor('design_judge', designAnswer({ presets: ['preset_helpfulness'], evaluators: [newEvaluator('Brand Voice')] }));
  const own = await rig.post('/v1/judges/generate/', { intent: INTENT, reasoning_effort: 'off', stage: 'reply writing' });
  assert.equal(own.status, 201);
  assert.equal(own.body.claim_token, undefined);

  const claimed = await rig.post('/v1/judges/claim/', { claim_token: made.body.claim_token }, rig.other.key);
  assert.equal(claimed.status, 200, JSON.stringify(claimed.body));
  assert.deepEqual(
    claimed.body.evaluators_moved.map((e: { name: string }) => e.name),
    ['Brand Voice'],
  );
  const judge = (await rig.get(`/v1/judges/${claimed.body.judge.id}/`, rig.other.key)).body;
  assert.deepEqual(
    judge.evaluators.map((e: { name: string; is_preset: boolean }) => [e.name, e.is_preset]),
    [
      ['Helpfulness', true],
      ['Brand Voice', false],
    ],
  );
  assert.equal(judge.visibility, 'private');
  assert.equal(judge.generation?.status, 'complete');
});
