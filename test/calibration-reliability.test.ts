// How well confidence predicts agreement with the person (SPEC sections 16, 17): the reliability
// bins and ECE by hand (calibration/reliability.ts), the JSON store's row line keeping a result's
// confidence (and reading lines written before it), and end to end over REST on both stores
// (TRIBUNAL_TEST_STORE=postgres): a calibration run of an evaluator whose model states a confidence.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AGREEMENT_TOLERANCE, agrees, confidenceCalibration, reliabilityOf } from '../src/calibration/reliability.ts';
import { decodeScores, encodeScores } from '../src/store/json-batch-rows.ts';
import type { BatchRowRecord } from '../src/store/types.ts';
import { toolAnswer } from './helpers/fake-anthropic.ts';
import { evaluatorBody, startScoringRig, type ScoringRig } from './helpers/execute.ts';

const near = (a: number | null | undefined, b: number, what: string) => assert.ok(typeof a === 'number' && Math.abs(a - b) < 1e-9, `${what}: ${a} vs ${b}`);

// Five items with a confidence and one without (person, judge, confidence), tolerance 0.2:
//   A 0.8 vs 0.9, c 0.95: |0.1| agrees        -> bin 9
//   B 0.2 vs 0.9, c 0.92: |0.7| does not      -> bin 9
//   C 0.5 vs 0.7, c 0.55: |0.2| agrees (edge) -> bin 5
//   D 0.0 vs 0.5, c 0.50: |0.5| does not      -> bin 5
//   E 1.0 vs 1.0, c 1.00: agrees              -> bin 9 (1.0 falls in the last bin)
//   F 0.3 vs 0.3, no confidence               -> left out
// Bin 9: n 3, mean confidence (0.95 + 0.92 + 1) / 3 = 0.956667, agreement 2/3: gap 0.29, weight 3/5 -> 0.174.
// Bin 5: n 2, mean confidence 0.525, agreement 1/2: gap 0.025, weight 2/5 -> 0.01.  ECE = 0.184.
const expected = [0.8, 0.2, 0.5, 0, 1, 0.3];
const scores = [0.9, 0.9, 0.7, 0.5, 1, 0.3];
const confidence = [0.95, 0.92, 0.55, 0.5, 1, null];

describe('reliability bins and ECE', () => {
  it('match the hand computation above', () => {
    assert.equal(AGREEMENT_TOLERANCE, 0.2);
    assert.equal(agrees(0.5, 0.7), true, 'a difference of exactly the tolerance agrees, despite floating error');
    assert.equal(agrees(0.5, 0.71), false);
    const { ece, reliability } = confidenceCalibration(expected, scores, confidence);
    near(ece, 0.184, 'ece');
    assert.equal(reliability!.length, 10);
    assert.deepEqual(reliability![9], { lo: 0.9, hi: 1, n: 3, mean_confidence: 0.9567, agreement_rate: 0.6667 });
    assert.deepEqual(reliability![5], { lo: 0.5, hi: 0.6, n: 2, mean_confidence: 0.525, agreement_rate: 0.5 });
    for (const i of [0, 1, 2, 3, 4, 6, 7, 8]) assert.deepEqual(reliability![i], { lo: i / 10, hi: (i + 1) / 10, n: 0, mean_confidence: null, agreement_rate: null });
    assert.equal(
      reliability!.reduce((a, b) => a + b.n, 0),
      5,
      'the item without a confidence is left out',
    );
  });

  it('is 0 when confidence equals the agreement rate in every bin, and null without any confidence', () => {
    // Bin 7: four items at 0.75, three agree (0.75). Bin 2: two at 0.25... one of four agrees.
    const e = [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5];
    const s = [0.5, 0.6, 0.4, 1, 0.5, 0, 1, 0];
    const c = [0.75, 0.75, 0.75, 0.75, 0.25, 0.25, 0.25, 0.25];
    near(confidenceCalibration(e, s, c).ece, 0, 'perfectly calibrated');
    assert.deepEqual(confidenceCalibration([0.1, 0.9], [0.1, 0.9], [null, undefined]), { ece: null, reliability: null });
    assert.equal(reliabilityOf([], []).ece, null);
  });

  it('an overconfident judge: always 0.9 sure, right half the time -> ECE 0.4', () => {
    const { ece, reliability } = confidenceCalibration([0, 1, 0, 1], [0, 0, 1, 1], [0.9, 0.9, 0.9, 0.9]);
    near(ece, 0.4, 'ece');
    assert.deepEqual(reliability![9], { lo: 0.9, hi: 1, n: 4, mean_confidence: 0.9, agreement_rate: 0.5 });
  });
});

describe("the JSON store's scores line", () => {
  const row = (results: BatchRowRecord['evaluator_results']): BatchRowRecord =>
    ({ position: 3, item_id: 'itm_1', index: 3, execution_log_id: 'log_1', score: 0.5, error: null, evaluator_results: results, cost_usd: 0 }) as unknown as BatchRowRecord;
  const result = (extra: Record<string, unknown>) => ({ evaluator_id: 'evl_1', evaluator_name: 'E', score: 0.5, ...extra }) as never;

  it('keeps a confidence, and reads lines written before confidence was kept', () => {
    const withConfidence = decodeScores(JSON.parse(encodeScores(row([result({ confidence: 0.42 }), result({ score: null, not_applicable: true, confidence: null })]))));
    assert.deepEqual(withConfidence.evaluator_results, [
      { evaluator_id: 'evl_1', evaluator_name: 'E', score: 0.5, confidence: 0.42 },
      { evaluator_id: 'evl_1', evaluator_name: 'E', score: null, not_applicable: true },
    ]);
    // An older line: [id, name, score] and [id, name, score, 1].
    const old = decodeScores([
      3,
      'itm_1',
      3,
      'log_1',
      0.5,
      null,
      [
        ['evl_1', 'E', 0.5],
        ['evl_2', 'F', null, 1],
      ],
    ] as never);
    assert.deepEqual(old.evaluator_results, [
      { evaluator_id: 'evl_1', evaluator_name: 'E', score: 0.5 },
      { evaluator_id: 'evl_2', evaluator_name: 'F', score: null, not_applicable: true },
    ]);
  });
});

describe('a calibration run reports ece and reliability over REST', () => {
  let rig: ScoringRig;
  before(async () => {
    rig = await startScoringRig();
  });
  after(() => rig.close());

  async function waitDone(id: string): Promise<any> {
    for (let i = 0; i < 400; i++) {
      const res = await rig.get(`/v1/calibration-runs/${id}/`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      if (['completed', 'failed', 'cancelled'].includes(res.body.status)) return res.body;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error('calibration run did not finish');
  }

  it('from the confidence the model stated, by the hand computation above', async () => {
    const evaluator = await rig.createEvaluator(evaluatorBody({ name: 'Reliability' }));
    // The judged response carries what the fake judge model answers: "judge-0.9 conf-0.95".
    rig.fake.respondWith((req) => {
      const judge = Number(/judge-(\d(?:\.\d+)?)/.exec(req.prompt)?.[1]);
      const conf = /conf-(\d(?:\.\d+)?)/.exec(req.prompt)?.[1];
      return toolAnswer({ justification: 'As written.', score: judge, ...(conf ? { confidence: Number(conf) } : {}) });
    });
    const ds = await rig.post('/v1/datasets/', { name: 'reliability golden' });
    const items = expected.map((e, i) => ({
      request: `Q${i}`,
      response: `Answer ${i}. judge-${scores[i]}${confidence[i] === null ? '' : ` conf-${confidence[i]}`}`,
      expected_scores: { Reliability: e },
    }));
    assert.equal((await rig.post(`/v1/datasets/${ds.body.id}/items/`, { items })).status, 201);
    const started = await rig.post('/v1/calibration-runs/', { evaluator_id: evaluator.id, dataset_id: ds.body.id });
    assert.equal(started.status, 202, JSON.stringify(started.body));
    const run = await waitDone(started.body.id);
    rig.fake.respondWith(null);
    assert.equal(run.status, 'completed', JSON.stringify(run));
    const [m] = run.metrics;
    assert.equal(m.n, 6);
    near(m.ece, 0.184, 'ece');
    assert.deepEqual(m.reliability[9], { lo: 0.9, hi: 1, n: 3, mean_confidence: 0.9567, agreement_rate: 0.6667 });
    assert.deepEqual(m.reliability[5], { lo: 0.5, hi: 0.6, n: 2, mean_confidence: 0.525, agreement_rate: 0.5 });
    // The stored metrics are read back the same on a second read (computed once, kept).
    const again = await rig.get(`/v1/calibration-runs/${started.body.id}/`);
    assert.deepEqual(again.body.metrics[0].reliability, m.reliability);
  });

  it('null ece and reliability when the model states no confidence', async () => {
    const evaluator = await rig.createEvaluator(evaluatorBody({ name: 'Silent' }));
    rig.fake.respondWith(() => toolAnswer({ justification: 'Fine.', score: 0.7 }));
    const ds = await rig.post('/v1/datasets/', { name: 'silent golden' });
    await rig.post(`/v1/datasets/${ds.body.id}/items/`, { items: [0.2, 0.9].map((e, i) => ({ request: `Q${i}`, response: `A${i}`, expected_scores: { Silent: e } })) });
    const started = await rig.post('/v1/calibration-runs/', { evaluator_id: evaluator.id, dataset_id: ds.body.id });
    const run = await waitDone(started.body.id);
    rig.fake.respondWith(null);
    assert.equal(run.metrics[0].ece, null);
    assert.equal(run.metrics[0].reliability, null);
  });
});
