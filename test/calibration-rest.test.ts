// Calibration runs end to end over REST on the fake judge model (SPEC section 8): a judge measured
// against a labelled dataset through a real batch run, the metrics (checked against values worked
// out by hand below), the items by disagreement, the summary on judge and evaluator reads, the
// improvement loop (demonstrations -> new version -> calibration dropped -> new run side by side).
// TRIBUNAL_TEST_STORE=postgres runs it on PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { toolAnswer } from './helpers/fake-anthropic.ts';
import { evaluatorBody, startScoringRig, type ScoringRig } from './helpers/execute.ts';

let rig: ScoringRig;
let grounded: any;
let polite: any;
let judge: any;
let datasetId: string;
let itemIds: string[];

const MARK = /says-(\d\.\d+)/;

before(async () => {
  rig = await startScoringRig();
  grounded = await rig.createEvaluator(evaluatorBody({ name: 'Calib grounded' }));
  polite = await rig.createEvaluator(evaluatorBody({ name: 'Calib polite' }));
  judge = await rig.createJudge({ name: 'Calib judge', intent: 'Judges support replies.', evaluator_ids: [grounded.id, polite.id] });
  // The fake judge model: Grounded gives the score written in the judged response ("says-0.3"),
  // unless a scored example shows that same response (it learned: 0.8, the person's score); Polite always 0.9.
  rig.fake.respondWith((req) => {
    // The scored examples are in the system prompt (the static, cacheable part); the run's material in the user turn.
    const examples = req.system;
    const said = MARK.exec(req.prompt)?.[1];
    let score = 0.9;
    if (req.system.includes('Name: Calib grounded\n')) score = examples.includes(`says-${said}`) ? 0.8 : Number(said);
    return toolAnswer({ justification: `The response says ${said}.`, score }, { usage: { input_tokens: 100, output_tokens: 20 } });
  });
  const ds = await rig.post('/v1/datasets/', { name: 'calib golden' });
  datasetId = ds.body.id;
  // Person vs judge for Grounded (threshold 0.5):
  //   item 0: person 1.0, judge 0.9   both pass       |diff| 0.1
  //   item 1: person 0.8, judge 0.3   person pass     |diff| 0.5  <- the worst disagreement
  //   item 2: person 0.2, judge 0.4   both fail       |diff| 0.2
  //   item 3: person 0.0, judge 0.1   both fail       |diff| 0.1
  //   item 4: no label for Grounded (Polite only: person 1.0, judge 0.9)
  // By hand: n 4; MAE (0.1+0.5+0.2+0.1)/4 = 0.225; RMSE sqrt((.01+.25+.04+.01)/4) = sqrt(0.0775) = 0.27839...;
  //   confusion tp 1, fn 1, tn 2, fp 0; accuracy 3/4; majority baseline 2/4;
  //   person pass 2/4, judge pass 1/4: pe = .5*.25 + .5*.75 = .5, kappa = (.75 - .5)/(1 - .5) = 0.5.
  //   Pearson: scipy.stats.pearsonr([1,.8,.2,0],[.9,.3,.4,.1])[0] = 0.7611493191726709; Spearman: ranks [4,3,2,1] vs [4,2,3,1]: 1 - 6*2/(4*15) = 0.8.
  const items = [
    { request: 'Q0', response: 'Open at 9. says-0.9', expected_scores: { 'Calib grounded': 1 } },
    { request: 'Q1', response: 'Open at 10. says-0.3', expected_scores: { [grounded.id]: 0.8 }, metadata: { note: 'The hours page says 10 on Saturdays.' } },
    { request: 'Q2', response: 'Closed. says-0.4', expected_scores: { 'Calib grounded': 0.2 } },
    { request: 'Q3', response: 'No idea. says-0.1', expected_scores: { 'Calib grounded': 0 } },
    { request: 'Q4', response: 'Thanks! says-0.5', expected_scores: { 'Calib polite': 1 } },
  ];
  const added = await rig.post(`/v1/datasets/${datasetId}/items/`, { items });
  assert.equal(added.status, 201, JSON.stringify(added.body));
  itemIds = added.body.ids;
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

const near = (a: number | null, b: number, what: string) => assert.ok(a !== null && Math.abs(a - b) < 1e-12, `${what}: ${a} vs ${b}`);

describe('calibration runs over REST', () => {
  let first: any;

  it('refuses bad starts with a clear 4xx', async () => {
    const empty = (await rig.post('/v1/datasets/', { name: 'calib unlabelled' })).body.id;
    await rig.post(`/v1/datasets/${empty}/items/`, { items: [{ response: 'x', expected_scores: { 'Some other evaluator': 1 } }] });
    const unlabelled = await rig.post('/v1/calibration-runs/', { judge_id: judge.id, dataset_id: empty });
    assert.equal(unlabelled.status, 400, JSON.stringify(unlabelled.body));
    assert.equal(unlabelled.body.code, 'validation_error');
    assert.match(unlabelled.body.detail, /no expected_scores/);
    assert.match(unlabelled.body.detail, /Calib grounded/);
    assert.match(unlabelled.body.detail, /"expected_scores": \{"Calib grounded":0.8,"Calib polite":0.8\}/);
    assert.equal((await rig.post('/v1/calibration-runs/', { judge_id: judge.id, evaluator_id: grounded.id, dataset_id: datasetId })).status, 400);
    assert.equal((await rig.post('/v1/calibration-runs/', { dataset_id: datasetId })).status, 400);
    assert.equal((await rig.post('/v1/calibration-runs/', { judge_id: judge.id, dataset_id: 'no such dataset' })).status, 404);
    assert.equal((await rig.post('/v1/calibration-runs/', { judge_id: judge.id, dataset_id: datasetId, threshold: 2 })).status, 400);
    assert.equal((await rig.get('/v1/calibration-runs/cal_0000000000000000000000000000000a/')).status, 404);
  });

  it('is uncalibrated before any run', async () => {
    assert.equal((await rig.get(`/v1/judges/${judge.id}/`)).body.calibration, null);
    assert.equal((await rig.get(`/v1/evaluators/${grounded.id}/`)).body.calibration, null);
  });

  it('runs the judge over the dataset as a batch and measures each evaluator', async () => {
    const started = await rig.post('/v1/calibration-runs/', { judge_id: 'Calib judge', dataset_id: 'calib golden' });
    assert.equal(started.status, 202, JSON.stringify(started.body));
    assert.match(started.body.id, /^cal_/);
    assert.match(started.body.batch_execution_id, /^bat_/);
    assert.equal(started.body.metrics, null);
    assert.equal(started.body.threshold, 0.5);
    assert.equal(started.body.previous_run_id, null);
    assert.deepEqual(started.body.evaluator_versions, [
      { evaluator_id: grounded.id, evaluator_name: 'Calib grounded', version: 1 },
      { evaluator_id: polite.id, evaluator_name: 'Calib polite', version: 1 },
    ]);
    first = await waitDone(started.body.id);
    assert.equal(first.status, 'completed');
    assert.ok(first.finished_at);
    const batch = await rig.get(`/v1/judges/batch-executions/${first.batch_execution_id}/`);
    assert.equal(batch.body.status, 'completed');
    assert.equal(batch.body.total, 5);

    const [g, p] = first.metrics;
    assert.equal(g.evaluator_id, grounded.id);
    assert.equal(g.evaluator_version, 1);
    assert.equal(g.n, 4);
    near(g.mae, 0.225, 'mae');
    near(g.rmse, Math.sqrt(0.0775), 'rmse');
    near(g.kappa, 0.5, 'kappa');
    near(g.accuracy, 0.75, 'accuracy');
    near(g.majority_baseline, 0.5, 'majority');
    near(g.spearman, 0.8, 'spearman');
    near(g.pearson, 0.7611493191726709, 'pearson');
    assert.deepEqual(g.confusion, { tp: 1, fp: 0, tn: 2, fn: 1 });
    // Polite: one label, so no correlation; both pass: kappa undefined.
    assert.equal(p.evaluator_id, polite.id);
    assert.equal(p.n, 1);
    near(p.mae, 0.1, 'polite mae');
    assert.equal(p.pearson, null);
    assert.equal(p.kappa, null);
  });

  it('lists the items largest disagreement first, each linked to its run', async () => {
    const res = await rig.get(`/v1/calibration-runs/${first.id}/items/?limit=2`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.results.length, 2);
    const top = res.body.results[0];
    assert.equal(top.item_id, itemIds[1]);
    assert.equal(top.evaluator_id, grounded.id);
    assert.equal(top.expected, 0.8);
    assert.equal(top.score, 0.3);
    near(top.difference, -0.5, 'difference');
    assert.equal(top.justification, 'The response says 0.3.');
    assert.equal(top.note, 'The hours page says 10 on Saturdays.');
    const log = await rig.get(`/v1/execution-logs/${top.execution_log_id}/`);
    assert.equal(log.status, 200);
    assert.equal(log.body.response, 'Open at 10. says-0.3');
    const rest = await rig.get(`/v1/calibration-runs/${first.id}/items/?limit=2&cursor=${res.body.next_cursor}`);
    const all = [...res.body.results, ...rest.body.results, ...(await rig.get(`/v1/calibration-runs/${first.id}/items/?limit=50&cursor=${rest.body.next_cursor}`)).body.results];
    assert.equal(all.length, 5);
    const diffs = all.map((r: any) => Math.abs(r.difference));
    assert.deepEqual(
      diffs,
      [...diffs].sort((a, b) => b - a),
    );
    const polites = await rig.get(`/v1/calibration-runs/${first.id}/items/?evaluator_id=Calib%20polite`);
    assert.deepEqual(
      polites.body.results.map((r: any) => r.item_id),
      [itemIds[4]],
    );
    assert.equal((await rig.get(`/v1/calibration-runs/${first.id}/items/?cursor=bogus`)).status, 400);
    // The sorted items of a run are kept between pages, but an edit of the dataset shows at once.
    const edited = await rig.server.request('PATCH', `/v1/datasets/${datasetId}/items/${itemIds[4]}/`, { key: rig.key, body: { metadata: { note: 'Checked again.' } } });
    assert.equal(edited.status, 200, JSON.stringify(edited.body));
    const again = await rig.get(`/v1/calibration-runs/${first.id}/items/?evaluator_id=Calib%20polite`);
    assert.equal(again.body.results[0].note, 'Checked again.');
  });

  it('carries the summary on judge and evaluator reads (REST and the MCP tool handler alike)', async () => {
    const j = (await rig.get(`/v1/judges/${judge.id}/`)).body.calibration;
    // n 4 + 1; MAE weighted by n: (0.225*4 + 0.1*1)/5 = 0.2; kappa the lowest non-null (0.5).
    assert.equal(j.calibration_run_id, first.id);
    assert.equal(j.n, 5);
    near(j.mae, 0.2, 'judge mae');
    near(j.kappa, 0.5, 'judge kappa');
    assert.equal(j.finished_at, first.finished_at);
    const e = (await rig.get(`/v1/evaluators/${grounded.id}/`)).body.calibration;
    // h-review: kappa's 95% interval and fitness (n 4 is far below monitoring's 30: exploration).
    assert.deepEqual(e, {
      calibration_run_id: first.id,
      n: 4,
      mae: first.metrics[0].mae,
      kappa: first.metrics[0].kappa,
      kappa_interval: first.metrics[0].intervals.kappa,
      fitness: 'exploration',
      finished_at: first.finished_at,
    });
    assert.equal(j.fitness, 'exploration');
    assert.equal((await rig.get(`/v1/judges/${judge.id}/`)).body.fitness, 'exploration');
    const listed = await rig.get(`/v1/calibration-runs/?judge_id=${judge.id}`);
    assert.deepEqual(
      listed.body.results.map((r: any) => r.id),
      [first.id],
    );
    assert.deepEqual(
      (await rig.get(`/v1/calibration-runs/?evaluator_id=${polite.id}&status=completed`)).body.results.map((r: any) => r.id),
      [first.id],
    );
  });

  it('turns a chosen disagreement into a demonstration (new version, calibration dropped), and the next run compares', async () => {
    const bad = await rig.post(`/v1/calibration-runs/${first.id}/demonstrations/`, { items: [{ item_id: itemIds[4], evaluator_id: grounded.id }] });
    assert.equal(bad.status, 400, JSON.stringify(bad.body));
    assert.match(bad.body.detail, /no expected score for Calib grounded/);
    const taught = await rig.post(`/v1/calibration-runs/${first.id}/demonstrations/`, { items: [{ item_id: itemIds[1], evaluator_id: 'Calib grounded' }] });
    assert.equal(taught.status, 200, JSON.stringify(taught.body));
    assert.deepEqual(taught.body.evaluators, [{ evaluator_id: grounded.id, evaluator_name: 'Calib grounded', version: 2, added: 1, demonstrations: 1 }]);
    const evaluator = (await rig.get(`/v1/evaluators/${grounded.id}/`)).body;
    assert.deepEqual(evaluator.demonstrations, [{ request: 'Q1', response: 'Open at 10. says-0.3', score: 0.8, justification: 'The hours page says 10 on Saturdays.' }]);
    // The new version is not calibrated yet; neither is the judge that applies it.
    assert.equal(evaluator.calibration, null);
    assert.equal((await rig.get(`/v1/judges/${judge.id}/`)).body.calibration, null);
    // The untouched evaluator keeps its calibration.
    assert.equal((await rig.get(`/v1/evaluators/${polite.id}/`)).body.calibration.calibration_run_id, first.id);
    // Teaching the same item again adds nothing.
    const again = await rig.post(`/v1/calibration-runs/${first.id}/demonstrations/`, { items: [{ item_id: itemIds[1], evaluator_id: grounded.id }] });
    assert.equal(again.body.evaluators[0].added, 0);
    assert.equal(again.body.evaluators[0].version, 2);

    const second = await waitDone((await rig.post('/v1/calibration-runs/', { judge_id: judge.id, dataset_id: datasetId })).body.id);
    assert.equal(second.previous_run_id, first.id);
    assert.deepEqual(second.previous_metrics, first.metrics);
    assert.equal(second.evaluator_versions[0].version, 2);
    // Item 1 now scores 0.8 (the example): MAE (0.1+0+0.2+0.1)/4 = 0.1, both pass -> kappa 1.
    near(second.metrics[0].mae, 0.1, 'new mae');
    near(second.metrics[0].kappa, 1, 'new kappa');
    assert.equal((await rig.get(`/v1/judges/${judge.id}/`)).body.calibration.calibration_run_id, second.id);
    assert.equal((await rig.get(`/v1/evaluators/${grounded.id}/`)).body.calibration.calibration_run_id, second.id);
  });

  it('measures one evaluator alone', async () => {
    const run = await waitDone((await rig.post('/v1/calibration-runs/', { evaluator_id: polite.id, dataset_id: datasetId, threshold: 0.95 })).body.id);
    assert.equal(run.judge_id, null);
    assert.equal(run.evaluator_id, polite.id);
    assert.equal(run.metrics.length, 1);
    // Threshold 0.95: person 1.0 passes, judge 0.9 fails.
    assert.deepEqual(run.metrics[0].confusion, { tp: 0, fp: 0, tn: 0, fn: 1 });
  });
});
