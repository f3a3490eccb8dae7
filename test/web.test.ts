// The web app in real headless Chromium, as a new user would use it: a demo key, every page, a key
// created and revoked, an evaluator written and edited, a judge assembled and tried against the fake
// judge model, a judge generated through its follow-up questions, logs filtered, phone width, sign-out.
// Any browser console error or page error fails the test. Screenshots go to test-results/web/.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import path from 'node:path';
import { ARTIFACTS, launchBrowser, chromiumAvailable, LAPTOP, PHONE, type BrowserRig } from './helpers/browser.ts';
import { defaultResponder, startFakeAnthropic, toolAnswer, type FakeAnthropic } from './helpers/fake-anthropic.ts';
import { contextAnswer, designAnswer, newEvaluator, stagesAnswer } from './helpers/generation.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

// Outside CI a machine without Chromium skips the browser tests; in CI (.ci/run installs it) its
// absence is a failure, never a silent skip.
const skip = chromiumAvailable() || process.env.CI ? false : 'Chromium is not installed at /usr/bin/chromium (apt-get install -y chromium)';

describe('web app in Chromium', { skip }, () => {
  let fake: FakeAnthropic;
  let server: TestServer;
  let b: BrowserRig;
  /** Scores the fake judge model gives, by evaluator name found in the prompt. */
  let scores: Record<string, number> = {};
  const pageUrls: Record<string, string> = {};
  /** The demo key the browser signed in with, for setting up data over REST. */
  let demoKey = '';

  const app = (path: string) => `${server.url}${path}`;
  // The steps build on each other: after a failure the rest are skipped instead of timing out one by one.
  let broken = false;
  const step = (name: string, fn: () => Promise<void>) =>
    it(name, async (t) => {
      if (broken) return t.skip('an earlier step failed');
      try {
        await fn();
      } catch (err) {
        broken = true;
        await b.screenshot(`failed-${name.slice(0, 40).replace(/\W+/g, '-')}`).catch(() => {});
        throw err;
      }
    });
  const heading = (name: string | RegExp) => b.page.getByRole('heading', { level: 1, name });
  const nav = (name: string) => b.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true });

  before(async () => {
    fake = await startFakeAnthropic();
    fake.respondWith((req) => {
      if (req.toolName !== 'submit_evaluation') return defaultResponder(req);
      const name = Object.keys(scores).find((n) => req.system.includes(`Name: ${n}`));
      const score = name ? scores[name] : 0.5;
      return toolAnswer({ justification: `The fake judge scored this ${score} for ${name ?? 'an evaluator'}.`, score }, { usage: { input_tokens: 420, output_tokens: 60 } });
    });
    server = await startTestServer({
      ANTHROPIC_API_KEY: 'dummy',
      ANTHROPIC_BASE_URL: fake.url,
      TRIBUNAL_MODEL_BACKOFF: '1ms',
      TRIBUNAL_MODEL_BACKOFF_MAX: '4ms',
      TRIBUNAL_RATE_LIMIT: '100000',
    });
    b = await launchBrowser();
    await b.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
  });

  afterEach(() => {
    // Every step must leave the console clean.
    assert.deepEqual(b.errors.splice(0), []);
  });

  after(async () => {
    await b?.close();
    await server?.close();
    await fake?.close();
  });

  step('redirects to sign-in, shows a bad key problem beside the field, and signs in with a demo key', async () => {
    const { page } = b;
    await page.goto(app('/'));
    await heading('Sign in to Tribunal').waitFor();
    assert.equal(new URL(page.url()).pathname, '/app/sign-in');
    await b.screenshot('01-sign-in');

    b.expectFailedRequest('/app/session', 401);
    await page.getByLabel('API key', { exact: true }).fill('trb_not_a_real_key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'Malformed API key' }).waitFor();

    await page.getByRole('button', { name: 'Get a demo key' }).click();
    await heading('Judges').waitFor();
    demoKey = await page.getByLabel('Your demo API key').inputValue();
    assert.match(demoKey, /^trb_[0-9a-f]{16}_/);
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByText('Copied to the clipboard.').waitFor();

    // The session is an HttpOnly, SameSite=Strict cookie that page scripts cannot read.
    const cookies = await b.context.cookies(server.url);
    const session = cookies.find((c) => c.name === 'tribunal_session');
    assert.ok(session, 'session cookie set');
    assert.equal(session.httpOnly, true);
    assert.equal(session.sameSite, 'Strict');
    assert.ok(!session.value.includes(demoKey.slice(4, 20)), 'the cookie does not hold the key in clear');
    assert.equal(await page.evaluate(() => document.cookie), '');
    await b.screenshot('02-judges-empty');
  });

  step('creates a key (secret shown once, copy button) and revokes it after a confirmation', async () => {
    const { page } = b;
    await nav('API keys').click();
    await heading('API keys').waitFor();
    await page.getByRole('textbox', { name: 'Name', exact: true }).fill('CI key');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secretField = page.getByLabel('Secret API key');
    await secretField.waitFor();
    const secret = await secretField.inputValue();
    assert.match(secret, /^trb_[0-9a-f]{16}_/);
    await page.getByText('this is the only time it is shown').waitFor();
    const row = page.locator('tr', { hasText: 'CI key' });
    await row.getByText('active').waitFor();
    assert.equal((await server.request('GET', '/v1/judges/', { key: secret })).status, 200);
    await b.screenshot('03-keys-created');

    // Escape cancels the confirmation: nothing is revoked.
    await row.getByRole('button', { name: 'Revoke key CI key' }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke key “CI key”?' });
    await dialog.waitFor();
    await b.screenshot('04-keys-revoke-dialog');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    assert.equal((await server.request('GET', '/v1/judges/', { key: secret })).status, 200);

    await row.getByRole('button', { name: 'Revoke key CI key' }).click();
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    await row.getByText('revoked').waitFor();
    assert.equal(await row.getByRole('button', { name: /Revoke/ }).count(), 0);
    assert.equal((await server.request('GET', '/v1/judges/', { key: secret })).status, 401);
    await page.getByRole('button', { name: 'Done, I have stored it' }).click();
    assert.equal(await page.getByLabel('Secret API key').count(), 0, 'the secret is gone from the page');
    await b.screenshot('05-keys-revoked');
    pageUrls.keys = page.url();
  });

  step('lists evaluators with presets marked, creates one with a large rubric editor, and edits it into version 2', async () => {
    const { page } = b;
    await nav('Evaluators').click();
    await heading('Evaluators').waitFor();
    const table = page.getByRole('table', { name: 'Evaluators' });
    await table.waitFor();
    assert.ok((await table.locator('.badge.preset').count()) >= 30, 'the shipped presets are marked');
    await b.screenshot('06-evaluators');
    pageUrls.evaluators = page.url();

    await page.getByRole('link', { name: 'New evaluator' }).click();
    await heading('New evaluator').waitFor();
    await page.getByRole('textbox', { name: 'Name', exact: true }).fill('Cites Sources');
    await page.getByRole('textbox', { name: 'Intent', exact: true }).fill('Measures whether the answer cites the retrieved sources it relies on.');
    const rubric = page.getByRole('textbox', { name: 'Rubric', exact: true });
    const box = await rubric.boundingBox();
    assert.ok(box && box.height > 300, `the rubric editor is large (${box?.height}px)`);
    await rubric.fill('HIGH (0.8-1.0): every claim cites a source.\nMIDDLING (0.4-0.7): some claims cite sources.\nLOW (0.0-0.3): no citations.');
    await page.getByLabel('Needs contexts (retrieved snippets)').check();
    await b.screenshot('07-evaluator-new');
    await page.getByRole('button', { name: 'Create evaluator' }).click();
    await heading('Cites Sources').waitFor();
    await page.getByText('Evaluator “Cites Sources” created.').waitFor();

    await page.getByRole('link', { name: 'Edit' }).click();
    await heading('Edit Cites Sources').waitFor();
    await page
      .getByRole('textbox', { name: 'Rubric', exact: true })
      .fill('HIGH (0.8-1.0): every factual claim cites a retrieved source.\nMIDDLING (0.4-0.7): some do.\nLOW (0.0-0.3): none do.');
    await page.getByRole('button', { name: 'Save a new version' }).click();
    await page.getByText('is now at version 2').waitFor();
    await page.locator('.versions > li').nth(1).waitFor();
    assert.equal(await page.locator('.versions > li').count(), 2);
    await page.getByText('Version 1', { exact: false }).first().click(); // opens the older version's rubric
    await page.getByText('some claims cite sources').waitFor();
    await b.screenshot('08-evaluator');
    pageUrls.evaluator = page.url();
  });

  step('assembles a judge from evaluators and runs it through the try-it form against the fake judge model', async () => {
    const { page } = b;
    await nav('Judges').click();
    await page.getByRole('link', { name: 'New judge from evaluators' }).click();
    await heading('New judge from evaluators').waitFor();
    await page.getByRole('textbox', { name: 'Name', exact: true }).fill('Support answers');
    await page.getByRole('textbox', { name: 'Intent', exact: true }).fill('Judges the answers of a support assistant that answers from retrieved help articles.');
    const filter = page.getByLabel('Filter evaluators');
    await filter.fill('Cites');
    await page.getByRole('checkbox', { name: /Cites Sources/ }).check();
    await filter.fill('Helpfulness');
    await page.getByRole('checkbox', { name: /^Helpfulness/ }).check();
    await page.getByText('Order: Cites Sources → Helpfulness').waitFor();
    await page.getByRole('button', { name: 'Create judge' }).click();
    await heading('Support answers').waitFor();
    await page.getByRole('heading', { name: 'Evaluators (2)' }).waitFor();
    pageUrls.judge = page.url();

    // Editing keeps the evaluators and their order, and makes version 2.
    await page.getByRole('link', { name: 'Edit', exact: true }).click();
    await heading('Edit Support answers').waitFor();
    await page.getByText('Order: Cites Sources → Helpfulness').waitFor();
    await page.getByRole('textbox', { name: 'Stage', exact: true }).fill('answer writing');
    await page.getByRole('button', { name: 'Save judge' }).click();
    await page.getByText('Judge “Support answers” saved (version 2).').waitFor();
    await page.getByText('stage: answer writing').waitFor();
    assert.equal(new URL(page.url()).pathname, new URL(pageUrls.judge).pathname);

    // Missing contexts: the server's problem detail appears next to the Contexts field.
    await page.getByRole('textbox', { name: 'Request', exact: true }).fill('How do I reset my password?');
    await page.getByRole('textbox', { name: 'Response', exact: true }).fill('Open Settings, then Security, and choose Reset password [1].');
    b.expectFailedRequest('/execute/', 400);
    await page.getByRole('button', { name: 'Run judge' }).click();
    await page.getByRole('alert').filter({ hasText: 'Cites Sources needs `contexts`' }).waitFor();
    await page.locator('[data-field="contexts"] .field-error', { hasText: 'required by evaluator Cites Sources' }).waitFor();
    await b.screenshot('09-judge-missing-contexts');

    scores = { 'Cites Sources': 0.35, Helpfulness: 0.85 };
    await page.getByRole('textbox', { name: 'Context 1' }).fill('[1] Passwords are reset under Settings > Security > Reset password.');
    await page.getByRole('textbox', { name: 'Tags', exact: true }).fill('smoke, web');
    await page.getByRole('button', { name: 'Run judge' }).click();
    const results = page.locator('.result');
    await results.getByRole('heading', { name: 'Result' }).waitFor();
    assert.equal(await results.locator('.eval-result').count(), 2);
    await results.getByRole('img', { name: 'Cites Sources: score 0.35 of 1' }).waitFor();
    await results.getByRole('img', { name: 'Helpfulness: score 0.85 of 1' }).waitFor();
    await results.getByRole('img', { name: 'Overall: score 0.60 of 1' }).waitFor();
    await results.getByText('The fake judge scored this 0.35 for Cites Sources.').waitFor();
    assert.equal(await page.locator('.try-it .field-error, .try-it [aria-invalid], .try-it .error').count(), 0, 'the old error is cleared');

    // A second run gives the chart two points per evaluator.
    scores = { 'Cites Sources': 0.75, Helpfulness: 0.95 };
    await page.getByRole('textbox', { name: 'Tags', exact: true }).fill('second');
    await page.getByRole('button', { name: 'Run judge' }).click();
    await results.getByRole('img', { name: 'Overall: score 0.85 of 1' }).waitFor();
    const chart = page.locator('svg.chart');
    await chart.locator('polyline').nth(1).waitFor();
    assert.equal(await chart.locator('g.series').count(), 2);
    assert.equal(await chart.locator('.marker').count(), 4);
    await page.locator('.legend').getByText('Cites Sources').waitFor();
    // Each point of the chart links to its run.
    assert.match((await chart.locator('a').first().getAttribute('href')) ?? '', /^\/app\/logs\/log_/);
    await b.screenshot('10-judge-tried');
  });

  step('filters the execution logs by judge, tags and score, pages, and opens a run', async () => {
    const { page } = b;
    await nav('Execution logs').click();
    await heading('Execution logs').waitFor();
    const rows = page.getByRole('table', { name: 'Execution logs' }).locator('tbody tr');
    await rows.nth(1).waitFor();
    assert.equal(await rows.count(), 2);

    await page.getByLabel('Judge').selectOption({ label: 'Support answers' });
    await page.getByRole('textbox', { name: 'Tags', exact: true }).fill('smoke');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/tags=smoke/);
    await page.locator('svg.chart').waitFor(); // one judge chosen: its chart is drawn
    await page.waitForFunction(() => document.querySelectorAll('table[aria-label="Execution logs"] tbody tr').length === 1);
    await b.screenshot('11-logs-filtered');

    await page.getByRole('textbox', { name: 'Tags', exact: true }).fill('');
    await page.getByLabel('Min score').fill('0.7');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/min_score=0.7/);
    await page.waitForFunction(() => document.querySelectorAll('table[aria-label="Execution logs"] tbody tr').length === 1);
    await rows.first().getByText('second').waitFor();

    // A filter the server refuses: its detail appears beside the Max score field.
    b.expectFailedRequest('/v1/execution-logs/', 400);
    await page.getByLabel('Min score').fill('');
    await page.getByLabel('Max score').fill('7');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.locator('[data-field="max_score"] .field-error').waitFor();
    await page.getByRole('alert').first().waitFor();

    // The cost filters REST has: kept in the address, and a range the server refuses is shown beside the field.
    await page.getByLabel('Max score').fill('');
    await page.getByLabel('Min cost (USD)').fill('1000');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/min_cost=1000/);
    await page.getByText('No run matches these filters.').waitFor();
    assert.equal(await page.getByLabel('Min cost (USD)').inputValue(), '1000');
    b.expectFailedRequest('/v1/execution-logs/', 400);
    await page.getByLabel('Min cost (USD)').fill('2');
    await page.getByLabel('Max cost (USD)').fill('1');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.locator('[data-field="min_cost"] .field-error', { hasText: 'greater than max_cost' }).waitFor();

    // Pages of one run each: the next-page cursor leads to the older run, and back.
    await page.goto(app('/app/logs?limit=1'));
    await heading('Execution logs').waitFor();
    await rows.first().getByText('second').waitFor();
    assert.equal(await rows.count(), 1);
    await page.getByRole('link', { name: 'Next page →' }).click();
    await page.waitForURL(/cursor=/);
    await rows.first().getByText('smoke').waitFor();
    assert.equal(await rows.count(), 1);
    await page.getByRole('link', { name: '← First page' }).click();
    await rows.first().getByText('second').waitFor();
    const first = await rows.first().getByRole('link').getAttribute('href');
    await rows.first().getByRole('link').click();
    await heading('Run of Support answers').waitFor();
    assert.equal(new URL(page.url()).pathname, first);
    const results = page.getByRole('table', { name: 'Evaluator results' });
    await results.getByText('The fake judge scored this 0.75 for Cites Sources.').waitFor();
    await results.getByText('420 / 60').first().waitFor(); // tokens in / out
    assert.ok((await results.locator('tbody tr').count()) === 2);
    await page.getByText('[1] Passwords are reset').waitFor();
    // At 1280 px the results table fits: nothing scrolls sideways and the Latency column is whole.
    const fit = await page.evaluate(() => {
      const wrap = document.querySelector('.table-wrap:has(table[aria-label="Evaluator results"])')!;
      const latency = [...wrap.querySelectorAll('th')].find((th) => th.textContent === 'Latency')!;
      return { overflow: wrap.scrollWidth - wrap.clientWidth, latencyRight: latency.getBoundingClientRect().right, wrapRight: wrap.getBoundingClientRect().right };
    });
    assert.ok(fit.overflow <= 0, `the results table overflows by ${fit.overflow}px`);
    assert.ok(fit.latencyRight <= fit.wrapRight, `Latency is cut: ${JSON.stringify(fit)}`);
    await b.screenshot('12-log');
    pageUrls.log = page.url();
  });

  step('charts a burst of runs after a quiet spell evenly, and keeps equal scores of two evaluators visible', async () => {
    const { page } = b;
    const judgePath = new URL(pageUrls.judge).pathname;
    const judgeId = decodeURIComponent(judgePath.split('/').pop()!);
    // Three runs within a second in which both evaluators give the same score...
    scores = { 'Cites Sources': 0.6, Helpfulness: 0.6 };
    for (let i = 0; i < 3; i++) {
      const res = await server.request('POST', `/v1/judges/${judgeId}/execute/`, {
        key: demoKey,
        body: { request: 'Where is the help article?', response: `Burst reply ${i} [1].`, contexts: ['[1] A help article.'] },
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
    }
    // ...after a run three days earlier (written to the store with that date).
    const logs = await server.request('GET', `/v1/execution-logs/?judge_id=${judgeId}&limit=1`, { key: demoKey });
    const template = await server.store.getExecutionLog(logs.body.results[0].id);
    const old = new Date(Date.now() - 3 * 86_400_000).toISOString();
    await server.store.appendExecutionLog({
      ...template!,
      id: `log_${'0'.repeat(12)}7000${'8'.repeat(16)}`,
      created_at: old,
      score: 0.2,
      evaluator_results: template!.evaluator_results.map((r) => ({ ...r, score: 0.2 })),
    });

    await page.goto(app(judgePath));
    const chart = page.locator('svg.chart');
    await chart.waitFor();
    const series = await chart.locator('g.series').evaluateAll((groups) =>
      groups.map((g) => ({
        shape: g.getAttribute('data-shape'),
        points: [...g.querySelectorAll('.marker')].map((m) => {
          const box = (m as SVGGraphicsElement).getBBox();
          return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
        }),
      })),
    );
    assert.equal(series.length, 2);
    const runs = series[0].points.length;
    assert.equal(runs, 6, 'six runs charted');
    // Evenly spaced slots: the burst is not squeezed against one edge.
    const gaps = series[0].points.slice(1).map((p, i) => p.x - series[0].points[i].x);
    for (const gap of gaps) assert.ok(Math.abs(gap - gaps[0]) < 1 && gap > 40, `even spacing: ${gaps.map((g) => g.toFixed(1)).join(', ')}`);
    // Equal scores: same height, but side by side with different marker shapes.
    assert.notEqual(series[0].shape, series[1].shape);
    for (let run = runs - 3; run < runs; run++) {
      const [a, c] = [series[0].points[run], series[1].points[run]];
      assert.ok(Math.abs(a.y - c.y) < 0.5, 'equal scores at equal height');
      assert.ok(Math.abs(a.x - c.x) >= 6, `equal scores do not hide each other (${a.x} vs ${c.x})`);
    }
    await page.locator('.chart-figure').screenshot({ path: path.join(ARTIFACTS, '12b-chart-burst.png') });
  });

  step('opens the judge list on your own judges; public ones of other organizations on request', async () => {
    const { page } = b;
    // A stranger (another demo organization: everything it makes is public).
    const stranger = (await server.demoUser()).api_key;
    const made = await server.request('POST', '/v1/judges/', { key: stranger, body: { name: "A stranger's judge", intent: 'Checks replies.', evaluator_ids: ['Helpfulness'] } });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    await page.goto(app('/app/judges'));
    const rows = page.getByRole('table', { name: 'Judges' }).locator('tbody tr');
    await rows.first().getByText('Support answers').waitFor();
    assert.equal(await page.getByText("A stranger's judge").count(), 0, 'public judges of others are not shown by default');
    assert.equal(await page.getByRole('checkbox', { name: 'Include public judges of other organizations' }).isChecked(), false);
    await page.getByRole('checkbox', { name: 'Include public judges of other organizations' }).check();
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/include_public=true/);
    await page.getByRole('link', { name: "A stranger's judge" }).waitFor();
    await b.screenshot('12c-judges-with-public');
  });

  step('walks through judge generation: a stage choice, then the missing-context questions, then the judge', async () => {
    const { page } = b;
    fake.enqueueFor('identify_stages', stagesAnswer('retrieval', 'answer writing'));
    fake.enqueueFor('assess_context', contextAnswer([['brand_voice', 'How should replies sound to customers?']], ['preset_helpfulness'], 'Reply quality'));
    fake.enqueueFor('design_judge', designAnswer({ name: 'Reply quality', presets: ['preset_helpfulness', 'preset_politeness'], evaluators: [newEvaluator('Brand Voice')] }));

    await page.goto(app('/app/judges'));
    await page.getByRole('link', { name: 'Generate a judge' }).click();
    await heading('Generate a judge').waitFor();
    await page
      .getByRole('textbox', { name: 'Describe what to evaluate' })
      .fill('A support assistant for Acme: it retrieves help articles and writes replies to customers. Replies must be accurate, polite and in our brand voice.');
    await b.screenshot('13-generate');
    await page.getByRole('button', { name: 'Generate judge' }).click();

    await page.getByRole('heading', { name: 'Which stage should this judge evaluate?' }).waitFor();
    await page.getByRole('radio', { name: 'answer writing' }).check();
    await b.screenshot('14-generate-stage');
    await page.getByRole('button', { name: 'Generate for this stage' }).click();

    await page.getByRole('heading', { name: 'A few questions about your application' }).waitFor();
    await page.getByLabel('How should replies sound to customers?').fill('Warm, brief, no jargon.');
    await b.screenshot('15-generate-questions');
    await page.getByRole('button', { name: 'Continue' }).click();

    await heading(/^Reply quality/).waitFor();
    await page.getByText('Judge generated with 3 evaluators').waitFor();
    await page.getByRole('heading', { name: 'Evaluators (3)' }).waitFor();
    const stageRequest = fake.requests.find((r) => r.toolName === 'assess_context');
    assert.ok(stageRequest?.prompt.includes('answer writing'), 'the chosen stage reached generation');
    const designRequest = fake.requests.find((r) => r.toolName === 'design_judge');
    assert.ok(designRequest?.prompt.includes('Warm, brief, no jargon.'), 'the answer reached generation');
    await b.screenshot('16-generated-judge');
  });

  step('a draft judge is marked as such, cannot be tried, and is finished from its own page', async () => {
    const { page } = b;
    fake.resetStats();
    fake.enqueueFor('identify_stages', stagesAnswer('reply writing'));
    fake.enqueueFor('assess_context', contextAnswer([['refund_policy', 'What is your refund policy?']], ['preset_helpfulness'], 'Refund replies'));
    await page.goto(app('/app/judges/generate'));
    await page.getByRole('textbox', { name: 'Describe what to evaluate' }).fill('Acme support bot replies to customers asking for refunds. Evaluate the replies it writes.');
    await page.getByRole('button', { name: 'Generate judge' }).click();
    await page.getByRole('heading', { name: 'A few questions about your application' }).waitFor();

    // Left unanswered: the list and the judge page show a draft, with no "Try it".
    await page.goto(app('/app/judges'));
    const row = page.getByRole('row').filter({ hasText: 'Refund replies (draft)' });
    await row.locator('.badge', { hasText: 'draft' }).waitFor();
    await row.getByRole('link').click();
    await heading(/^Refund replies \(draft\)$/).waitFor();
    const draftPath = new URL(page.url()).pathname;
    await page.locator('.meta .badge', { hasText: 'draft' }).waitFor();
    await page.getByRole('heading', { name: 'Finish this draft' }).waitFor();
    assert.equal(await page.getByRole('heading', { name: 'Try it' }).count(), 0);
    assert.equal(await page.locator('.intent-text').textContent(), 'Acme support bot replies to customers asking for refunds. Evaluate the replies it writes.');
    await b.screenshot('17-draft-judge');

    fake.enqueueFor('design_judge', designAnswer({ name: 'Refund replies', presets: ['preset_helpfulness'], evaluators: [newEvaluator('Refund Policy')] }));
    await page.getByLabel('What is your refund policy?').fill('30 days, with the receipt.');
    await page.getByRole('button', { name: 'Complete the judge' }).click();
    await heading(/^Refund replies$/).waitFor();
    await page.getByText('it is ready to run').waitFor();
    await page.getByRole('heading', { name: 'Try it' }).waitFor();
    assert.equal(new URL(page.url()).pathname, draftPath, 'the same judge, completed');
    assert.equal(await page.locator('.meta .badge', { hasText: 'draft' }).count(), 0);
    await page.getByText('How this judge was generated').click();
    await page.getByText('30 days, with the receipt.').waitFor();
    assert.ok(fake.requests.find((r) => r.toolName === 'design_judge')?.prompt.includes('30 days, with the receipt.'));
    await b.screenshot('18-draft-finished');
  });

  step('creates a dataset, imports a JSONL file into it (a bad line listed), shows its items and exports them', async () => {
    const { page } = b;
    await nav('Datasets').click();
    await heading('Datasets').waitFor();
    await page.getByText('You have no datasets yet').waitFor();
    await page.getByLabel('Name').fill('Support regressions');
    await page.getByLabel('Description').fill('Replies that went wrong');
    await page.getByRole('button', { name: 'Create dataset' }).click();
    await heading('Support regressions').waitFor();
    await page.getByText('No items yet').waitFor();
    const lines = [
      JSON.stringify({ request: 'How do I reset my password?', response: 'Use the reset link.', tags: ['password'] }),
      'this line is not JSON',
      JSON.stringify({ request: 'Refund?', response: 'Refunds take 5 days.', expected_scores: { Helpfulness: 0.9 } }),
    ];
    await page.getByLabel('Import a file').setInputFiles({ name: 'items.jsonl', mimeType: 'application/x-ndjson', buffer: Buffer.from(lines.join('\n')) });
    await page.getByRole('button', { name: 'Import', exact: true }).click();
    await page.getByText('Imported 2 items from items.jsonl; skipped 1 lines.').waitFor();
    await page.getByText(/^line 2: not valid JSON/).waitFor();
    const items = page.getByRole('table', { name: 'Items' });
    await items.getByText('Use the reset link.').waitFor();
    await items.getByText('Helpfulness: 0.9').waitFor();
    assert.equal(await items.locator('tbody tr').count(), 2);
    const href = await page.getByRole('link', { name: 'Export JSONL' }).getAttribute('href');
    const exported = await page.evaluate(async (url) => (await fetch(url!, { credentials: 'same-origin' })).text(), href);
    assert.deepEqual(
      exported
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).response),
      ['Use the reset link.', 'Refunds take 5 days.'],
    );
    // An import with nothing skipped shows its notice alone (it once appended the text "null").
    await page.getByLabel('Import a file').setInputFiles({ name: 'clean.jsonl', mimeType: 'application/x-ndjson', buffer: Buffer.from(`${lines[0]}\n`) });
    await page.getByRole('button', { name: 'Import', exact: true }).click();
    const clean = page.getByText('Imported 1 items from clean.jsonl; skipped 0 lines.');
    await clean.waitFor();
    assert.equal(await clean.locator('xpath=..').textContent(), 'Imported 1 items from clean.jsonl; skipped 0 lines.');
    await b.screenshot('20-dataset');
    await nav('Datasets').click();
    await page.getByRole('table', { name: 'Datasets' }).getByRole('link', { name: 'Support regressions' }).waitFor();
  });

  step('is readable at phone width: no page scrolls sideways', async () => {
    const { page } = b;
    await page.setViewportSize(PHONE);
    const visits: Array<[string, string]> = [
      ['judges', '/app/judges'],
      ['judge', new URL(pageUrls.judge).pathname],
      ['evaluators', '/app/evaluators'],
      ['evaluator', new URL(pageUrls.evaluator).pathname],
      ['keys', '/app/keys'],
      ['logs', '/app/logs'],
      ['log', new URL(pageUrls.log).pathname],
      ['generate', '/app/judges/generate'],
    ];
    for (const [name, path] of visits) {
      await page.goto(app(path));
      await page.locator('main h1').waitFor();
      await page.locator('main .loading').waitFor({ state: 'detached' });
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 0, `${path} overflows the phone width by ${overflow}px`);
      await b.screenshot(`phone-${name}`);
    }
    await page.setViewportSize(LAPTOP);
  });

  step('is usable with the keyboard: skip link, then Tab reaches the navigation and the forms', async () => {
    const { page } = b;
    await page.goto(app('/app/keys'));
    await heading('API keys').waitFor();
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Skip to content');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.activeElement?.id === 'main');
    // From the main area, Tab goes to the first field of the create form.
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.labels?.[0]?.textContent), 'Name *');
    await page.keyboard.type('Keyboard key');
    await page.keyboard.press('Enter');
    await page.getByLabel('Secret API key').waitFor();
    // Every form control on every page visited has a label.
    for (const path of ['/app/keys', '/app/logs', new URL(pageUrls.judge).pathname, '/app/evaluators/new', '/app/judges/new']) {
      await page.goto(app(path));
      await page.locator('main h1').waitFor();
      await page.locator('main .loading').waitFor({ state: 'detached' });
      const unlabeled = await page.evaluate(() =>
        [...document.querySelectorAll('main input, main select, main textarea')]
          .filter((el) => !(el as HTMLInputElement).labels?.length && !el.getAttribute('aria-label'))
          .map((el) => el.outerHTML.slice(0, 80)),
      );
      assert.deepEqual(unlabeled, [], `unlabelled controls on ${path}`);
    }
  });

  step('signs out: the cookie is gone and pages lead back to sign-in', async () => {
    const { page } = b;
    await page.goto(app('/app/judges'));
    await page.getByRole('button', { name: 'Sign out' }).click();
    await heading('Sign in to Tribunal').waitFor();
    await page.getByText('You are signed out.').waitFor();
    const cookies = await b.context.cookies(server.url);
    assert.equal(
      cookies.find((c) => c.name === 'tribunal_session'),
      undefined,
    );
    await page.goto(app('/app/keys'));
    await heading('Sign in to Tribunal').waitFor();
    assert.equal(new URL(page.url()).searchParams.get('next'), '/app/keys');
    await page.setViewportSize(PHONE);
    await b.screenshot('phone-sign-in');
    await page.setViewportSize(LAPTOP);
  });
});
