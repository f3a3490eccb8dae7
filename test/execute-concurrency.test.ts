// Concurrency, proven by the peak number of requests the fake judge model saw in flight.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { toolAnswer, type Responder } from './helpers/fake-anthropic.ts';
import { startScoringRig, type ScoringRig } from './helpers/execute.ts';

const EIGHT = [
  'preset_clarity',
  'preset_conciseness',
  'preset_coherence',
  'preset_helpfulness',
  'preset_politeness',
  'preset_formality',
  'preset_sentiment',
  'preset_reading_ease',
];

/**
 * Holds every answer until `size` requests are open at once (or `giveUpMs` passed, so a serial
 * engine fails the assertion instead of hanging), then releases them all.
 */
function barrier(rig: ScoringRig, size: number, giveUpMs = 3000): Responder {
  let waiting: Array<() => void> = [];
  return (req) =>
    new Promise((resolve) => {
      const answer = () => resolve(toolAnswer({ justification: `ok ${req.index}`, score: 0.5 }));
      waiting.push(answer);
      const timer = setTimeout(() => {
        const all = waiting;
        waiting = [];
        all.forEach((f) => f());
      }, giveUpMs);
      if (rig.fake.inFlight >= size) {
        clearTimeout(timer);
        const all = waiting;
        waiting = [];
        all.forEach((f) => f());
      } else timer.unref();
    });
}

test('the eight evaluators of a judge are in flight at the same time', async () => {
  const rig = await startScoringRig();
  try {
    const judge = await rig.createJudge({ name: 'Eight', intent: 'x', evaluator_ids: EIGHT });
    rig.fake.resetStats();
    rig.fake.respondWith(barrier(rig, 8));
    const res = await rig.post(`/v1/judges/${judge.id}/execute/`, { request: 'Hi there.', response: 'Hello.' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.evaluator_results.length, 8);
    assert.ok(res.body.evaluator_results.every((r: any) => r.score === 0.5));
    assert.equal(rig.fake.requests.length, 8);
    assert.equal(rig.fake.peakInFlight, 8);
  } finally {
    await rig.close();
  }
});

test('TRIBUNAL_MODEL_CONCURRENCY caps calls in flight server-wide; the rest wait their turn', async () => {
  const rig = await startScoringRig({ TRIBUNAL_MODEL_CONCURRENCY: '3' });
  try {
    const judge = await rig.createJudge({ name: 'Eight', intent: 'x', evaluator_ids: EIGHT });
    rig.fake.resetStats();
    // Each batch of three is released when it is complete; a fourth never gets in meanwhile.
    rig.fake.respondWith(barrier(rig, 3, 500));
    const [a, b] = await Promise.all([
      rig.post(`/v1/judges/${judge.id}/execute/`, { request: 'Hi there.', response: 'Hello.' }),
      rig.post('/v1/evaluators/preset_clarity/execute/', { response: 'Hi.' }),
    ]);
    assert.equal(a.status, 200, JSON.stringify(a.body));
    assert.equal(b.status, 200, JSON.stringify(b.body));
    assert.equal(a.body.evaluator_results.filter((r: any) => r.score === 0.5).length, 8);
    assert.equal(rig.fake.requests.length, 9);
    assert.equal(rig.fake.peakInFlight, 3);
  } finally {
    await rig.close();
  }
});
