// Batch runs in the web app, in real headless Chromium: Run batch from a dataset's page, the batch
// page's live progress (the status endpoint polled while the fake model is slow), the
// per-evaluator summary, each row's link to its log, the runs list, and an experiment side by side.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { chromiumAvailable, launchBrowser, type BrowserRig } from './helpers/browser.ts';
import { startServerWithFakeModel } from './helpers/execute.ts';
import { toolAnswer, type FakeAnthropic } from './helpers/fake-anthropic.ts';
import type { TestServer } from './helpers/server.ts';

const skip = chromiumAvailable() || process.env.CI ? false : 'Chromium is not installed at /usr/bin/chromium (apt-get install -y chromium)';

describe('batch runs in the web app', { skip }, () => {
  let fake: FakeAnthropic;
  let server: TestServer;
  let b: BrowserRig;
  let key: string;
  let datasetId: string;
  const app = (path: string) => `${server.url}${path}`;

  before(async () => {
    ({ fake, server } = await startServerWithFakeModel({ TRIBUNAL_RATE_LIMIT: '100000', TRIBUNAL_MODEL_CONCURRENCY: '2' }));
    key = (await server.demoUser()).api_key;
    const judge = await server.request('POST', '/v1/judges/', {
      key,
      body: { name: 'Web batch judge', intent: 'Support answers.', evaluator_ids: ['Answer Relevance', 'Clarity'] },
    });
    assert.equal(judge.status, 201);
    datasetId = (await server.request('POST', '/v1/datasets/', { key, body: { name: 'Web batch set' } })).body.id;
    const items = Array.from({ length: 6 }, (_, i) => ({ request: `question ${i}`, response: `answer ${i}` }));
    assert.equal((await server.request('POST', `/v1/datasets/${datasetId}/items/`, { key, body: { items } })).status, 201);
    b = await launchBrowser();
  });
  after(async () => {
    await b?.close();
    await server?.close();
    await fake?.close();
  });

  it('runs a judge over a dataset, follows it live, links each row to its log, and compares two runs', async () => {
    const { page } = b;
    await page.goto(app('/app/sign-in'));
    await page.getByRole('textbox', { name: 'API key', exact: true }).fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Judges' }).waitFor();

    // A first run at 0.8, slow enough to watch: 6 items x 2 evaluators, 2 model calls at a time.
    fake.respondWith(() => toolAnswer({ justification: 'The fake judge read it.', score: 0.8 }));
    fake.setLatency(700);
    await page.goto(app(`/app/datasets/${datasetId}`));
    await page.getByRole('heading', { level: 1, name: 'Web batch set' }).waitFor();
    await page.getByRole('button', { name: 'Run batch' }).click();
    await page.locator('[data-field="judge_id"] .field-error').waitFor(); // no judge chosen yet
    await page.getByRole('combobox', { name: 'Judge' }).selectOption({ label: 'Web batch judge' });
    await page.getByRole('textbox', { name: 'Tags' }).fill('web, first');
    await page.getByRole('button', { name: 'Run batch' }).click();
    await page.getByRole('heading', { level: 1, name: 'Batch run of Web batch judge' }).waitFor();
    await page.getByText('Batch run started over 6 items.').waitFor();
    // Live: the page shows a run still going, then the same page (no reload) shows it completed.
    await page.getByText(/updating live/).waitFor();
    const during = Number(await page.getByRole('progressbar', { name: 'Rows finished' }).getAttribute('value'));
    assert.ok(during < 6, `seen while running (${during} of 6)`);
    // issue 26: while it runs, rows finished come with their summary and their rows (never "No row
    // scored yet." beside "2 of 6 rows finished"), and the run can be cancelled.
    await page.waitForFunction(() => {
      const status = document.querySelector('[data-status]')?.getAttribute('data-status');
      const finished = Number(document.querySelector('progress')?.getAttribute('value'));
      return (
        status === 'running' &&
        finished >= 1 &&
        !!document.querySelector('table[aria-label="Per-evaluator summary"] tbody tr') &&
        !!document.querySelector('table[aria-label="Rows"] tbody tr')
      );
    });
    assert.equal(await page.getByText('No row scored yet.').count(), 0);
    assert.equal(await page.getByText('No rows yet.').count(), 0);
    assert.ok(await page.getByRole('button', { name: 'Cancel run' }).isVisible());
    await b.screenshot('batch-running');
    await page.locator('[data-status="completed"]').waitFor({ timeout: 30_000 });
    await page.getByText('6 of 6 rows finished (100%).').waitFor();
    // A finished run cannot be cancelled: the button is gone (not merely ignored).
    assert.equal(await page.getByRole('button', { name: 'Cancel run' }).count(), 0);
    assert.equal(await page.locator('button.danger', { hasText: 'Cancel run' }).isVisible(), false);
    fake.setLatency(0);
    const summary = page.getByRole('table', { name: 'Per-evaluator summary' });
    await summary
      .getByRole('row', { name: /Answer Relevance/ })
      .getByRole('cell', { name: '6', exact: true })
      .first()
      .waitFor();
    await summary.getByRole('img', { name: 'Clarity mean: score 0.80 of 1' }).waitFor();
    const rows = page.getByRole('table', { name: 'Rows' });
    assert.equal(await rows.locator('tbody tr').count(), 6);
    await b.screenshot('batch-completed');
    const firstRunUrl = page.url();

    // Each row links to its execution log, which carries the tags.
    await rows.getByRole('link', { name: 'Log of row 1' }).click();
    await page.getByRole('heading', { level: 1, name: 'Run of Web batch judge' }).waitFor();
    await page.getByText('first', { exact: true }).waitFor();

    // A second run, all scores lower, started over the REST API; both are listed.
    fake.respondWith(() => toolAnswer({ justification: 'Worse.', score: 0.4 }));
    const judgeId = new URL((await page.getByRole('link', { name: 'Web batch judge' }).getAttribute('href'))!, server.url).pathname.split('/').pop()!;
    const second = await server.request('POST', `/v1/judges/${judgeId}/batch-execute/`, { key, body: { dataset_id: datasetId } });
    assert.equal(second.status, 202);
    await page.goto(app('/app/batches'));
    await page.getByRole('heading', { level: 1, name: 'Batch runs' }).waitFor();
    const list = page.getByRole('table', { name: 'Batch runs' });
    assert.equal(await list.locator('tbody tr').count(), 2);
    // Room h-cost: the org's spend today (the first run's cost at least) is shown above the list.
    await page.getByText(/^Spent today: \$[\d.]+ \(no daily budget\)/).waitFor();
    // Wait for the second run to end, then reload the list to get the compare form with both.
    for (let i = 0; i < 200; i++) {
      const r = await server.request('GET', `/v1/judges/batch-executions/${second.body.batch_execution_id}/`, { key });
      if (r.body.status === 'completed') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    await page.reload();
    await page.getByRole('button', { name: 'Compare runs' }).click();
    await page.getByRole('heading', { level: 1, name: 'Experiment: A against B' }).waitFor();
    // issue 26 item 6: the runs are shown by their judge's and dataset's names, their ids on hover.
    for (const label of ['A', 'B']) {
      const card = page.getByRole('region', { name: `Run ${label}` });
      assert.match((await card.getByRole('link', { name: 'Run of Web batch judge' }).getAttribute('title')) ?? '', /^bat_/);
      assert.equal(await card.getByRole('link', { name: 'judge Web batch judge' }).getAttribute('title'), judgeId);
      assert.equal(await card.getByRole('link', { name: 'dataset Web batch set' }).getAttribute('title'), datasetId);
      assert.doesNotMatch((await card.textContent()) ?? '', /(dst|bat|jdg)_/);
    }
    const table = page.getByRole('table', { name: 'Per-evaluator comparison' });
    const clarity = table.getByRole('row', { name: /Clarity/ });
    await clarity.getByText('-0.400').first().waitFor();
    await clarity.getByText('[-0.400, -0.400]').waitFor();
    await clarity.getByText('B is worse').waitFor();
    const moved = page.getByRole('table', { name: 'Items that moved most' });
    assert.equal(await moved.locator('tbody tr').count(), 6);
    await b.screenshot('batch-experiment');
    await moved.getByRole('link', { name: 'log B' }).first().click();
    await page.getByRole('heading', { level: 1, name: 'Run of Web batch judge' }).waitFor();
    await page.getByText('Worse.').first().waitFor();

    await page.goto(firstRunUrl);
    await page.locator('[data-status="completed"]').waitFor();
    assert.deepEqual(b.errors.splice(0), []);
  });
});
