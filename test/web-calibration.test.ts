// The web app's calibration pages in Chromium, on the fake judge model: annotate a run on its log page
// (created, then edited: one annotation), start a calibration of a judge over a small labelled dataset,
// watch the report fill in (metrics, one scatter circle per scored item, confusion matrix, disagreements
// largest first linking to their runs), teach the evaluator from the worst disagreement, and see the
// next run beside the previous one. TRIBUNAL_TEST_STORE=postgres runs it on PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { chromiumAvailable, launchBrowser, type BrowserRig } from './helpers/browser.ts';
import { toolAnswer } from './helpers/fake-anthropic.ts';
import { evaluatorBody, startScoringRig, type ScoringRig } from './helpers/execute.ts';

const skip = chromiumAvailable() || process.env.CI ? false : 'Chromium is not installed at /usr/bin/chromium (apt-get install -y chromium)';
const MARK = /says-(\d\.\d+)/;

describe('Calibration pages in Chromium', { skip }, () => {
  let rig: ScoringRig;
  let b: BrowserRig;
  let grounded: any;
  let judge: any;
  let logId: string;

  before(async () => {
    rig = await startScoringRig();
    grounded = await rig.createEvaluator(evaluatorBody({ name: 'Web grounded' }));
    const polite = await rig.createEvaluator(evaluatorBody({ name: 'Web polite' }));
    // issue 26 item 2: an evaluator of this organization named like a preset.
    await rig.createEvaluator(evaluatorBody({ name: 'Clarity' }));
    judge = await rig.createJudge({ name: 'Web judge', intent: 'Judges support replies.', evaluator_ids: [grounded.id, polite.id] });
    // Grounded gives the score written in the response ("says-0.3") unless a demonstration shows that
    // same response (then 0.8, the person's score); Polite always 0.9.
    rig.fake.respondWith((req) => {
      // The scored examples are in the system prompt (the static, cacheable part); the run's material in the user turn.
      const examples = req.system;
      const said = MARK.exec(req.prompt)?.[1];
      let score = 0.9;
      const grounded = req.system.includes('Name: Web grounded\n');
      if (grounded) score = examples.includes(`says-${said}`) ? 0.8 : Number(said);
      // Grounded states a confidence of 0.8 (Polite states none): the reliability table below.
      return toolAnswer({ justification: `The response says ${said}.`, score, ...(grounded ? { confidence: 0.8 } : {}) });
    });
    const ran = await rig.post(`/v1/judges/${judge.id}/execute/`, { request: 'When do you open?', response: 'At 10. says-0.3' });
    assert.equal(ran.status, 200, JSON.stringify(ran.body));
    logId = ran.body.execution_log_id;
    const ds = await rig.post('/v1/datasets/', { name: 'web golden' });
    // Grounded, person against judge: 1.0/0.9, 0.8/0.3 (the worst), 0.2/0.4, 0.0/0.1 → n 4, MAE 0.225, kappa 0.5.
    const added = await rig.post(`/v1/datasets/${ds.body.id}/items/`, {
      items: [
        { request: 'Q0', response: 'Open at 9. says-0.9', expected_scores: { 'Web grounded': 1 } },
        { request: 'Q1', response: 'Open at 10. says-0.3', expected_scores: { 'Web grounded': 0.8 }, metadata: { note: 'The hours page says 10.' } },
        { request: 'Q2', response: 'Closed. says-0.4', expected_scores: { 'Web grounded': 0.2 } },
        { request: 'Q3', response: 'No idea. says-0.1', expected_scores: { 'Web grounded': 0 } },
        { request: 'Q4', response: 'Thanks! says-0.5', expected_scores: { 'Web polite': 1 } },
        // issue 26 item 8: an item without labels is scored but not measured: 6 items, 5 labels.
        { request: 'Q5', response: 'Bye. says-0.6' },
      ],
    });
    assert.equal(added.status, 201, JSON.stringify(added.body));
    b = await launchBrowser();
  });
  after(async () => {
    await b?.close();
    await rig?.close();
  });

  const heading = (name: string | RegExp) => b.page.getByRole('heading', { level: 1, name });

  it('annotates a run on its log page: the first save creates, the next edits the same annotation', async () => {
    const { page } = b;
    await page.goto(`${rig.server.url}/app/sign-in`);
    await page.getByRole('textbox', { name: 'API key' }).fill(rig.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await heading('Judges').waitFor();

    await page.goto(`${rig.server.url}/app/logs/${logId}`);
    await heading('Run of Web judge').waitFor();
    // The confidence Grounded stated, with its source; Polite stated none, so shows none.
    const results = page.getByRole('table', { name: 'Evaluator results' });
    await results.getByText('confidence 0.80 (stated by the model)').waitFor();
    assert.equal(await results.locator('.confidence').count(), 1);
    const group = page.getByRole('group', { name: /Web grounded/ });
    await group.getByText('Not annotated yet.').waitFor();
    await group.getByRole('spinbutton', { name: 'Score it should have had' }).fill('0.8');
    await group.getByRole('textbox', { name: 'Note' }).fill('The hours page says 10.');
    await group.getByRole('button', { name: 'Save verdict' }).click();
    await group.getByText('Saved.').waitFor();
    let list = await rig.get(`/v1/annotations/?execution_log_id=${logId}`);
    assert.equal(list.body.results.length, 1);
    assert.equal(list.body.results[0].evaluator_id, grounded.id);
    assert.equal(list.body.results[0].score, 0.8);
    assert.equal(list.body.results[0].note, 'The hours page says 10.');

    await group.getByRole('spinbutton', { name: 'Score it should have had' }).fill('0.7');
    await group.getByRole('button', { name: 'Save verdict' }).click();
    await group.getByText(/Person: 0\.70/).waitFor();
    list = await rig.get(`/v1/annotations/?execution_log_id=${logId}`);
    assert.equal(list.body.results.length, 1, 'edited, not duplicated');
    assert.equal(list.body.results[0].score, 0.7);

    // A fresh load shows the saved annotation; an out-of-range score is refused by the form.
    await page.reload();
    await heading('Run of Web judge').waitFor();
    await page
      .getByRole('group', { name: /Web grounded/ })
      .getByText(/Person: 0\.70 \(judge 0\.30\) — The hours page says 10\./)
      .waitFor();
    await page
      .getByRole('group', { name: /Web polite/ })
      .getByText('Not annotated yet.')
      .waitFor();
    await b.screenshot('calibration-annotate');
    assert.deepEqual(b.errors.splice(0), []);
  });

  it('starts a calibration and shows the report: metrics, scatter points, confusion, disagreements linking to runs', async () => {
    const { page } = b;
    await page.goto(`${rig.server.url}/app/judges/${judge.id}`);
    await page.getByText('uncalibrated').waitFor();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Calibrations', exact: true }).click();
    await heading('Calibrations').waitFor();
    await page.getByText('No calibrations yet').waitFor();
    // issue 26 item 2: two evaluators named Clarity, each with its owner.
    const labels = await page.getByLabel('What to measure').locator('option').allTextContents();
    assert.ok(labels.includes('Clarity (yours)') && labels.includes('Clarity (preset)'), labels.join(' | '));
    assert.ok(labels.includes('Web grounded'), 'a name no other shares stays bare');
    await page.getByLabel('What to measure').selectOption({ label: 'Web judge' });
    await page.getByLabel('Dataset').selectOption({ label: 'web golden (6 items)' });
    await page.getByRole('button', { name: 'Start calibration' }).click();
    await heading('Calibration of Web judge').waitFor();

    // The page polls while the batch runs, then shows one section per labelled evaluator.
    const section = page.getByRole('region', { name: 'Web grounded v1', exact: true });
    await section.waitFor({ timeout: 20_000 });
    assert.equal(await page.getByRole('region', { name: 'Web polite v1', exact: true }).count(), 1);
    const metrics = section.getByRole('table', { name: 'Metrics of Web grounded' });
    assert.equal(await metrics.locator('tr[data-metric="n"] td').first().textContent(), '4');
    assert.equal(await metrics.locator('tr[data-metric="kappa"] td').first().textContent(), '0.500');
    assert.equal(await metrics.locator('tr[data-metric="mae"] td').first().textContent(), '0.225');
    assert.equal(await metrics.locator('tr[data-metric="accuracy"] td').first().textContent(), '0.750');
    const confusion = section.getByRole('table', { name: 'Confusion matrix of Web grounded' });
    assert.deepEqual(await confusion.locator('td.num').allTextContents(), ['1', '1', '0', '2']); // tp fn / fp tn
    // Confidence 0.8 on all four; within 0.2 of the person: 1.0/0.9, 0.2/0.4, 0.0/0.1 agree, 0.8/0.3 does not.
    // One bin, 0.8-0.9: 4 items, mean 0.8, agreement 0.75; ECE |0.75 - 0.8| = 0.05.
    const reliability = section.getByRole('table', { name: 'Reliability of Web grounded' });
    assert.deepEqual(await reliability.locator('tbody tr').allTextContents(), ['0.8–0.940.8000.750']);
    await section.getByText(/Expected calibration error 0\.050/).waitFor();
    await page
      .getByRole('region', { name: 'Web polite v1', exact: true })
      .getByText('The judge gave no confidence on these results, so there is nothing to check it against.')
      .waitFor();

    // One circle per scored item, at the person's (x) and the judge's (y) score, each opening its run.
    const circles = section.locator('svg.scatter circle.dot');
    assert.equal(await circles.count(), 4);
    assert.equal(await page.getByRole('region', { name: 'Web polite v1', exact: true }).locator('svg.scatter circle.dot').count(), 1);
    const worst = section.locator('svg.scatter a', { has: page.locator('circle.far') });
    assert.equal(await worst.count(), 1);
    assert.equal(await worst.getAttribute('aria-label'), 'person 0.80, judge 0.30');
    // issue 26 item 8: the scatter's colours have a legend.
    assert.deepEqual(await section.locator('.scatter-legend li').allTextContents(), ['judge within 0.25 of the person', 'judge 0.25 or more from the person']);

    const rows = section.getByRole('table', { name: 'Disagreements of Web grounded' }).locator('tbody tr');
    assert.equal(await rows.count(), 4);
    assert.match((await rows.first().textContent()) ?? '', /0\.80.*0\.30.*-0\.50.*The hours page says 10\./);
    const links = section.getByRole('link', { name: 'Open run' });
    assert.equal(await links.count(), 4);
    const logHref = await links.first().getAttribute('href');
    const worstLog = await rig.get(`/v1/execution-logs/${logHref!.split('/').pop()}/`);
    assert.equal(worstLog.body.response, 'Open at 10. says-0.3');
    await b.screenshot('calibration-report');

    await links.first().click();
    await heading('Run of Web judge').waitFor();
    await page.goBack();
    await heading('Calibration of Web judge').waitFor();

    // The judge and evaluator pages now show the summary.
    await page.goto(`${rig.server.url}/app/judges/${judge.id}`);
    await page
      .locator('.calibration-summary')
      .getByText(/κ 0\.500 · MAE 0\.200 on 5 labelled items/)
      .waitFor();
    await page.locator('.calibration-summary').getByText('exploration', { exact: true }).waitFor(); // h-review: fitness, not a bare "calibrated"
    await page.goto(`${rig.server.url}/app/evaluators/${grounded.id}`);
    await page
      .locator('.calibration-summary')
      .getByText(/κ 0\.500 · MAE 0\.225 on 4 labelled items/)
      .waitFor();
    assert.deepEqual(b.errors.splice(0), []);
  });

  it('teaches the evaluator from the worst disagreement; the next run shows the previous metrics beside', async () => {
    const { page } = b;
    await page.goto(`${rig.server.url}/app/calibrations`);
    // issue 26 item 8: "Items" counts the run's items (6), not its labels (5).
    await page.locator('tbody tr td[data-items]').first().getByText('6', { exact: true }).waitFor();
    await page.locator('tbody tr').first().getByRole('link').click();
    const section = page.getByRole('region', { name: 'Web grounded v1', exact: true });
    await section.waitFor();
    await section.getByRole('checkbox', { name: /person 0\.80, judge 0\.30/ }).check();
    await section.getByRole('button', { name: 'Add the chosen items as demonstrations' }).click();
    await section.getByText(/Web grounded: 1 demonstration added \(version 2 now holds 1\)/).waitFor();
    const ev = await rig.get(`/v1/evaluators/${grounded.id}/`);
    assert.equal(ev.body.version, 2);
    assert.equal(ev.body.demonstrations[0].score, 0.8);
    assert.equal(ev.body.calibration, null, 'a new version is uncalibrated');

    await page.goto(`${rig.server.url}/app/calibrations?judge_id=${judge.id}`);
    await page.getByLabel('Dataset').selectOption({ label: 'web golden (6 items)' });
    await page.getByRole('button', { name: 'Start calibration' }).click();
    const next = page.getByRole('region', { name: 'Web grounded v2', exact: true });
    await next.waitFor({ timeout: 20_000 });
    const metrics = next.getByRole('table', { name: 'Metrics of Web grounded' });
    await metrics.getByRole('columnheader', { name: 'Previous run (v1)' }).waitFor();
    assert.deepEqual(await metrics.locator('tr[data-metric="mae"] td').allTextContents(), ['0.100', '0.225']);
    assert.deepEqual(await metrics.locator('tr[data-metric="kappa"] td').allTextContents(), ['1.000', '0.500']);
    // issue 26 item 8: the taught item now agrees (0.80 and 0.80): not listed among the disagreements.
    const rows = next.getByRole('table', { name: 'Disagreements of Web grounded' }).locator('tbody tr');
    await rows.first().waitFor();
    assert.equal(await rows.count(), 3);
    assert.doesNotMatch((await rows.allTextContents()).join('|'), /0\.80.*0\.80/);
    await page.getByRole('link', { name: 'the last run on this dataset' }).waitFor();
    await b.screenshot('calibration-report-second');
    assert.deepEqual(b.errors.splice(0), []);
  });
});
