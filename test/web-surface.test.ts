// "Generate test data" on a judge's page in Chromium (SPEC section 16): the button starts generation,
// the section shows the samples when they are ready, and "Save as dataset" links to the new dataset.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { chromiumAvailable, launchBrowser, type BrowserRig } from './helpers/browser.ts';
import { startServerWithFakeModel } from './helpers/execute.ts';
import { toolAnswer, type FakeAnthropic } from './helpers/fake-anthropic.ts';
import type { TestServer } from './helpers/server.ts';

const skip = chromiumAvailable() || process.env.CI ? false : 'Chromium is not installed at /usr/bin/chromium (apt-get install -y chromium)';

describe('test data on the judge page in Chromium', { skip }, () => {
  let server: TestServer;
  let fake: FakeAnthropic;
  let b: BrowserRig;
  before(async () => {
    ({ server, fake } = await startServerWithFakeModel());
    fake.respondWith((req) => {
      if (req.toolName !== 'write_synthetic_data') return toolAnswer({ justification: 'fine', score: 0.9 });
      const names = [...req.prompt.matchAll(/<evaluator name="([^"]+)">/g)].map((m) => m[1]);
      const count = Number(/exactly (\d+) pairs/.exec(req.prompt)?.[1]);
      const pairs = Array.from({ length: count }, (_, i) => ({
        request: `Where is parcel ${i}?`,
        high_response: `Parcel ${i} arrives Tuesday.`,
        low_response: 'Soon.',
        fails_evaluator: names[i % names.length],
        failure: 'no date given',
      }));
      return toolAnswer({ name: 'Parcel questions', description: 'Delivery questions.', pairs });
    });
    b = await launchBrowser();
  });
  after(async () => {
    await b?.close();
    await server?.services.synthetic?.stop();
    await server?.close();
    await fake?.close();
  });

  it('generates, shows and saves test data', async () => {
    const key = (await server.demoUser()).api_key;
    const ev = await server.request('POST', '/v1/evaluators/', {
      key,
      body: { name: 'Gives a date', intent: 'The reply gives a delivery date.', rubric: 'HIGH: a date. LOW: none.' },
    });
    const judge = await server.request('POST', '/v1/judges/', { key, body: { name: 'Delivery replies', intent: 'Replies about deliveries', evaluator_ids: [ev.body.id] } });
    assert.equal(judge.status, 201);

    const { page } = b;
    await page.goto(`${server.url}/app/sign-in`);
    await page.getByRole('textbox', { name: 'API key' }).fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Judges' }).waitFor();
    await page.goto(`${server.url}/app/judges/${judge.body.id}`);
    await page.getByRole('heading', { level: 2, name: 'Test data' }).waitFor();
    await page.getByText('No test data yet.').waitFor();
    await page.getByRole('button', { name: 'Generate test data' }).click();
    const samples = page.getByRole('list', { name: 'Test data samples' });
    await samples.waitFor();
    assert.equal(await samples.locator('li').count(), 6);
    assert.match((await samples.locator('li').nth(1).innerText()).replace(/\s+/g, ' '), /low Where is parcel 0\? Soon\. Fails Gives a date: no date given/);
    await page.getByRole('button', { name: 'Save as dataset' }).click();
    const saved = page.getByRole('link', { name: /Delivery replies synthetic/ });
    await saved.waitFor();
    await b.screenshot('judge-test-data');
    await saved.click();
    await page.getByRole('heading', { level: 1, name: /Delivery replies synthetic/ }).waitFor();
    assert.deepEqual(b.errors.splice(0), []);
  });
});
