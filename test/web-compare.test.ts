// The judge page's "compare two responses" try-it mode in Chromium, on the fake judge model: each
// evaluator's preference and whether its two orders agreed, then the comparison log page.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { chromiumAvailable, launchBrowser, type BrowserRig } from './helpers/browser.ts';
import { startServerWithFakeModel } from './helpers/execute.ts';
import { toolAnswer, type FakeAnthropic, type FakeRequest } from './helpers/fake-anthropic.ts';
import type { TestServer } from './helpers/server.ts';

const skip = chromiumAvailable() || process.env.CI ? false : 'Chromium is not installed at /usr/bin/chromium (apt-get install -y chromium)';
const GOOD = 'Open Settings, then Security, and choose Reset password.';
const BAD = 'Have a nice day.';
const shownFirst = (req: FakeRequest) => /<response_A_[0-9a-f]{24}>\n([\s\S]*?)\n<\/response_A_/.exec(req.prompt)?.[1];

describe('compare two responses in Chromium', { skip }, () => {
  let server: TestServer;
  let fake: FakeAnthropic;
  let b: BrowserRig;
  before(async () => {
    ({ fake, server } = await startServerWithFakeModel());
    // Helpfulness judges fairly; Clarity always prefers the response shown first (position bias).
    fake.respondWith((req) =>
      req.system.includes('Name: Clarity\n')
        ? toolAnswer({ justification: 'The first response reads more clearly.', preference: 'A' })
        : toolAnswer({ justification: 'Only one response says where to reset the password.', preference: shownFirst(req) === GOOD ? 'A' : 'B' }),
    );
    b = await launchBrowser();
  });
  after(async () => {
    await b?.close();
    await server?.close();
    await fake?.close();
  });

  it("shows each evaluator's preference and consistency, then the comparison log", async () => {
    const { page } = b;
    await page.goto(`${server.url}/app/sign-in`);
    await page.getByRole('button', { name: 'Get a demo key' }).click();
    await page.getByRole('heading', { level: 1, name: 'Judges' }).waitFor();
    // The judge is made over the page's own session, so it belongs to the signed-in organization.
    const made = await page.evaluate(async () => {
      // The app's own API helper sends the session's CSRF token.
      const helper = '/app/static/lib/api.js';
      const { api } = await import(helper);
      return api('POST', '/v1/judges/', { body: { name: 'Compare judge', intent: 'Password help.', evaluator_ids: ['Helpfulness', 'Clarity'] } });
    });
    await page.goto(`${server.url}/app/judges/${made.id}`);
    await page.getByRole('heading', { name: 'Try it' }).waitFor();
    // issue 26 item 15: in score mode the Contexts come before the optional Conversation block.
    const legends = await page.locator('form.try-it:not(.compare-form) legend').allTextContents();
    assert.ok(legends.indexOf('Contexts') >= 0 && legends.indexOf('Contexts') < legends.findIndex((l) => l.startsWith('Conversation')), legends.join(' | '));
    await page.getByRole('radio', { name: 'Compare two responses' }).check();
    await page.getByRole('textbox', { name: 'Request', exact: true }).last().fill('How do I reset my password?');
    await page.getByRole('textbox', { name: 'Response A' }).fill(BAD);
    await page.getByRole('textbox', { name: 'Response B' }).fill(GOOD);
    // issue 26 item 15: compare mode enters contexts as score mode does, one box per context.
    const compareForm = page.locator('form.compare-form');
    await compareForm.getByRole('button', { name: 'Add a context' }).click();
    await compareForm.getByRole('textbox', { name: 'Context 1' }).fill('First snippet.\n\nStill the first snippet.');
    await compareForm.getByRole('button', { name: 'Add a context' }).click();
    await compareForm.getByRole('textbox', { name: 'Context 2' }).fill('Second snippet.');
    const compareCall = page.waitForRequest((r) => r.url().includes('/compare/') && r.method() === 'POST');
    await page.getByRole('button', { name: 'Compare responses' }).click();
    assert.deepEqual((await compareCall).postDataJSON().contexts, ['First snippet.\n\nStill the first snippet.', 'Second snippet.']);
    const result = page.locator('.result');
    await result.getByRole('heading', { name: 'Response B is preferred' }).waitFor();
    const helpfulness = result.locator('.eval-result', { hasText: 'Helpfulness' });
    await helpfulness.getByText('prefers B').waitFor();
    await helpfulness.getByText('consistent', { exact: true }).waitFor();
    const clarity = result.locator('.eval-result', { hasText: 'Clarity' });
    await clarity.getByText('tie', { exact: true }).waitFor();
    await clarity.getByText('inconsistent: the orders disagreed').waitFor();
    await result.getByText('A 0 · B 1 · ties 1', { exact: false }).waitFor();
    assert.equal(fake.requests.filter((r) => r.toolName === 'submit_comparison').length, 4);
    await b.screenshot('compare-result');

    await result.getByRole('link', { name: 'Open the comparison log' }).click();
    await page.getByRole('heading', { level: 1, name: 'Comparison with Compare judge' }).waitFor();
    await page.getByText('response B').first().waitFor();
    const table = page.getByRole('table', { name: 'Evaluator preferences' });
    await table.locator('tr', { hasText: 'Clarity' }).getByText('inconsistent: the orders disagreed').waitFor();
    await table.locator('tr', { hasText: 'Helpfulness' }).getByText('prefers B').waitFor();
    await page.getByRole('heading', { name: 'Response B' }).waitFor();
    assert.ok((await page.locator('pre.text').allTextContents()).includes(GOOD));

    // The logs list shows the comparison's preference in place of a score.
    await page.goto(`${server.url}/app/logs`);
    await page.locator('tr', { hasText: 'Compare judge' }).getByText('prefers B').waitFor();
    assert.deepEqual(b.errors.splice(0), []);
  });
});
