// The log page of a jury run in Chromium: a table of the jurors under the scores, each juror's score
// and justification, the failed juror's error, and the spread. Skipped where Chromium is missing.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { chromiumAvailable, launchBrowser, type BrowserRig } from './helpers/browser.ts';
import { startFakeOpenAI, type FakeOpenAI } from './helpers/fake-openai.ts';
import { evaluatorBody } from './helpers/execute.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

const skip = chromiumAvailable() || process.env.CI ? false : 'Chromium is not installed at /usr/bin/chromium (apt-get install -y chromium)';

describe('a jury run on the log page in Chromium', { skip }, () => {
  let server: TestServer;
  let fakes: FakeOpenAI[];
  let b: BrowserRig;
  before(async () => {
    fakes = await Promise.all([startFakeOpenAI(), startFakeOpenAI(), startFakeOpenAI()]);
    server = await startTestServer({ TRIBUNAL_SECRET_KEY: randomBytes(32).toString('base64'), TRIBUNAL_RATE_LIMIT: '100000', TRIBUNAL_MODEL_RETRIES: '0' });
    b = await launchBrowser();
  });
  after(async () => {
    await b?.close();
    await server?.close();
    await Promise.all((fakes ?? []).map((f) => f.close()));
  });

  it('shows every juror, the failed one with its error, and the spread', async () => {
    const key = (await server.demoUser()).api_key;
    const names = ['strict-judge', 'kind-judge', 'broken-judge'];
    for (const [i, name] of names.entries()) {
      const res = await server.request('POST', '/v1/models/', { key, body: { name, provider: 'openai', base_url: fakes[i].url, model: `m-${i}` } });
      assert.equal(res.status, 201, JSON.stringify(res.body));
    }
    fakes[0].answer = { justification: 'Strict: misses the date.', score: 0.2 };
    fakes[1].answer = { justification: 'Kind: close enough.', score: 0.8 };
    fakes[2].enqueue({ status: 400, message: 'broken model' });
    const ev = await server.request('POST', '/v1/evaluators/', { key, body: evaluatorBody({ name: 'Jury check', models: names }) });
    const run = await server.request('POST', `/v1/evaluators/${ev.body.id}/execute/`, { key, body: { request: 'When?', response: 'Soon.' } });
    assert.equal(run.status, 200, JSON.stringify(run.body));

    const { page } = b;
    await page.goto(`${server.url}/app/sign-in`);
    await page.getByRole('textbox', { name: 'API key' }).fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Judges' }).waitFor();
    await page.goto(`${server.url}/app/logs/${run.body.execution_log_id}`);
    const table = page.getByRole('table', { name: 'Jurors of Jury check' });
    await table.waitFor();
    const rows = table.locator('tbody tr');
    assert.equal(await rows.count(), 3);
    assert.match((await rows.nth(0).innerText()).replace(/\s+/g, ' '), /strict-judge .*Strict: misses the date\./);
    assert.match((await rows.nth(1).innerText()).replace(/\s+/g, ' '), /kind-judge .*Kind: close enough\./);
    assert.match((await rows.nth(2).innerText()).replace(/\s+/g, ' '), /broken-judge failed .*broken model/);
    // spread 0.8 - 0.2
    await page.getByRole('heading', { level: 3, name: /spread 0\.60 \(the jurors disagree\)/ }).waitFor();
    await b.screenshot('log-jurors');
    assert.deepEqual(b.errors.splice(0), []);
  });
});
