// `tribunal calibrate` and `tribunal annotate` end to end: the real command in a child process
// against a real server on the fake judge model. TRIBUNAL_TEST_STORE=postgres runs it on PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { toolAnswer } from './helpers/fake-anthropic.ts';
import { startCliRig, type CliResult, type CliRig } from './helpers/cli.ts';

let rig: CliRig;
let judgeId: string;
let evaluatorId: string;

const req = (method: string, path: string, body?: unknown) => rig.server.request(method, path, { key: rig.key, body });

before(async () => {
  rig = await startCliRig();
  // The judge model gives the score written in the judged response ("says-0.3").
  rig.fake.respondWith((r) => {
    const said = /says-(\d\.\d+)/.exec(r.prompt.split('# Material to evaluate')[1] ?? '')?.[1] ?? '0.5';
    return toolAnswer({ justification: `It says ${said}.`, score: Number(said) });
  });
  const ev = await req('POST', '/v1/evaluators/', { name: 'CLI calib grounded', intent: 'Grounded answers.', rubric: 'High (1): grounded. Low (0): not.' });
  evaluatorId = ev.body.id;
  judgeId = (await req('POST', '/v1/judges/', { name: 'CLI calib judge', intent: 'Replies.', evaluator_ids: [evaluatorId] })).body.id;
  await req('POST', '/v1/datasets/', { name: 'cli labelled' });
  // Person vs judge at 0.5: (1, .9) (0, .1) agree; (.8, .3) disagrees. By hand: MAE (.1+.1+.5)/3 = 0.233; accuracy 2/3; person pass 2/3,
  // judge pass 1/3: pe = 2/3*1/3 + 1/3*2/3 = 4/9; kappa = (2/3 - 4/9)/(5/9) = 0.4.
  const items = [
    { response: 'a says-0.9', expected_scores: { 'CLI calib grounded': 1 } },
    { response: 'b says-0.1', expected_scores: { 'CLI calib grounded': 0 } },
    { response: 'c says-0.3', expected_scores: { 'CLI calib grounded': 0.8 } },
  ];
  assert.equal((await req('POST', '/v1/datasets/cli%20labelled/items/', { items })).status, 201);
});
after(() => rig.close());

const show = (r: CliResult) => `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;

test('calibrate prints the metrics table and passes a gate it meets', async () => {
  const r = await rig.cli(['calibrate', '--judge', 'CLI calib judge', '--dataset', 'cli labelled', '--min-kappa', '0.4', '--poll', '0.05']);
  assert.equal(r.code, 0, show(r));
  assert.match(r.stdout, /EVALUATOR\s+VER\s+N\s+MAE/);
  assert.match(r.stdout, /CLI calib grounded\s+1\s+3\s+0\.233/);
  assert.match(r.stdout, /0\.400/);
  assert.match(r.stdout, /1\/0\/1\/1/);
  assert.match(r.stdout, /Gate passed/);
  // The model stated no confidence: said so, not left blank.
  assert.match(r.stdout, /CLI calib grounded: no confidence on its results, no ECE\./);
});

test('calibrate exits 1 below the gate, and shows the previous run side by side', async () => {
  const r = await rig.cli(['calibrate', '--judge', judgeId, '--dataset', 'cli labelled', '--min-kappa', '0.6', '--poll', '0.05']);
  assert.equal(r.code, 1, show(r));
  assert.match(r.stdout, /Gate failed: kappa below 0\.6 for CLI calib grounded \(0\.400\)/);
  assert.match(r.stdout, /0\.400 \(was 0\.400\)/);
  const j = await rig.cli(['calibrate', '--evaluator', evaluatorId, '--dataset', 'cli labelled', '--threshold', '0.2', '--json', '--poll', '0.05']);
  assert.equal(j.code, 0, show(j));
  const run = JSON.parse(j.stdout);
  assert.equal(run.status, 'completed');
  assert.equal(run.threshold, 0.2);
  assert.equal(run.gate, null);
  // At 0.2 every pair agrees but the last (person .8 pass, judge .3 pass): all agree -> accuracy 1.
  assert.equal(run.metrics[0].accuracy, 1);
});

test('calibrate refuses bad usage and unlabelled datasets clearly', async () => {
  assert.equal((await rig.cli(['calibrate', '--dataset', 'cli labelled'])).code, 2);
  assert.equal((await rig.cli(['calibrate', '--judge', judgeId])).code, 2);
  assert.equal((await rig.cli(['calibrate', '--judge', judgeId, '--dataset', 'cli labelled', '--min-kappa', '3'])).code, 2);
  await req('POST', '/v1/datasets/', { name: 'cli unlabelled' });
  await req('POST', '/v1/datasets/cli%20unlabelled/items/', { items: [{ response: 'x' }] });
  const r = await rig.cli(['calibrate', '--judge', judgeId, '--dataset', 'cli unlabelled']);
  assert.equal(r.code, 7, show(r));
  assert.match(r.stderr, /no expected_scores/);
});

test("annotate records a person's score, and a second call edits it", async () => {
  const run = await req('POST', `/v1/judges/${judgeId}/execute/`, { response: 'x says-0.7' });
  const logId = run.body.execution_log_id;
  const first = await rig.cli(['annotate', logId, '--evaluator', 'CLI calib grounded', '--score', '0.2', '--note', 'Not in the sources.']);
  assert.equal(first.code, 0, show(first));
  assert.match(first.stdout, /Recorded annotation ann_/);
  const second = await rig.cli(['annotate', logId, '--evaluator', evaluatorId, '--score', '0.3', '--json']);
  assert.equal(second.code, 0, show(second));
  const a = JSON.parse(second.stdout);
  assert.equal(a.score, 0.3);
  // issue 26: the note explained the earlier score; a new score without --note clears it.
  assert.equal(a.note, null);
  const listed = await req('GET', `/v1/annotations/?execution_log_id=${logId}`);
  assert.equal(listed.body.results.length, 1);
  assert.equal((await rig.cli(['annotate', logId, '--evaluator', 'Nope', '--score', '0.3'])).code, 7);
  assert.equal((await rig.cli(['annotate', logId, '--evaluator', evaluatorId, '--score', '1.3'])).code, 2);
});

// h-review: the fitness gate (SPEC section 17).
test('calibrate --min-fitness gates CI on what the calibration permits', async () => {
  const gating = await rig.cli(['calibrate', '--judge', judgeId, '--dataset', 'cli labelled', '--min-fitness', 'gating', '--poll', '0.05']);
  assert.equal(gating.code, 1, show(gating));
  assert.match(gating.stdout, /KAPPA 95%\s+FITNESS/);
  assert.match(gating.stdout, /Fitness gate failed: below gating for CLI calib grounded \(exploration\)/);
  const exploration = await rig.cli(['calibrate', '--judge', judgeId, '--dataset', 'cli labelled', '--min-fitness', 'exploration', '--json', '--poll', '0.05']);
  assert.equal(exploration.code, 0, show(exploration));
  const run = JSON.parse(exploration.stdout);
  assert.deepEqual(run.fitness_gate, { min_fitness: 'exploration', passed: true, failing: [] });
  assert.equal(run.metrics[0].intervals.kappa.length, 2);
  assert.equal((await rig.cli(['calibrate', '--judge', judgeId, '--dataset', 'cli labelled', '--min-fitness', 'great'])).code, 2);
});

test('calibrate prints how well the stated confidence predicted agreement (ECE and reliability bins)', async () => {
  // The same scores, now with a stated confidence of 0.9 on every answer. Within 0.2 of the person:
  // (1, .9) and (0, .1) agree, (.8, .3) does not. One bin, 0.9-1.0: n 3, mean 0.9, agreement 2/3; ECE |0.667 - 0.9| = 0.233.
  rig.fake.respondWith((r) => {
    const said = /says-(\d\.\d+)/.exec(r.prompt.split('# Material to evaluate')[1] ?? '')?.[1] ?? '0.5';
    return toolAnswer({ justification: `It says ${said}.`, score: Number(said), confidence: 0.9 });
  });
  const r = await rig.cli(['calibrate', '--judge', judgeId, '--dataset', 'cli labelled', '--poll', '0.05']);
  assert.equal(r.code, 0, show(r));
  assert.match(r.stdout, /agreement: \|judge - person\| <= 0\.2/);
  assert.match(r.stdout, /CLI calib grounded: ECE 0\.233/);
  assert.match(r.stdout, /CONFIDENCE\s+N\s+MEAN CONFIDENCE\s+AGREEMENT/);
  assert.match(r.stdout, /0\.9-1\.0\s+3\s+0\.900\s+0\.667/);
  const j = await rig.cli(['calibrate', '--judge', judgeId, '--dataset', 'cli labelled', '--json', '--poll', '0.05']);
  const run = JSON.parse(j.stdout);
  assert.ok(Math.abs(run.metrics[0].ece - 0.7 / 3) < 1e-9, String(run.metrics[0].ece));
  assert.equal(run.metrics[0].reliability.length, 10);
});
