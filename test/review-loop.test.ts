// Closing the loop (issue 31 item 4) over REST with a fake judge model: runs feed a queue, two people
// score them, a disagreement is adjudicated, one call builds the calibration dataset and runs
// calibration; the improve step turns the largest disagreement into a demonstration and the next call
// re-measures, before and after side by side, with intervals. TRIBUNAL_TEST_STORE=postgres runs it on PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { toolAnswer } from './helpers/fake-anthropic.ts';
import { evaluatorBody, startScoringRig, type ScoringRig } from './helpers/execute.ts';

let rig: ScoringRig;
let grounded: any;
let judge: any;
const MARK = /says-(\d\.\d+)/;

before(async () => {
  rig = await startScoringRig();
  grounded = await rig.createEvaluator(evaluatorBody({ name: 'Loop grounded' }));
  judge = await rig.createJudge({ name: 'Loop judge', intent: 'Judges support replies.', evaluator_ids: [grounded.id] });
  // The judge gives the score in the response, unless a demonstration shows that response (it learned: 0.9).
  rig.fake.respondWith((req) => {
    const said = MARK.exec(req.prompt)?.[1] ?? '0.5';
    const score = req.system.includes(`says-${said}`) ? 0.9 : Number(said);
    return toolAnswer({ justification: `It says ${said}.`, score }, { usage: { input_tokens: 10, output_tokens: 5 } });
  });
});
after(() => rig.close());

const as = (key: string, method: string, path: string, body?: unknown) => rig.server.request(method, path, { key, body });

async function waitRun(id: string) {
  for (let i = 0; i < 400; i++) {
    const r = await rig.get(`/v1/calibration-runs/${id}/`);
    if (['completed', 'failed', 'cancelled'].includes(r.body.status)) return r.body;
    await new Promise((res) => setTimeout(res, 25));
  }
  throw new Error('calibration run did not finish');
}

describe('closing the loop', () => {
  it('queue -> adjudicated labels -> calibration dataset -> calibration run -> improve -> re-measure', async () => {
    const queue = await rig.post('/v1/review-queues/', { name: 'loop', judge_id: judge.id, annotators_per_item: 2, sources: { sample_rate: 1 } });
    assert.equal(queue.status, 201, JSON.stringify(queue.body));
    const q = queue.body.id;
    // Judge says 0.9, 0.2, 0.3; the people say ~1, ~0.1, and split on the third (0.9 / 0.5).
    for (const said of ['0.9', '0.2', '0.3']) assert.equal((await rig.post(`/v1/judges/${judge.id}/execute/`, { request: 'Q', response: `Reply says-${said}` })).status, 200);
    const keys = [];
    for (const name of ['ann one', 'ann two']) keys.push((await rig.post('/v1/api-keys/', { name })).body.api_key as string);
    const people: Record<string, number[]> = { [keys[0]]: [1, 0.1, 0.9], [keys[1]]: [0.95, 0.1, 0.5] };
    for (const k of keys) {
      for (let i = 0; i < 3; i++) {
        const got = await as(k, 'POST', `/v1/review-queues/${q}/next/`, {});
        assert.equal(got.status, 200, JSON.stringify(got.body));
        const said = MARK.exec(got.body.log.response)![1];
        const index = ['0.9', '0.2', '0.3'].indexOf(said);
        assert.equal(
          (await as(k, 'POST', `/v1/review-queues/${q}/items/${got.body.item_id}/annotations/`, { annotations: [{ evaluator_id: grounded.id, score: people[k][index] }] })).status,
          201,
        );
      }
    }
    const dis = await rig.get(`/v1/review-queues/${q}/disagreements/`);
    assert.equal(dis.body.total, 1);
    assert.equal((await rig.post(`/v1/review-queues/${q}/items/${dis.body.results[0].item_id}/adjudicate/`, { scores: [{ evaluator_id: grounded.id, score: 0.8 }] })).status, 200);

    const first = await rig.post(`/v1/review-queues/${q}/calibrate/`, { dataset_name: 'loop golden' });
    assert.equal(first.status, 202, JSON.stringify(first.body));
    assert.equal(first.body.items_added, 3);
    assert.equal(first.body.auto_adjudicated, 2, "the two agreed items, with the people's mean");
    const run1 = await waitRun(first.body.calibration_runs[0].id);
    assert.equal(run1.status, 'completed', JSON.stringify(run1));
    const m1 = run1.metrics[0];
    assert.equal(m1.n, 3);
    assert.equal(m1.intervals.mae.length, 2);
    const items = await rig.get(`/v1/calibration-runs/${run1.id}/items/`);
    const worst = items.body.results[0];
    // The adjudicated 0.8 against the judge's 0.3 is the largest difference.
    assert.ok(Math.abs(worst.expected - 0.8) < 1e-9 && Math.abs(worst.score - 0.3) < 1e-9, JSON.stringify(worst));

    const taught = await rig.post(`/v1/calibration-runs/${run1.id}/demonstrations/`, { items: [{ item_id: worst.item_id, evaluator_id: grounded.id }] });
    assert.equal(taught.status, 200, JSON.stringify(taught.body));
    const second = await rig.post(`/v1/review-queues/${q}/calibrate/`, { dataset_id: first.body.dataset_id });
    assert.equal(second.status, 202, JSON.stringify(second.body));
    assert.equal(second.body.items_added, 0, 'an extended dataset gets no duplicates');
    const run2 = await waitRun(second.body.calibration_runs[0].id);
    assert.equal(run2.previous_run_id, run1.id);
    assert.ok(run2.metrics[0].mae < m1.mae, `after (${run2.metrics[0].mae}) beats before (${m1.mae})`);
    assert.ok(run2.previous_metrics[0].intervals, 'before carries its intervals too');
    const read = await rig.get(`/v1/judges/${judge.id}/`);
    assert.equal(read.body.fitness, 'exploration', 'three items: far from monitoring');
  });

  it('refuses a queue with nothing adjudicated, and both dataset_id and dataset_name', async () => {
    const queue = await rig.post('/v1/review-queues/', { name: 'empty loop', judge_id: judge.id });
    const none = await rig.post(`/v1/review-queues/${queue.body.id}/calibrate/`, {});
    assert.equal(none.status, 400);
    assert.match(none.body.detail, /no adjudicated item/);
    const both = await rig.post(`/v1/review-queues/${queue.body.id}/calibrate/`, { dataset_id: 'x', dataset_name: 'y' });
    assert.equal(both.status, 400);
  });
});
